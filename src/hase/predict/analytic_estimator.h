// AnalyticEstimator: per-kernel roofline with per-family efficiencies, load contention and a
// device-side floor. Defined for every catalog GPU without training data; the fallback behind
// every learned estimator.
//
//   peak_flops  = profile peak for the precision and family (below), FLOP/s
//   util        = min(1, output_elements / (sms × min_outputs_per_sm))   (small kernels cannot
//                 fill the GPU; wave-quantisation approximation, Volkov 2010 / Habitat 2021)
//   algo        = dense conv only: the algorithm cuDNN picks (conv_algorithm.h):
//                 winograd → × winograd_gain; tensor_core_gemm → × red / (red + tensor_conv_k_half)
//                 with red = c·r·s (the implicit GEMM's reduction length); implicit_gemm under
//                 kTensor/kTf32 (channels not a multiple of 8) → CUDA-core peak, no tensor cores
//   t_compute   = flops / (peak_flops × compute_eff[family] × algo × util) × compute_slowdown(load)
//   t_memory    = dram_bytes × bytes_scale / (dram_bw × memory_eff[family]) × memory_slowdown(load)
//   device_ms   = max(t_compute, t_memory) + kernel_floor_us
//
// Peak per precision (from MicrobenchmarkProfile):
//   fp32   → fp32_tflops
//   fp16   → max(fp16_tflops, fp32_tflops)  (where FP16 math is slow, e.g. GP102/GP104, runtimes
//            compute in FP32 on FP16 storage: "pseudo fp16", DeepBench)
//   tensor → tensor_fp16_tflops × tensor_eff for conv and gemm (when the GPU has tensor cores),
//            else as fp16; grouped/depthwise conv never uses tensor cores.
//   tf32   → tensor_tf32_tflops × tf32_eff for conv and gemm (compute capability >= 8.0), else
//            as fp32.
// bytes_scale = StorageScale(precision): 1 for fp32/tf32, 0.5 for fp16/tensor (an fp32 graph
// run with FP16 tensors moves half the bytes).
//
// Load contention (LoadSnapshot, DCGM terms; docs/predictor.md):
//   compute_slowdown = 1 / max(0.1, 1 − sm_contention × EffectiveSmActive())
//   memory_slowdown  = 1 / max(0.1, 1 − dram_contention × EffectiveDramActive())
// With the default contention 0.5, a background that keeps the SMs busy all the time leaves
// half of them to us (time-slicing between two busy contexts), and a background at 40 %
// DRAM_ACTIVE slows memory-bound kernels by 1 / (1 − 0.2) = 1.25×.
//
// The efficiency defaults are calibrated (docs/predictor.md says on what data and how).
#pragma once

#include <array>
#include <string>

#include "hase/predict/conv_algorithm.h"
#include "hase/predict/kernel_latency_estimator.h"

