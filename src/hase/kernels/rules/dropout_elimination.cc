#include "hase/kernels/rules/dropout_elimination.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<graph::NodeId> DropoutElimination::Match(const graph::Graph& g,
                                                       graph::NodeId id) const {
  const graph::Node& n = g.node(id);
  if (!IsOp(n, "Dropout") || n.inputs.empty() || n.inputs[0].empty()) return std::nullopt;
  if (n.outputs.empty() || g.IsGraphOutput(n.outputs[0])) return std::nullopt;
  if (n.outputs.size() > 1 && !n.outputs[1].empty() &&
      (!g.Consumers(n.outputs[1]).empty() || g.IsGraphOutput(n.outputs[1]))) {
    return std::nullopt;
  }
  return id;
}

RuleEffect DropoutElimination::Apply(graph::Graph& g, const graph::NodeId& id) const {
  BypassNode(g, id);
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
