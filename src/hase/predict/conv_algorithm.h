// ConvAlgorithm: which convolution algorithm cuDNN picks for a dense conv, as a function of the
// shape, the precision and whether the GPU has tensor cores. The analytic estimator uses it to
// count the arithmetic cuDNN really does (Winograd does fewer multiplies than the direct
// convolution the cost model counts; PITFALLS 4) and to decide whether tensor cores are used.
//
// Fitted on ../shared/data/kernels (the algorithm cuDNN chose is a measurement; it is used to fit
// this shape → algorithm rule and is never an input feature, PITFALLS 2):
//   * NeuSight conv (PyTorch 2.1, cuDNN 8.9, FP32, allow_tf32 off; every row 3×3 stride 1,
//     `Kernels` column): 18,018 of 24,662 calls launch Winograd kernels (fused or
//     `winograd_nonfused`), 6,364 implicit-GEMM ones (`scudnn`, `implicit_convolve_sgemm`,
//     im2col + sgemm), 280 FFT. The share of Winograd by input channels C: C < 16: 2–9 %,
//     16–31: 28 %, 32–63: 57 %, ≥ 64: 82–86 %. "Winograd iff C ≥ 32" labels 82.2 % of the calls
//     right (C ≥ 16: 79.8 %, C ≥ 48: 82.4 %, C ≥ 64: 81.3 %). Leave-one-GPU-out (threshold
//     chosen among 8…128 on the other four GPUs: 32 or 48) the held-out agreement is 0.72 (P4)
//     to 0.87 (V100); with 32: A100-80GB 0.86, P100 0.87, P4 0.72, T4 0.80, V100 0.86
//     (docs/predictor.md, "Convolution algorithm").
//   * DeepBench conv (cuDNN 5–7.6, column `algorithm`): FP32 and P100 "pseudo fp16" 3×3 stride-1
//     layers mostly WINOGRAD / WINOGRAD_NONFUSED, everything else IMPLICIT_(PRECOMP_)GEMM or FFT;
//     fp16_mixed (tensor cores, V100 and T4): IMPLICIT_PRECOMP_GEMM for all 94 configs, i.e.
//     no Winograd on tensor cores.
#pragma once

#include <cstdint>
#include <optional>

#include "hase/hw/gpu_spec.h"
#include "hase/kernels/kernel.h"
#include "hase/predict/precision.h"

namespace hase {

enum class ConvAlgorithm {
  kImplicitGemm,    // direct/implicit GEMM on CUDA cores (FP32, or FP16 without tensor cores)
  kWinograd,        // Winograd F(m×m, 3×3) on CUDA cores: fewer multiplies than counted
  kTensorCoreGemm,  // implicit GEMM on tensor cores (FP16 under kTensor, TF32 under kTf32)
  kGrouped,         // grouped / depthwise conv (CUDA cores, memory-bound kernels)
};
// "implicit_gemm", "winograd", "tensor_core_gemm", "grouped". Never rename (printed in reports).
const char* ConvAlgorithmName(ConvAlgorithm a);

// The conv view of a kernel: input [n, c, h, w], k output channels, r × s filter.
struct ConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, groups = 1;
};
// From a kConv / kGroupedConv kernel with a 4-D input; nullopt otherwise (weights give k, r, s;
// else the output and `kernel_shape`).
std::optional<ConvShape> ConvShapeOf(const Kernel& k);

// Input channels from which cuDNN runs a 3×3 stride-1 FP32 conv as Winograd (NeuSight fit above).
inline constexpr int64_t kWinogradMinChannels = 32;
// Tensor-core convs need the input channel count to be a multiple of this (FP16: 8 elements =
// 16 bytes per vector load; cuDNN otherwise pads or runs CUDA-core kernels). DeepBench fp16_mixed
// V100/T4: the C = 1 and C = 3 layers reach 1.4–8 TFLOP/s, 2–6 % of the tensor peak.
inline constexpr int64_t kTensorChannelMultiple = 8;

// The rule, in order:
//   groups > 1                                   → kGrouped
//   tensor cores used (kTensor with tensor_fp16 > 0, or kTf32 on compute capability ≥ 8) and
//     c % kTensorChannelMultiple == 0            → kTensorCoreGemm
//   r = s = 3, stride 1, dilation 1, c ≥ kWinogradMinChannels → kWinograd
//   otherwise                                    → kImplicitGemm
ConvAlgorithm PickConvAlgorithm(const ConvShape& shape, Precision precision, const GpuSpec& gpu);

}  // namespace hase
