// OrtShapeView: the shapes and constant values ONNX Runtime works with while it optimises a file
// whose batch is left open — as opposed to the bound shapes hase costs kernels with.
//
// ORT infers shapes with ONNX's own inference functions and (1.30, measured; v1.21.0 had none)
// the shape data propagation of ort_data_propagation.h (ONNX's propagators plus its own for
// scalars); a dim it cannot compute stays symbolic ("batch") or unknown, a Reshape-13 whose
// target is computed from a batch-dependent shape has no rank, and so on. Its ConstantFolding
// computes every node whose inputs are constant and every Shape whose input dims are all known
// (constant_folding.cc:L33-L93), so shape arithmetic over static dims becomes constants. Fusion
// rules read this view where ORT's transformers read NodeArg::Shape() (ReshapeFusion's dim
// comparisons, TransposeOptimizer's rank estimates, BiasGeluFusion's dims, MatMul fusions'
// ranks, ConstantFolding of Shape), so that hase fuses what ORT fuses whatever batch hase binds.
//
// Computed here by ONNX 1.12 shape inference on the unbound file plus hase's evaluation of
// constant subgraphs (shape_values.h) and ORT's data propagation (ort_data_propagation.h), to a
// fixed point — ORT's level-1 constant folding without its other rewrites. Never fails: a file
// ONNX cannot infer unbound gets an empty view, and rules then fall back to the bound shapes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hase/graph/graph.h"

namespace hase::graph {

// Dim codes in OrtShapeView::dims: those of Value::ort_shape (graph.h: kOrtUnknownDim, ≤
// kOrtFirstSymbol a named symbolic dim of the file).

struct OrtShapeView {
  // Value name → dims, for values whose rank ORT knows. Absent: rank unknown.
  std::unordered_map<std::string, std::vector<int64_t>> dims;
  // Value name → int64 values that ORT's constant folding computes (shape arithmetic over static
  // dims, constants of constants), flattened. Only small integer tensors.
  std::unordered_map<std::string, std::vector<int64_t>> values;
  // Value name → float values its constant folding computes from constants (a resize scale, a
  // ratio of two static dims), flattened; at most 64 elements each.
  std::unordered_map<std::string, std::vector<double>> float_values;
};

// The view of `model` as read from the file (before any dim is bound). Copies what inference
// needs (nodes, value infos, small initializers; large initializers by dims and type only).
// Runs libonnx in this process (InferModelShapesUnisolated): call it only inside RunIsolated,
// as LoadOnnxGraph does.
OrtShapeView ComputeOrtShapeView(const onnx::ModelProto& model);

// Re-runs ONNX shape inference over the live nodes of `g` (ORT's Graph::Resolve after a
// transformer changed the graph) and refines every Value::ort_shape with what it infers: a rank
// where none was known, a known dim where one was unknown; never the other way. Ops ONNX 1.12
// has no schema for (ORT's contrib ops made by fusion) keep the dims they had. Does nothing when
// `g` has no view or inference fails or crashes (it runs in a child process,
// shape_inference.h).
void RefreshOrtShapes(Graph& g);

}  // namespace hase::graph
