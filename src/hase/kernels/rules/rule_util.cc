#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

graph::NodeId LoneConsumer(const graph::Graph& g, graph::NodeId id) {
  const graph::Node& n = g.node(id);
  if (n.outputs.empty() || n.outputs[0].empty()) return graph::kNoNode;
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (!n.outputs[i].empty() && (!g.Consumers(n.outputs[i]).empty() || g.IsGraphOutput(n.outputs[i]))) {
      return graph::kNoNode;
    }
  }
  if (g.IsGraphOutput(n.outputs[0])) return graph::kNoNode;
  const auto c = g.Consumers(n.outputs[0]);
  if (c.size() != 1) return graph::kNoNode;
  // The consumer must read the value once (Mul(x, x) is two edges in ORT).
  int uses = 0;
  for (const auto& in : g.node(c[0]).inputs) uses += in == n.outputs[0];
  return uses == 1 ? c[0] : graph::kNoNode;
}

bool IsOp(const graph::Node& n, const char* op) {
  return !n.removed && n.domain.empty() && n.op_type == op;
}

const std::vector<int64_t>* DecisionDims(const graph::Graph& g, const graph::Value& v) {
  if (g.has_ort_view()) return v.ort_shape ? &*v.ort_shape : nullptr;
  return v.has_shape ? &v.shape : nullptr;
}

int32_t ElemType(const graph::Graph& g, const std::string& value) {
  const graph::Value* v = g.FindValue(value);
  return v ? v->elem_type : 0;
}

void AbsorbConsumer(graph::Graph& g, graph::NodeId anchor, graph::NodeId consumer, bool record_op) {
  const graph::Node c = g.node(consumer);
  g.RemoveNode(consumer);
  graph::Node& a = g.mutable_node(anchor);
  if (record_op) {
    a.fused_ops.push_back(c.op_type);
    a.fused_ops.insert(a.fused_ops.end(), c.fused_ops.begin(), c.fused_ops.end());
  }
  a.source_nodes.insert(a.source_nodes.end(), c.source_nodes.begin(), c.source_nodes.end());
  g.SetOutputs(anchor, c.outputs);
}

void BypassNode(graph::Graph& g, graph::NodeId id) {
  const std::string x = g.node(id).inputs[0];
  const std::string y = g.node(id).outputs[0];
  g.RemoveNode(id);
  g.ReplaceUses(y, x);
}

}  // namespace hase::kernels::rules
