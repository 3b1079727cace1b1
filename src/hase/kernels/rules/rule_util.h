// Small graph queries and edits shared by the fusion rules (ORT's graph_utils equivalents).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "hase/graph/graph.h"

namespace hase::kernels::rules {

// The one live node consuming output 0 of `id`, or kNoNode when there are zero or several
// consumers, the output is a graph output, or `id` has other outputs in use. Mirrors ORT's
// GetLoneConsumerNode / CanRemoveNode checks.
graph::NodeId LoneConsumer(const graph::Graph& g, graph::NodeId id);

// True when `n` is op `op` in the ai.onnx domain.
bool IsOp(const graph::Node& n, const char* op);

// The dims of `v` a rule decides on, as ORT's transformers read NodeArg::Shape(): ORT's view
// (Value::ort_shape) when the graph has one, else the bound shape; nullptr when that rank is
// unknown.
const std::vector<int64_t>* DecisionDims(const graph::Graph& g, const graph::Value& v);

// Element type of `value` (ONNX number), 0 when unknown.
int32_t ElemType(const graph::Graph& g, const std::string& value);

// Fuses `consumer` into `anchor`: anchor takes consumer's outputs, records consumer's op in
// fused_ops (when `record_op`) and its source nodes; consumer is removed.
void AbsorbConsumer(graph::Graph& g, graph::NodeId anchor, graph::NodeId consumer, bool record_op);

// Removes node `id` (an identity in effect: Dropout at inference, a Cast to its own type) and
// points every use of its first output at its first input.
void BypassNode(graph::Graph& g, graph::NodeId id);

}  // namespace hase::kernels::rules
