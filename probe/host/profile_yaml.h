// The probe's microbenchmark results and their profile document: format
// "hase-microbenchmark-profile/1" of docs/microbenchmark-profile.md, read by
// LoadMicrobenchmarkProfile (src/hase/hw/microbenchmark_profile.h). Field meanings follow that
// document; the probe's methods are listed in gpu/microbench.h.
#pragma once

#include <string>
#include <vector>

namespace hase::probe {

// One raw measurement (also a row of `hase-probe micro --csv`).
struct MicroResult {
  std::string name;   // "dram_copy", "dram_triad", "l2_read", "sgemm", "hgemm_tensor", …
  std::string unit;   // "GB/s", "TFLOP/s", "us"
  double value = 0;   // median over repetitions
  std::string detail; // sizes and method, for people
};

struct MeasuredProfile {
  std::string gpu;                 // CUDA device name ("NVIDIA H200"): the catalog resolves it
  std::string tool;                // "hase-probe 0.1 micro"
  std::string measured_at;         // UTC, "2026-11-30T12:00:00Z"
  std::string host;                // hostname
  std::string driver;              // NVIDIA driver ("550.54.15"), or "" when NVML is absent
  std::string cuda;                // CUDA driver API version ("13.0")
  double dram_bandwidth_gbps = 0;  // copy kernel, bytes read + written per second
  double l2_bandwidth_gbps = 0;    // reads of a working set of half the L2
  double fp32_tflops = 0;          // FFMA chains on CUDA cores (1 FMA = 2 FLOP)
  double fp16_tflops = 0;          // half2 FMA kernel on CUDA cores
  double tensor_fp16_tflops = 0;   // cuBLAS GemmEx FP16 in, FP32 accumulate, tensor cores
  double tensor_tf32_tflops = 0;   // cuBLAS GemmEx FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32;
                                   // 0 below compute capability 8.0 (no TF32 there)
  double launch_overhead_us = 0;   // empty kernel, back-to-back launches
  double h2d_gbps = 0;             // pinned host → device
  double d2h_gbps = 0;             // pinned device → host
};

// The profile document (YAML). `raw` results are appended as comments for people.
std::string ProfileYaml(const MeasuredProfile& p, const std::vector<MicroResult>& raw);

}  // namespace hase::probe
