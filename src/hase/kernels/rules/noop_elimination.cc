#include "hase/kernels/rules/noop_elimination.h"

#include <algorithm>
#include <iterator>

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<NoopFound> NoopElimination::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& n = g.node(id);
  if (!n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  const bool c0 = g.IsConstant(n.inputs[0]);
  const bool c1 = g.IsConstant(n.inputs[1]);
  if (c0 == c1) return std::nullopt;
  const bool sub_or_div = n.op_type == "Sub" || n.op_type == "Div";
  if (sub_or_div && !c1) return std::nullopt;
  const graph::Value* c = g.FindValue(n.inputs[c0 ? 0 : 1]);
  const graph::Value* x = g.FindValue(n.inputs[c0 ? 1 : 0]);
  if (c == nullptr || x == nullptr || !c->has_shape) return std::nullopt;
  const std::vector<int64_t>* x_dims = DecisionDims(g, *x);
  if (x_dims == nullptr || c->shape.size() > x_dims->size()) return std::nullopt;
  int64_t size = 1;  // 0 or 1: any dim above 1 disqualifies
  for (int64_t d : c->shape) {
    if (d > 1 || d < 0) return std::nullopt;
    size *= d;
  }
  if (size == 1) {
    static const int32_t kTypes[] = {1, 10, 11, 6, 7};  // float, float16, double, int32, int64
    if (std::find(std::begin(kTypes), std::end(kTypes), c->elem_type) == std::end(kTypes) ||
        !c->constant || c->constant->size() != 1) {
      return std::nullopt;
    }
    const double v = (*c->constant)[0];
    const bool additive = n.op_type == "Add" || n.op_type == "Sub";
    if (v != (additive ? 0.0 : 1.0)) return std::nullopt;
  }
  // CanRemoveNode: the node's one input edge comes from a node (x is no graph input).
  if (g.IsGraphOutput(n.outputs[0]) || g.Producer(x->name) == graph::kNoNode) return std::nullopt;
  return NoopFound{id, n.inputs[c0 ? 1 : 0]};
}

RuleEffect NoopElimination::Apply(graph::Graph& g, const NoopFound& f) const {
  const std::string y = g.node(f.node).outputs[0];
  g.RemoveNode(f.node);
  g.ReplaceUses(y, f.x);
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
