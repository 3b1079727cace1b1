#include "hase/kernels/rules/not_where_fusion.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<NotWhereFound> NotWhereFusion::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& where = g.node(id);
  if (!IsOp(where, "Where") || where.inputs.size() != 3) return std::nullopt;
  const graph::NodeId p = g.Producer(where.inputs[0]);
  if (p == graph::kNoNode || !IsOp(g.node(p), "Not")) return std::nullopt;
  const std::string& out = g.node(p).outputs[0];
  if (g.IsGraphOutput(out)) return std::nullopt;
  NotWhereFound f{p, {}};
  for (graph::NodeId c : g.Consumers(out)) {
    if (!IsOp(g.node(c), "Where")) return std::nullopt;
    f.wheres.push_back(c);
  }
  return f;
}

RuleEffect NotWhereFusion::Apply(graph::Graph& g, const NotWhereFound& f) const {
  const std::string cond = g.node(f.not_node).inputs[0];
  const std::string out = g.node(f.not_node).outputs[0];
  for (graph::NodeId w : f.wheres) {
    std::vector<std::string> in = g.node(w).inputs;
    for (auto& x : in) if (x == out) x = cond;
    std::swap(in[1], in[2]);
    g.SetInputs(w, std::move(in));
  }
  g.RemoveNode(f.not_node);
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
