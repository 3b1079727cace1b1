#include "hase/kernels/rules/quick_gelu_fusion.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<QuickGeluFound> QuickGeluFusion::Match(const graph::Graph& g,
                                                     graph::NodeId id) const {
  const graph::Node& sig = g.node(id);
  if (!IsOp(sig, "Sigmoid") || sig.inputs.size() != 1) return std::nullopt;
  const int32_t t = ElemType(g, sig.inputs[0]);
  if (t != 1 && !(allow_float16_ && t == 10)) return std::nullopt;
  QuickGeluFound f;
  f.sigmoid = id;
  f.x = sig.inputs[0];
  // Optional Mul(x, α) in front.
  const graph::NodeId p = g.Producer(sig.inputs[0]);
  if (p != graph::kNoNode && IsOp(g.node(p), "Mul") && g.node(p).inputs.size() == 2 &&
      LoneConsumer(g, p) == id) {
    const graph::Node& am = g.node(p);
    for (int i = 0; i < 2; ++i) {
      const graph::Value* c = g.FindValue(am.inputs[i]);
      if (c && c->is_initializer && c->constant && c->constant->size() == 1) {
        f.alpha_mul = p;
        f.alpha = static_cast<float>((*c->constant)[0]);
        f.x = am.inputs[1 - i];
      }
    }
  }
  const graph::NodeId mul = LoneConsumer(g, id);
  if (mul == graph::kNoNode || !IsOp(g.node(mul), "Mul") || g.node(mul).inputs.size() != 2) {
    return std::nullopt;
  }
  const graph::Node& m = g.node(mul);
  const std::string& other = m.inputs[0] == sig.outputs[0] ? m.inputs[1] : m.inputs[0];
  if (other != f.x) return std::nullopt;
  f.mul = mul;
  return f;
}

RuleEffect QuickGeluFusion::Apply(graph::Graph& g, const QuickGeluFound& f) const {
  if (f.alpha_mul != graph::kNoNode) {
    const graph::Node am = g.node(f.alpha_mul);
    g.RemoveNode(f.alpha_mul);
    graph::Node& s = g.mutable_node(f.sigmoid);
    s.source_nodes.insert(s.source_nodes.begin(), am.source_nodes.begin(), am.source_nodes.end());
  }
  g.SetInputs(f.sigmoid, {f.x});
  AbsorbConsumer(g, f.sigmoid, f.mul, /*record_op=*/false);
  graph::Node& s = g.mutable_node(f.sigmoid);
  s.op_type = "QuickGelu";
  s.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  s.domain = "com.microsoft";
  s.attributes["alpha"] = graph::Attribute::Float(f.alpha);
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
