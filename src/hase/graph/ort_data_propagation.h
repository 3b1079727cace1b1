// The shape values ONNX Runtime 1.30 propagates while it infers shapes, and the Reshape output
// shapes it gets from them — for OrtShapeView (ort_shape_view.h), which otherwise runs ONNX
// 1.12's inference with no data propagation.
//
// ORT's Graph::Resolve runs, after each node's ONNX inference function, the schema's
// PartialDataPropagationFunction (ONNX's: Shape, Size, Cast, Squeeze, Unsqueeze, Concat, Gather,
// Slice, Add, Sub, Mul) and then its own custom propagation
// (onnxruntime/core/graph/data_propagation/: custom_data_propagation.cc picks Size, Squeeze,
// Unsqueeze always, and Gather, Add, Sub, Mul, Div when ONNX's function gave no values): a rank-0
// "scalar" channel holding only known integers (gather_op_data_propagation.cc stores a gathered
// dim only if it has a value; a symbolic "batch" stays unknown), Unsqueeze of such a scalar gives
// [v], Div of two scalars their integer quotient. InferenceContextImpl::getSymbolicInput hands
// the propagated values to ONNX's Reshape inference, which copies known values and symbolic dims
// into the output shape; when no values are known ORT's ONNX still infers the output's rank from
// the length of the target. Both only for Reshape-14 and later (opset ≥ 14): Reshape-13's
// inference is ONNX's frozen old one, which reads constant targets only. Checked against
// onnxruntime-node 1.30 (FrontEndCases.ReshapeRankOrtKnowsFromPropagatedTarget).
// Fully known values are what ORT's constant folding computes too; shape_values.h resolves those.
//
// Propagation here: integer scalars and 1-D int vectors whose elements are each a known value, a
// symbolic dim of the file (its dim_param) or unknown.
#pragma once

#include <string>
#include <unordered_set>

#include <onnx/onnx_pb.h>

namespace hase::graph {

// Writes value_info into `model` (already inferred by ONNX, no data propagation) for each Reshape
// output that has no rank yet and whose rank ORT 1.30 knows: dims from the propagated target
// (value, the file's dim_param, a copied input dim for 0, a computed -1 where every other dim is
// known, else unknown), or a rank of unknown dims from a target of known length. Dim params
// not in `file_symbols` (the file's own dim names; ONNX's generated "unk__N" are not) count as
// unknown. Returns how many outputs it wrote (0: nothing new; otherwise re-run ONNX inference to
// carry them downstream).
int PropagateOrtShapeData(onnx::ModelProto* model,
                          const std::unordered_set<std::string>& file_symbols);

}  // namespace hase::graph