namespace hase {

constexpr int kNumKernelFamilies = 8;  // KernelFamily values kConv … kOther

struct AnalyticParams {
  // Fraction of the profile's compute peak a kernel of each family reaches (index =
  // static_cast<int>(KernelFamily)). Conv > 1 is possible: Winograd/FFT do fewer FLOPs than the
  // direct convolution the cost model counts (PITFALLS 4).
  // Values marked [timm] were fitted by tools/timm_check on all 220 timm rows (RTX 3090/4090/
  // 5090/PRO 6000 Max-Q, AMP fp16; docs/predictor.md, "Calibration"); the others are priors.
  std::array<double, kNumKernelFamilies> compute_eff = {
      /*conv*/ 0.80, /*grouped_conv [timm]*/ 0.60, /*gemm*/ 0.80, /*elementwise*/ 0.50,
      /*pooling*/ 0.50, /*normalization*/ 0.30, /*data_movement*/ 0.50, /*other*/ 0.30};
  // Fraction of the profile's DRAM bandwidth each family reaches.
  std::array<double, kNumKernelFamilies> memory_eff = {
      /*conv [timm]*/ 1.00, /*grouped_conv [timm]*/ 1.00, /*gemm*/ 0.80,
      /*elementwise [timm]*/ 1.00, /*pooling [timm]*/ 0.192, /*normalization [timm]*/ 1.00,
      /*data_movement*/ 0.65, /*other*/ 0.50};
  // Extra factor on the tensor-core peak for conv/gemm under Precision::kTensor [timm]. With
  // conv compute_eff 0.80 and the derived profile's 0.75 this is 0.90 of the dense datasheet
  // peak (FP32 accumulate) at the sustained clock, before a conv's reduction-length factor
  // (tensor_conv_k_half). 1.5 is the upper bound of timm_check's search (the fit sits on it:
  // with the reduction-length factor, large convs must run near peak to match timm).
  double tensor_eff = 1.5;
  // Extra factor on the TF32 tensor-core peak for conv/gemm under Precision::kTf32. A prior, not
  // a fit (no TF32 kernel or model timings in ../shared/data): 1.0 puts ResNet-50 batch 256 on
  // an A100-SXM4-80GB at 0.46 × its AMP (kTensor) throughput in this model; NVIDIA's
  // DeepLearningExamples ResNet-50 v1.5 (PyTorch, NGC 21.03, 1 × A100 80GB) measures TF32 938 vs
  // AMP 2470 img/s = 0.38 (training, the only A100 TF32 figure it gives). docs/predictor.md, "TF32".
  double tf32_eff = 1.0;
  // Direct-convolution FLOP/s of a Winograd conv over that of an implicit-GEMM conv on the same
  // GPU [NeuSight]: median FLOP/s per GPU of 10^10–10^11 FLOP FP32 convs, Winograd / implicit
  // GEMM, is A100-80GB 1.76, P100 1.60, P4 1.35, T4 1.52, V100 1.46 (median 1.52; leaving any one
  // GPU out moves the median of the others between 1.49 and 1.56). docs/predictor.md,
  // "Convolution algorithm".
  double winograd_gain = 1.5;
  // Reduction length c·r·s at which a tensor-core conv reaches half of its efficiency: short
  // reductions spend their time in the prologue/epilogue [DeepBench fp16_mixed conv, V100 and T4:
  // spread of log(measured / predicted) 0.78 → 0.59 (T4) and 0.78 → 0.53 (V100) with this term
  // and the channel rule; 64 and 256 were also tried, 128 is best on both GPUs]. GEMMs do not
  // show it (DeepBench fp16 GEMM spread 0.35 / 0.25 with or without), so it is conv only.
  double tensor_conv_k_half = 128;
  // false: no algorithm rule (every dense conv as direct FLOPs at the precision's peak, tensor
  // cores whenever the precision allows): the model before conv_algorithm.h, for ablations
  // (`hase eval --estimator analytic --no-conv-algorithm`).
  bool conv_algorithm = true;
  // Output elements per SM needed to reach full compute utilisation.
  double min_outputs_per_sm = 4096;
  // Device-side fixed cost of any kernel (launch latency on the GPU, ramp-up, tail), µs.
  double kernel_floor_us = 2.0;
  // Load contention coefficients (see the file comment), 0–1.
  double sm_contention = 0.5;
  double dram_contention = 0.5;
  // Host costs per kernel live in the runtime profile (runtime_profile.h).
  // Per-batch synchronisation + runtime bookkeeping, µs.
  double sync_us = 20.0;
};

// Whether a kernel family runs on tensor cores under kTensor / kTf32 (conv and gemm; grouped and
// depthwise conv do not). Shared by every estimator that models precision.
bool UsesTensorCores(KernelFamily f);

// Parameter set used by default (`hase predict`, PredictModel without an estimator).
AnalyticParams DefaultAnalyticParams();

class AnalyticEstimator final : public KernelLatencyEstimator {
 public:
  explicit AnalyticEstimator(AnalyticParams params = DefaultAnalyticParams())
      : params_(params) {}

  std::string Name() const override { return "analytic"; }
  // Never returns Unsupported: every kernel gets an estimate. Errors: InvalidArgument for
  // negative FLOPs or bytes, or a profile without DRAM bandwidth / FP32 peak.
  Result<KernelEstimate> Estimate(const Kernel& kernel,
                                  const ExecutionContext& ctx) const override;

  // The two roofline terms before max() and the floor, ms (for tests and features).
  struct Terms {
    double compute_ms = 0;
    double memory_ms = 0;
    double peak_tflops = 0;   // peak used for the compute term (before family efficiency)
    double utilisation = 1;   // the util factor
    // Dense conv only: the algorithm assumed and the tensor-core reduction-length efficiency.
    ConvAlgorithm algorithm = ConvAlgorithm::kImplicitGemm;
    double reduction_eff = 1;
  };
  Result<Terms> RooflineTerms(const Kernel& kernel, const ExecutionContext& ctx) const;

  const AnalyticParams& params() const { return params_; }

 private:
  const AnalyticParams params_;
};

}  // namespace hase
