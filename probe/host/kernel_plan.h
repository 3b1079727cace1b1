// KernelPlan: how the probe re-creates one hase Kernel on a GPU (which library call or CUDA
// kernel, with which dimensions), decided on the host so that it is testable without a GPU.
//
// A plan mirrors what ONNX Runtime's CUDA execution provider launches for the kernel:
//   conv / grouped_conv → cuDNN convolution (cudnnConvolutionBiasActivationForward when the
//                         kernel fuses Relu, else cudnnConvolutionForward + one epilogue pass
//                         for bias / residual Add / other activation);
//   gemm               → cuBLAS (strided-batched when batch > 1), bias broadcast first;
//   pooling            → cuDNN pooling (global pools as a window over all of H × W);
//   elementwise        → one CUDA kernel applying the op chain (broadcast read as index modulo
//                        the operand's size: same traffic, not the same arithmetic per element);
//   normalization      → CUDA kernels: per-channel scale/shift (BatchNormalization), row
//                        reductions (Softmax, LayerNormalization, InstanceNormalization);
//   data_movement      → one concat / split kernel, a transpose kernel, else a copy of the
//                        output size reading the first operand (gather, resize, slice, …);
//   view-only kernels  → skipped (the runtime aliases the buffer; nothing is launched).
// Operands: the kernel's activations (inputs) followed by its initializers (weights), in order.
// Conv: X = operand 0, residual Z = inputs[1] when "Add" is fused, W = weights[0],
// bias = weights[1]. Gemm/MatMul: A = inputs[0], B = inputs[1] if present else weights[0],
// bias C = the next initializer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/kernels/kernel.h"

namespace hase::probe {

enum class Backend {
  kSkip,        // nothing launched (view-only)
  kCudnnConv,
  kCudnnPool,
  kCublasGemm,
  kElementwise,
  kBatchNorm,
  kRowNorm,     // softmax / layernorm / instancenorm: rows × inner
  kConcat,
  kSplit,       // inverse of concat: one input, several outputs along an axis
  kTranspose,
  kCopy,        // read inputs, write output (generic data movement, other dtypes)
};
const char* BackendName(Backend b);  // "skip", "cudnn_conv", … (the CSV `impl` column)

// Element-wise operations a plan can chain (a binary op takes the next operand).
enum class EltOp : int32_t {
  kIdentity = 0, kAdd, kSub, kMul, kDiv, kPow, kMax, kMin,                 // binary from kAdd
  kRelu, kSigmoid, kTanh, kClip, kLeakyRelu, kHardSigmoid, kHardSwish,     // unary
  kErf, kGelu, kExp, kLog, kSqrt, kReciprocal, kNeg, kAbs, kSoftplus, kSilu,
};
bool IsBinary(EltOp op);
// Maps an ONNX/ORT op name ("Add", "Relu", "Clip", …) to an EltOp; unknown names map to
// kIdentity with *known = false.
EltOp EltOpFromName(const std::string& name, bool* known);

struct ConvDims {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input X [N, C, H, W] (1-D conv: H = 1)
  int64_t k = 0, r = 0, s = 0;         // output channels, filter height, width
  int64_t pad_h = 0, pad_w = 0;        // begin padding (cuDNN pads symmetrically)
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, groups = 1;
  int64_t p = 0, q = 0;                // output height, width (from the pads used)
  bool bias = false;                   // weights[1] present
  bool residual = false;               // fused Add: Z = inputs[1], shape of Y
  bool relu = false;                   // fused Relu (cudnnConvolutionBiasActivationForward)
  std::vector<EltOp> epilogue;         // other fused activations, applied after
};

struct PoolDims {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input [N, C, H, W]
  int64_t r = 1, s = 1;                // window
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  int64_t p = 0, q = 0;                // output height, width
  bool max = true;                     // MaxPool / GlobalMaxPool, else average
  bool count_include_pad = false;
};

struct GemmDims {
  int64_t batch = 1, m = 0, n = 0, k = 0;  // C[b, m, n] = A[b, m, k] · B[b, k, n]
  bool trans_a = false, trans_b = false;   // A stored [k, m] / B stored [n, k]
  bool a_batched = true;                   // A has a batch stride (false: broadcast)
  bool b_batched = false;                  // B has a batch stride
  bool bias = false;                       // bias broadcast into C before the product
  std::vector<EltOp> epilogue;             // fused activations after the product
};

struct KernelPlan {
  Backend backend = Backend::kSkip;
  DType dtype = DType::kFloat;  // compute dtype (float or float16 for math backends)
  std::string op;               // training-set `op` column: "conv2d_add_relu", "linear", …
  bool approximate = false;     // the launch moves the same bytes but not the exact op
  std::string note;             // why approximate / skipped

  ConvDims conv;
  PoolDims pool;
  GemmDims gemm;
  // Elementwise / copy / norm / concat / transpose:
  std::vector<EltOp> ops;                // elementwise chain
  int64_t out_elements = 0;              // elements written (output 0)
  std::vector<int64_t> operand_elements; // elements of each operand read
  int64_t rows = 0, inner = 0;           // row norm: rows × inner; batchnorm: spatial = inner
  int64_t channels = 0;                  // batchnorm channels
  int64_t outer = 0;                     // concat/split: product of dims before the axis
  std::vector<int64_t> concat_inner;     // concat: per input (split: per output), product of
                                         // dims from the axis
  std::vector<int64_t> in_shape;         // transpose input shape
  std::vector<int64_t> perm;             // transpose permutation
  int64_t in_elem_bytes = 4, out_elem_bytes = 4;  // copy element sizes
};

// Decides the plan. Errors: Unsupported (e.g. 3-D convolution, rank > 6 transpose) with the
// kernel's index and type in `where`; InvalidArgument when shapes contradict the op (a conv
// without a 4-D input and a weight).
Result<KernelPlan> PlanKernel(const Kernel& k);

}  // namespace hase::probe
