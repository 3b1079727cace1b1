// ValidateOps: semantic checks on a loaded Graph that ONNX's shape inference leaves out, for
// models ONNX Runtime rejects at session creation or run time (issue 12, C08/C09).
//
//   Resize     scales and sizes both given (ONNX spec, Resize-11+: "only one of 'scales' and
//              'sizes' can be specified"); an empty scales tensor, as exporters write next to
//              sizes, counts as absent.
//   Upsample   a scale < 1 (ONNX spec, Upsample-7/9: "each scale must be >= 1"); scales from the
//              attribute (opset 7) or a constant input (opset 9).
//   Gemm, MatMul the contracted dims of both inputs differ where both are known (ONNX Gemm/MatMul
//              spec; shape inference does not compare them): a model fed another input size than
//              it was exported for.
#pragma once

#include <string>

#include "hase/base/status.h"
#include "hase/graph/graph.h"

namespace hase::graph {

// OK when every live node passes; else InvalidArgument naming the node (`path`: node 'name'
// (op)), what is wrong and how to fix the model.
Status ValidateOps(const Graph& g, const std::string& path);

}  // namespace hase::graph
