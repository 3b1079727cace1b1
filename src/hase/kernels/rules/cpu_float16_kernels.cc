#include "hase/kernels/rules/cpu_float16_kernels.h"

#include <string>
#include <vector>

namespace hase::kernels::rules {
namespace {

constexpr int32_t kFloat16 = 10;
constexpr int kOpen = 1 << 20;  // no upper opset bound

// Which of the node's float16 tensors the kernel's type constraints admit.
enum class Admits {
  kAll,         // every argument (the others hold int64 shapes, bool masks, indices)
  kInputsOnly,  // the input (T1 = all types) but not the output (T2 float/double)
};

struct Float16Kernel {
  const char* domain;  // "" = ai.onnx
  const char* op;
  int first_opset;     // the registrations with float16 cover opsets [first, last]
  int last_opset;
  Admits admits;
};

// onnxruntime v1.21.0, x86-64 build (no MLAS_F16VEC_INTRINSICS_SUPPORTED). Paths are under
// onnxruntime/core/providers/cpu/ unless named; lines are the KernelDefBuilder type constraint
// or the type list it reads. Registration in cpu_execution_provider.cc RegisterOnnxOperatorKernels
// (L1331-L3220) unless marked "contrib".
constexpr Float16Kernel kTable[] = {
    {"", "Cast", 6, kOpen, Admits::kAll},               // tensor/cast_op.cc:L32-L42 AllIRv9
    {"", "Clip", 12, kOpen, Admits::kAll},              // math/clip.cc:L24-L26 (11: float only)
    {"", "Compress", 9, kOpen, Admits::kAll},           // tensor/compress.cc:L15, L24
    {"", "Concat", 4, kOpen, Admits::kAll},             // tensor/concat.cc:L38-L40 All
    {"", "ConstantOfShape", 9, kOpen, Admits::kAll},    // generator/constant_of_shape_base.h:L21
    {"", "Dropout", 7, 11, Admits::kAll},               // tensor/identity_op.cc:L11, L20 (12+:
                                                        //   MLFloat16 kernels commented out)
    {"", "Expand", 8, kOpen, Admits::kAll},             // typed MLFloat16, L1722, L2226
    {"", "Flatten", 1, kOpen, Admits::kAll},            // nn/flatten.cc:L13-L51 AllTensorTypes
    {"", "Gather", 1, kOpen, Admits::kAll},             // tensor/gather.cc:L38-L55
    {"", "GatherElements", 11, kOpen, Admits::kAll},    // tensor/gather_elements.cc:L17, L26
    {"", "GatherND", 11, kOpen, Admits::kAll},          // tensor/gather_nd.cc:L19-L53
    {"", "Identity", 1, kOpen, Admits::kAll},           // tensor/identity_op.cc:L30-L64
    {"", "If", 1, kOpen, Admits::kAll},                 // controlflow/if.cc (V: all types)
    {"", "IsInf", 20, kOpen, Admits::kAll},             // tensor/isinf.cc:L23 (10-19: float, double)
    {"", "IsNaN", 9, kOpen, Admits::kAll},              // typed MLFloat16, L1782, L2530, L3076
    {"", "LayerNormalization", 1, 16, Admits::kAll},    // contrib: cpu_contrib_kernels.cc:L353
    {"", "LayerNormalization", 17, kOpen, Admits::kAll},  // typed MLFloat16, L2810
    {"", "Loop", 1, kOpen, Admits::kAll},               // controlflow/loop.cc (V: all types)
    {"", "Max", 12, kOpen, Admits::kAll},               // math/element_wise_ops.cc:L23-L24
    {"", "Min", 12, kOpen, Admits::kAll},               // math/element_wise_ops.cc:L30-L31
    {"", "Mod", 10, kOpen, Admits::kAll},               // math/element_wise_ops.cc:L36-L38
    {"", "RandomNormalLike", 1, kOpen, Admits::kInputsOnly},   // generator/random.cc:L105
    {"", "RandomUniformLike", 1, kOpen, Admits::kInputsOnly},  // generator/random.cc:L114
    {"", "Reshape", 1, kOpen, Admits::kAll},            // tensor/reshape.cc:L13-L61
    {"", "ReverseSequence", 10, kOpen, Admits::kAll},   // tensor/reverse_sequence.cc:L31-L33
    {"", "Round", 11, kOpen, Admits::kAll},             // typed MLFloat16, L1957, L3201
    {"", "Scan", 8, kOpen, Admits::kAll},               // controlflow/scan_8.cc, scan_9.cc
    {"", "Scatter", 9, 10, Admits::kAll},               // tensor/scatter.cc:L22-L23 All
    {"", "ScatterElements", 11, kOpen, Admits::kAll},   // tensor/scatter.cc:L25-L26 All
    {"", "ScatterND", 11, kOpen, Admits::kAll},         // tensor/scatter_nd.cc:L15-L17 All
    {"", "Shape", 1, kOpen, Admits::kAll},              // tensor/shape_op.cc:L12-L38
    {"", "Shrink", 9, kOpen, Admits::kAll},             // nn/shrink.cc:L15-L17 AllNumeric
    {"", "Sign", 9, kOpen, Admits::kAll},               // math/sign.cc:L21-L22 AllNumeric
    {"", "SimplifiedLayerNormalization", 1, kOpen, Admits::kAll},  // contrib: L356
    {"", "Slice", 1, kOpen, Admits::kAll},              // tensor/slice.cc:L23-L25 All
    {"", "Split", 2, kOpen, Admits::kAll},              // tensor/split.cc:L20-L22 All
    {"", "Squeeze", 1, kOpen, Admits::kAll},            // tensor/squeeze.cc:L13-L43
    {"", "Transpose", 1, kOpen, Admits::kAll},          // tensor/transpose.cc:L18-L40
    {"", "Unsqueeze", 1, kOpen, Admits::kAll},          // tensor/unsqueeze.cc:L18-L47
    {"com.microsoft", "SkipLayerNormalization", 1, kOpen, Admits::kAll},  // contrib: L359
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, kOpen, Admits::kAll},  // contrib: L362
};

bool IsFloat16(const graph::Graph& g, const std::string& name) {
  if (name.empty()) return false;
  const graph::Value* v = g.FindValue(name);
  return v != nullptr && v->elem_type == kFloat16;
}

bool AnyFloat16(const graph::Graph& g, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (IsFloat16(g, n)) return true;
  }
  return false;
}

}  // namespace

bool TouchesFloat16(const graph::Graph& g, const graph::Node& n) {
  return AnyFloat16(g, n.inputs) || AnyFloat16(g, n.outputs);
}

bool CpuEpHasKernel(const graph::Graph& g, const graph::Node& n) {
  // HardSwish 14 has no CPU kernel in any type: onnxruntime-node 1.30 inlines its function body
  // (HardSigmoid(alpha 1/6, beta 0.5) → Mul) in float models too (torchvision
  // deeplabv3_mobilenet_v3_large / lraspp at opset 17: 20 HardSigmoid + Mul, no HardSwish).
  if (n.domain.empty() && n.op_type == "HardSwish") return false;
  if (!TouchesFloat16(g, n)) return true;
  // A node a fusion made in a contrib domain the model does not import is at version 1.
  int64_t opset = g.opset(n.domain);
  if (opset == 0) opset = 1;
  for (const Float16Kernel& k : kTable) {
    if (n.domain != k.domain || n.op_type != k.op) continue;
    if (opset < k.first_opset || opset > k.last_opset) continue;
    return k.admits == Admits::kAll || !AnyFloat16(g, n.outputs);
  }
  return false;
}

}  // namespace hase::kernels::rules
