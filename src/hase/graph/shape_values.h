// ResolveShapeComputedDims: once the input dims are bound, integer shape arithmetic is known, so
// the outputs of Reshape / Expand / ConstantOfShape whose target is computed from shapes
// (x.view(x.size(0), -1): Shape → Gather → Unsqueeze → Concat → Reshape) get their dims.
//
// ONNX 1.12's shape inference (data propagation) leaves such outputs unknown; hase evaluates
// the small int64 tensors itself: Shape (incl. opset-15 start/end), Size, Gather (axis 0),
// Unsqueeze, Squeeze, Concat, Cast, Identity, Reshape, Slice (any axes and steps, e.g. the
// step -1 reversal torch's F.pad writes), Transpose, Add/Sub/Mul/Div/Mod, Equal, Where,
// ConstantOfShape (≤ 64 elements), Range (≤ 4096 values), ReduceMin/ReduceMax over all
// elements, constant initializers and Constant nodes; and small float constants as ORT's
// constant folding does (Cast, Reciprocal, Floor, Ceil, Add/Sub/Mul/Div/Min/Max: detection
// transforms' resize scale and padding). It resolves the dims of Reshape, Expand,
// ConstantOfShape, Pad, Slice, Range, Einsum, Resize (computed sizes or scales), Tile (computed
// repeats) and TopK (computed k) outputs whose target, pads, starts/ends, limits, sizes,
// repeats or k are such values (torch's expand(n, -1, -1), Swin's window padding, roll and masks,
// torchvision's F.interpolate(size=x.shape[-2:]), SSD anchors, the RPN's top-k). A Shape's own
// dims are noted as it is evaluated, so a chain of dependent computed Reshapes (one per
// attention block) resolves in one pass.
// Each resolved output is written to the graph's
// value_info with the consumer's element type, so that a re-run of shape inference carries the
// dims downstream. Values that stay unknown are left alone (the loader then reports them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

namespace hase::graph {

// Einsum's output dims and loop extent, from its equation and its inputs' dims (ONNX Einsum-12:
// letters a-z A-Z, one "..." per term for broadcast dims, spaces ignored; without "->" the output
// is the "..." dims then the letters used once, in ASCII order). ONNX 1.12 infers only the rank;
// ResolveShapeComputedDims fills the dims with this, and the cost model counts
// output elements × `contracted` multiply-adds.
struct EinsumShape {
  std::vector<int64_t> output;  // output dims
  int64_t contracted = 1;       // product of the sizes of the letters summed over (not in output)
};
// nullopt when the equation does not fit the inputs (count, ranks, a letter with two sizes
// neither of which is 1, an output letter no input has).
std::optional<EinsumShape> ComputeEinsumShape(std::string equation,
                                              const std::vector<const std::vector<int64_t>*>& inputs);

// Values of an integer tensor held in the proto (int64 / int32, int*_data or raw_data),
// flattened; nullopt for other types and external data.
std::optional<std::vector<int64_t>> TensorInts(const onnx::TensorProto& t);

// Adds value_info for every Reshape/Expand/ConstantOfShape/Pad/Slice/Einsum output whose dims were
// unknown and are now computable. Returns how many were added (0 = nothing to do). With
// `values`, also stores there every integer value it evaluated (name → flattened values).
// With `float_values`, also every small float value it evaluated that is not an initializer
// (name → flattened values; ORT's constant folding of float arithmetic on constants).
int ResolveShapeComputedDims(
    onnx::ModelProto* model,
    std::unordered_map<std::string, std::vector<int64_t>>* values = nullptr,
    std::unordered_map<std::string, std::vector<double>>* float_values = nullptr);

// Data-dependent output sizes, bounded: once every computable dim is resolved, each NonZero or
// NonMaxSuppression whose output still has no dims but whose inputs' dims are known gets the
// largest output its inputs allow, and a note (one line, naming the node, the bound and why) is
// appended to `notes`:
//   NonZero(X) → [rank(X), elements(X)]  (every element non-zero);
//   NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class M) →
//     [B·C·min(N, M), 3]  (M a constant; absent or 0 → 0 boxes, as the operator defines).
// Kernels after it are costed at that bound (an upper bound on their work). An If whose
// condition is among `values` (what ResolveShapeComputedDims evaluated: torchvision's
// batched_nms tests boxes.numel() == 0) gives its outputs the dims of the branch it takes,
// resolved and bounded the same way inside (notes included). Returns how many outputs it gave
// dims (0 = none); re-run inference and ResolveShapeComputedDims after it.
int BoundDataDependentDims(onnx::ModelProto* model,
                           const std::unordered_map<std::string, std::vector<int64_t>>& values,
                           std::vector<std::string>* notes, int depth = 0);

}  // namespace hase::graph
