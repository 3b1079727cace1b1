#include "hase/kernels/rules/constant_folding.h"

#include <set>

namespace hase::kernels::rules {

std::optional<graph::NodeId> ConstantFolding::Match(const graph::Graph& g,
                                                    graph::NodeId id) const {
  static const std::set<std::string> kNonDeterministic = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
      "Bernoulli"};
  const graph::Node& n = g.node(id);
  if (n.removed || !n.domain.empty() || n.inputs.empty() || kNonDeterministic.count(n.op_type)) {
    return std::nullopt;
  }
  bool any = false;
  for (const std::string& in : n.inputs) {
    if (in.empty()) continue;
    if (!g.IsConstant(in)) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  for (const std::string& out : n.outputs) {
    if (!out.empty() && g.IsGraphOutput(out)) return std::nullopt;
  }
  return id;
}

RuleEffect ConstantFolding::Apply(graph::Graph& g, const graph::NodeId& id) const {
  const graph::Node n = g.node(id);
  g.RemoveNode(id);
  for (const std::string& out : n.outputs) {
    if (out.empty()) continue;
    graph::Value v;
    if (const graph::Value* old = g.FindValue(out)) v = *old;
    v.name = out;
    v.is_initializer = true;
    // An Identity of a constant keeps its values.
    if (n.op_type == "Identity" && !v.constant) {
      if (const graph::Value* src = g.FindValue(n.inputs[0])) v.constant = src->constant;
    }
    g.SetValue(std::move(v));
  }
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
