// ResolveShapeComputedDims: once the input dims are bound, integer shape arithmetic is known, so
// the outputs of Reshape / Expand / ConstantOfShape whose target is computed from shapes
// (x.view(x.size(0), -1): Shape → Gather → Unsqueeze → Concat → Reshape) get their dims.
//
// ONNX 1.12's shape inference (data propagation) leaves such outputs unknown; hase evaluates
// the small int64 tensors itself: Shape (incl. opset-15 start/end), Size, Gather (axis 0),
// Unsqueeze, Squeeze, Concat, Cast, Identity, Reshape, Slice (1-D, axis 0), Add/Sub/Mul/Div/Mod,
// Equal, Where, ConstantOfShape (≤ 64 elements), constant initializers and Constant nodes; and
// resolves the dims of Reshape, Expand, ConstantOfShape, Pad and Slice outputs whose target,
// pads or starts/ends are such values (torch's expand(n, -1, -1), Swin's window padding and
// roll). Each resolved output is written to the graph's
// value_info with the consumer's element type, so that a re-run of shape inference carries the
// dims downstream. Values that stay unknown are left alone (the loader then reports them).
#pragma once

#include <onnx/onnx_pb.h>

namespace hase::graph {

// Adds value_info for every Reshape/Expand/ConstantOfShape/Pad/Slice output whose dims were
// unknown and are now computable. Returns how many were added (0 = nothing to do).
int ResolveShapeComputedDims(onnx::ModelProto* model);

}  // namespace hase::graph
