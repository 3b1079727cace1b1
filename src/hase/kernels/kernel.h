// Kernel: one unit of work a GPU runtime launches after graph optimisation.
//
// A kernel is what ONNX Runtime's execution provider runs for one (possibly fused) node, e.g.
// FusedConv = Conv + folded BatchNormalization + residual Add + Relu. It carries what the cost
// model derived from shapes: FLOPs, bytes moved and parameters. This header is the contract
// between `kernels` (which produces KernelLists) and `predict`, `probe` and the JSON schema
// (docs/kernels-json.md); it knows nothing of latency or GPUs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hase {

// ONNX TensorProto.DataType values we cost; other types keep their ONNX number.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kBFloat16 = 16,
};

// Bytes per element of `t`; 0 for undefined/unknown.
int64_t DTypeSize(DType t);
// Lower-case ONNX spelling: "float", "float16", "int64", …
const char* DTypeName(DType t);

// Kernel families: one learned latency model each (predictor issue).
enum class KernelFamily {
  kConv,           // dense Conv / ConvTranspose (group == 1), incl. FusedConv
  kGroupedConv,    // depthwise / grouped Conv (group > 1)
  kGemm,           // Gemm, MatMul, FusedGemm, batched MatMul
  kElementwise,    // Add, Mul, Relu, Sigmoid, Clip, QuickGelu, Cast, … (one pass over data)
  kPooling,        // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
  kNormalization,  // BatchNormalization, LayerNormalization, Softmax, InstanceNorm
  kDataMovement,   // Concat, Split, Slice, Transpose, Resize, Pad, Gather, Reshape, Flatten
  kOther,          // anything else (costed conservatively)
};
// "conv", "grouped_conv", "gemm", "elementwise", "pooling", "normalization",
// "data_movement", "other" — the names used in CSVs, JSON and model files. Never rename.
const char* KernelFamilyName(KernelFamily f);
// True for kConv and kGroupedConv (dense, grouped and depthwise convolutions).
inline bool IsConvolution(KernelFamily f) {
  return f == KernelFamily::kConv || f == KernelFamily::kGroupedConv;
}

// A tensor a kernel reads or writes. shape is fully bound (no symbolic dims) once a
// KernelList has been built.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::kFloat;

  int64_t elements() const;  // product of shape; 1 for a scalar
  int64_t bytes() const { return elements() * DTypeSize(dtype); }
};

struct Kernel {
  int index = 0;                          // position in launch (topological) order, from 0
  std::string type;                       // e.g. "FusedConv(Add,Relu)", "Conv", "MaxPool"
  std::string op_type;                    // the anchor ONNX/ORT op: "Conv", "FusedConv", "Gemm"
  std::vector<std::string> fused_ops;     // ops folded in after the anchor: {"Add","Relu"}
  KernelFamily family = KernelFamily::kOther;
  std::vector<std::string> source_nodes;  // ONNX node names this kernel came from
  std::vector<TensorInfo> inputs;         // activations read (not initializers)
  std::vector<TensorInfo> weights;        // initializers read (weights, biases, constants)
  std::vector<TensorInfo> outputs;        // tensors written
  // Integer attributes as ONNX names them: kernel_shape, strides, pads, dilations, group, axis…
  std::map<std::string, std::vector<int64_t>> attributes;

  double macs = 0;                 // multiply-accumulates (MAC); 0 for non-MAC kernels
  double flops = 0;                // FLOP; 2 × macs for Conv/Gemm, + elementwise work
  int64_t activation_bytes_read = 0;  // bytes, sum over inputs (0 for view-only kernels)
  int64_t weight_bytes_read = 0;      // bytes, sum over weights
  int64_t bytes_written = 0;          // bytes, sum over outputs (0 for view-only kernels)
  int64_t parameters = 0;             // elements of weights (after folding)
  bool view_only = false;  // Reshape/Flatten/Identity/Squeeze/Unsqueeze on contiguous data:
                           // the runtime aliases the buffer, so no DRAM traffic is counted
  // Runs on the host, not the GPU: shape arithmetic (Shape → Gather → Unsqueeze → Concat on
  // int64 shape tensors) that ORT's CUDA EP places on the CPU (GetCpuPreferredNodes,
  // onnxruntime/core/framework/fallback_cpu_capability.cc). Kept in the list, no device time.
  // Always false under "ort-cpu" and "none", where every kernel runs where the profile says.
  bool cpu_placed = false;

  int64_t dram_bytes() const { return activation_bytes_read + weight_bytes_read + bytes_written; }
  // FLOP per DRAM byte; 0 when no bytes move.
  double arithmetic_intensity() const {
    return dram_bytes() > 0 ? flops / static_cast<double>(dram_bytes()) : 0.0;
  }
};

// The kernels of one model under one fusion profile, in launch order.
struct KernelList {
  std::string model;        // model name or file path
  std::string profile;      // fusion profile: "ort-cuda", "ort-cpu", "none"
  int64_t batch = 1;        // bound batch size
  std::vector<TensorInfo> graph_inputs;
  std::vector<TensorInfo> graph_outputs;
  std::vector<Kernel> kernels;
  // Notes for people (unknown ops estimated conservatively, fixed dims overridden). Added by
  // the graph issue; empty when nothing was guessed.
  std::vector<std::string> warnings;
  // Batch sizes the model runs at, from Reshapes that pin the batch (graph/batch_validity.h):
  // "valid at any batch size", "valid only at batch 1", … Building at another batch fails.
  std::string batch_validity = "valid at any batch size";
  // The ORT release the profile reproduces, e.g. "onnxruntime 1.30.0 (CPU EP)"
  // (fusion_profile.h, FusionProfileOrtRelease); empty for "none".
  std::string ort_release;

  double total_macs() const;
  double total_flops() const;
  int64_t total_parameters() const;
  int64_t total_dram_bytes() const;
};

}  // namespace hase
