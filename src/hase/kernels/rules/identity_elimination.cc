#include "hase/kernels/rules/identity_elimination.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<IdentityFound> IdentityElimination::Match(const graph::Graph& g,
                                                        graph::NodeId id) const {
  const graph::Node& n = g.node(id);
  if (!IsOp(n, "Identity") || n.inputs.size() != 1 || n.outputs.size() != 1) return std::nullopt;
  const std::string& x = n.inputs[0];
  const std::string& y = n.outputs[0];
  if (x.empty() || y.empty()) return std::nullopt;
  if (!g.IsGraphOutput(y)) return IdentityFound{id, false};
  const graph::NodeId p = g.Producer(x);
  if (p == graph::kNoNode || g.IsGraphOutput(x) || g.Consumers(x).size() != 1) return std::nullopt;
  return IdentityFound{id, true};
}

RuleEffect IdentityElimination::Apply(graph::Graph& g, const IdentityFound& f) const {
  const std::string x = g.node(f.identity).inputs[0];
  const std::string y = g.node(f.identity).outputs[0];
  g.RemoveNode(f.identity);
  if (f.rename_producer) {
    const graph::NodeId p = g.Producer(x);
    std::vector<std::string> outs = g.node(p).outputs;
    for (auto& o : outs) if (o == x) o = y;
    g.SetOutputs(p, std::move(outs));
  } else {
    g.ReplaceUses(y, x);
  }
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
