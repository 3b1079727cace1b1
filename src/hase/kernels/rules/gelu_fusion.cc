#include "hase/kernels/rules/gelu_fusion.h"

#include <cmath>

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

bool IsFloatType(int32_t t) { return t == 1 || t == 10 || t == 11; }

// True when `name` is a one-element constant within 1e-5 of `want`.
bool ConstNear(const graph::Graph& g, const std::string& name, double want) {
  const graph::Value* v = g.FindValue(name);
  return v != nullptr && v->is_initializer && v->constant && v->constant->size() == 1 &&
         std::abs((*v->constant)[0] - want) < 1e-5;
}

// The operand of binary `n` that is not `one`, or "" when `one` is not an operand.
std::string Other(const graph::Node& n, const std::string& one) {
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == one) return n.inputs[1];
  if (n.inputs[1] == one) return n.inputs[0];
  return "";
}

}  // namespace

std::optional<GeluFound> GeluFusion::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& head = g.node(id);
  if (head.inputs.size() != 2 || !IsFloatType(ElemType(g, head.inputs[0]))) return std::nullopt;
  const bool is_div = IsOp(head, "Div") && ConstNear(g, head.inputs[1], M_SQRT2);
  const bool is_mul = IsOp(head, "Mul") && (ConstNear(g, head.inputs[1], M_SQRT1_2) ||
                                            ConstNear(g, head.inputs[0], M_SQRT1_2));
  if (!is_div && !is_mul) return std::nullopt;
  GeluFound f{id, {}, ""};
  f.x = is_div || ConstNear(g, head.inputs[1], M_SQRT1_2) ? head.inputs[0] : head.inputs[1];
  const graph::NodeId erf = LoneConsumer(g, id);
  if (erf == graph::kNoNode || !IsOp(g.node(erf), "Erf")) return std::nullopt;
  const graph::NodeId add = LoneConsumer(g, erf);
  if (add == graph::kNoNode || !IsOp(g.node(add), "Add") ||
      !ConstNear(g, Other(g.node(add), g.node(erf).outputs[0]), 1.0)) {
    return std::nullopt;
  }
  const graph::NodeId mul = LoneConsumer(g, add);
  if (mul == graph::kNoNode || !IsOp(g.node(mul), "Mul")) return std::nullopt;
  const std::string other = Other(g.node(mul), g.node(add).outputs[0]);
  f.rest = {erf, add, mul};
  if (other == f.x) {  // torch: Mul(x, 1 + erf) → Mul(·, 0.5)
    const graph::NodeId half = LoneConsumer(g, mul);
    if (half == graph::kNoNode || !IsOp(g.node(half), "Mul") ||
        !ConstNear(g, Other(g.node(half), g.node(mul).outputs[0]), 0.5)) {
      return std::nullopt;
    }
    f.rest.push_back(half);
    return f;
  }
  // Mul(1 + erf, Mul(x, 0.5)): the half-Mul feeds only this Mul.
  const graph::NodeId half = g.Producer(other);
  if (half == graph::kNoNode || !IsOp(g.node(half), "Mul") || LoneConsumer(g, half) != mul ||
      !ConstNear(g, Other(g.node(half), f.x), 0.5)) {
    return std::nullopt;
  }
  f.rest.insert(f.rest.begin() + 2, half);
  return f;
}

RuleEffect GeluFusion::Apply(graph::Graph& g, const GeluFound& f) const {
  g.SetInputs(f.head, {f.x});
  const graph::Node last = g.node(f.rest.back());
  for (graph::NodeId n : f.rest) {
    const graph::Node c = g.node(n);
    g.RemoveNode(n);
    graph::Node& h = g.mutable_node(f.head);
    h.source_nodes.insert(h.source_nodes.end(), c.source_nodes.begin(), c.source_nodes.end());
  }
  g.SetOutputs(f.head, last.outputs);
  graph::Node& h = g.mutable_node(f.head);
  h.op_type = "Gelu";
  h.domain = "com.microsoft";
  h.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  h.attributes.clear();
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
