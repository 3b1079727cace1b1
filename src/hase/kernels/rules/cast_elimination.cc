#include "hase/kernels/rules/cast_elimination.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<graph::NodeId> CastElimination::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& n = g.node(id);
  if (!IsOp(n, "Cast") || n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
  const std::string& x = n.inputs[0];
  const std::string& y = n.outputs[0];
  if (x.empty() || y.empty() || g.IsGraphOutput(y)) return std::nullopt;
  const int32_t from = ElemType(g, x);
  if (from == 0 || n.IntAttr("to", -1) != from) return std::nullopt;
  return id;
}

RuleEffect CastElimination::Apply(graph::Graph& g, const graph::NodeId& id) const {
  BypassNode(g, id);
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
