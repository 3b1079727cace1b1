// MicrobenchmarkProfile: what one GPU type really achieves, as measured by small kernels
// (probe/), or derived from its GpuSpec with documented efficiency factors when no measurement
// exists. File format: docs/microbenchmark-profile.md (YAML; JSON is valid YAML and is
// accepted too). The predictor uses these figures instead of datasheet peaks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/hw/gpu_spec.h"

namespace hase {

struct MicrobenchmarkProfile {
  std::string gpu;     // catalog id the profile belongs to (resolved through GpuCatalog)
  std::string source;  // "measured: <tool, date, host>" or "derived from datasheet"
  bool measured = false;

  double dram_bandwidth_gbps = 0;  // achievable DRAM bandwidth (large copy, read+write), GB/s
  double l2_bandwidth_gbps = 0;    // achievable L2 bandwidth (working set ≪ L2), GB/s
  double fp32_tflops = 0;          // achievable FP32 FMA throughput, TFLOP/s
  double fp16_tflops = 0;          // achievable FP16 (half2) on CUDA cores, TFLOP/s; 0 = none
  double tensor_fp16_tflops = 0;   // achievable FP16 tensor-core GEMM (FP32 acc), TFLOP/s; 0 = none
  double tensor_tf32_tflops = 0;   // achievable TF32 tensor-core GEMM (FP32 in/out), TFLOP/s;
                                   // 0 = none (compute capability < 8.0)
  double launch_overhead_us = 0;   // launch + completion of an empty kernel, back-to-back, µs
  double h2d_gbps = 0;             // host→device copy, pinned memory, large transfer, GB/s
  double d2h_gbps = 0;             // device→host copy, pinned memory, large transfer, GB/s
};

// Efficiency factors used when a figure was not measured: achievable = factor × datasheet peak.
// Sources: STREAM-like copies reach ~80–90 % of DRAM peak on recent NVIDIA GPUs (Jia et al.,
// "Dissecting the NVIDIA Volta/Turing GPU architecture via microbenchmarking", 2018/2019:
// V100 ~ 790–850 of 900 GB/s; T4 ~ 220–250 of 320); cuBLAS SGEMM reaches ~85–90 % of FP32 peak
// on data-centre parts and tensor GEMMs ~70–80 % of dense tensor peak (NVIDIA cuBLAS
// performance pages); pinned PCIe copies reach ~80 % of link peak; an empty kernel launch
// costs ~5 µs (CUDA driver; ORT's CUDA EP adds its own dispatch, see docs/predictor.md).
// The values below are the constants DerivedProfile uses; docs/microbenchmark-profile.md
// repeats them.
struct ProfileEfficiency {
  static constexpr double kDram = 0.85;
  static constexpr double kL2OverDram = 3.0;  // L2 bandwidth ≈ 3 × DRAM peak (microbenchmarks)
  static constexpr double kFp32 = 0.85;
  static constexpr double kFp16 = 0.85;
  static constexpr double kTensor = 0.75;
  static constexpr double kPcie = 0.80;
  static constexpr double kLaunchOverheadUs = 5.0;
  // Board power per SM at which a GPU sustains its boost clock under dense math, W. Below it the
  // power limit lowers the clock: see SustainedClockFraction.
  static constexpr double kWattsPerSmAtBoost = 4.0;
  // Fraction of the listed FP32 peak that FP32 GEMM can issue on GA10x / AD10x (compute
  // capability 8.6, 8.7, 8.9). Their listed peak counts 128 FP32 lanes per SM: per SM partition
  // one 16-lane FP32 datapath plus one 16-lane datapath that runs FP32 *or* INT32 (NVIDIA Ampere
  // GA102 GPU Architecture whitepaper, "GA10x SM"; Ada whitepaper, same SM layout), fed by one
  // warp instruction per clock. A 32-thread FFMA then has to issue every clock with no slot left
  // for loads, address or loop instructions, so even NVIDIA's shader mix (36 INT32 per 100 FP32
  // instructions, Turing whitepaper) caps it at 1 / 1.36 = 0.735. The value 0.58 is fitted on the
  // one same-shape FP32 GEMM pair in ../shared: bencyq_hase performance_kernel_times.json,
  // torch.matmul 1024x1024x1024 fp32, RTX A6000 (GA102) 0.1238 ms vs A100-SXM4-40GB 0.1401 ms:
  // (0.1401 / 0.1238) x (19.5 x c_A100) / (38.7 x c_A6000) = 0.577, c = SustainedClockFraction
  // (0.975, 0.963), assuming both reach the same share of their issuable peak on that shape.
  static constexpr double kFp32DualIssue = 0.58;
};

// Fraction of the boost clock a GPU sustains under dense FP16/tensor math, limited by its board
// power:  clamp((tdp_w / (sms × kWattsPerSmAtBoost))^(1/3), base_clock_mhz / boost_clock_mhz, 1).
// The cube root: dynamic power ∝ f·V² with V roughly ∝ f in the DVFS range, so P ∝ f³.
// kWattsPerSmAtBoost = 4.0 W/SM is set from the T4 (70 W, 40 SMs = 1.75 W/SM) sustaining about
// 1.2 GHz of its 1.59 GHz boost under tensor load (0.76 = (1.75/4.0)^(1/3); DeepBench fp16_mixed
// GEMMs >= 2e10 FLOP, T4 vs V100-SXM2 share of dense tensor peak, same-shape median 0.769,
// docs/gpu-catalog.md "Clocks"). The lower bound is
// the datasheet base clock, which NVIDIA guarantees under any load within the power limit
// (NVIDIA GPU Boost technology page: "every application ... runs at a guaranteed, minimum Base
// Clock speed"); it applies only where the catalog lists base_clock_mhz. Effect: 1 for most
// 250–700 W parts; T4 0.76, L4 0.68, A10 0.80, L40 0.81, RTX PRO 6000 Max-Q 0.74, RTX 4090 0.96.
// 1 when tdp_w or sms is unknown (0).
double SustainedClockFraction(const GpuSpec& spec);

// Fraction of the boost clock a GPU sustains under dense FP32 CUDA-core math (SGEMM):
// fp32_sustained_clock_mhz / boost_clock_mhz where the catalog gives that fact (T4: measured
// FP32 GEMM in ../shared, docs/gpu-catalog.md "Clocks"), else SustainedClockFraction(spec).
double Fp32SustainedClockFraction(const GpuSpec& spec);

// Fraction of the listed FP32 peak FP32 GEMM can issue at a given clock: kFp32DualIssue on
// compute capability 8.6 / 8.7 / 8.9 (GA10x, GA10B, AD10x), 1 elsewhere (one FP32 datapath per
// partition, or FP32 and INT32 on separate pipes: Volta, Turing, GA100, Hopper). Blackwell
// (12.x) is left at 1: no FP32 GEMM timing in ../shared to check it against.
double Fp32IssueFraction(const GpuSpec& spec);

// A profile derived from the datasheet: every figure = ProfileEfficiency factor × spec peak;
// fp32_tflops = kFp32 × Fp32SustainedClockFraction × Fp32IssueFraction × fp32 peak; the other
// compute peaks (FP16, tensor FP16 and TF32) are scaled by SustainedClockFraction(spec).
MicrobenchmarkProfile DerivedProfile(const GpuSpec& spec);

// Parses one profile document (docs/microbenchmark-profile.md). Fields that are absent or 0
// are filled from DerivedProfile(spec) of the GPU named in the document, so a partial
// measurement is usable. `resolve` maps the document's `gpu:` name to a spec (normally
// GpuCatalog::Find). Errors: Parse (not YAML/JSON, with line), InvalidArgument (wrong
// `format:`, missing `gpu:`, negative or non-numeric value), NotFound (unknown GPU name).
class GpuCatalog;
Result<MicrobenchmarkProfile> ParseMicrobenchmarkProfile(std::string_view text,
                                                         const std::string& where,
                                                         const GpuCatalog& catalog);
// Reads FILE and parses it as above. Errors: IO, then as ParseMicrobenchmarkProfile.
Result<MicrobenchmarkProfile> LoadMicrobenchmarkProfile(const std::string& path,
                                                        const GpuCatalog& catalog);
// Serialises a profile in the documented format (round-trips through the parser).
std::string MicrobenchmarkProfileToYaml(const MicrobenchmarkProfile& p);

}  // namespace hase
