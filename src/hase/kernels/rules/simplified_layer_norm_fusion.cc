#include "hase/kernels/rules/simplified_layer_norm_fusion.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

graph::NodeId Lone(const graph::Graph& g, graph::NodeId id, const char* op) {
  const graph::NodeId c = LoneConsumer(g, id);
  return c != graph::kNoNode && IsOp(g.node(c), op) ? c : graph::kNoNode;
}

// float, double, bfloat16; float16 where allowed.
bool FloatType(int32_t t, bool allow_float16) {
  return t == 1 || t == 11 || t == 16 || (allow_float16 && t == 10);
}

}  // namespace

std::optional<SimplifiedLayerNormFound> SimplifiedLayerNormFusion::Match(const graph::Graph& g,
                                                                         graph::NodeId id) const {
  const graph::Node& pow = g.node(id);
  if (!IsOp(pow, "Pow") || pow.inputs.size() != 2) return std::nullopt;
  SimplifiedLayerNormFound f;
  f.x = pow.inputs[0];
  if (!FloatType(ElemType(g, f.x), allow_float16_)) return std::nullopt;
  const graph::NodeId mean = Lone(g, id, "ReduceMean");
  if (mean == graph::kNoNode) return std::nullopt;
  const graph::NodeId add = Lone(g, mean, "Add");
  if (add == graph::kNoNode) return std::nullopt;
  const graph::NodeId sqrt = Lone(g, add, "Sqrt");
  if (sqrt == graph::kNoNode) return std::nullopt;
  const graph::NodeId div = Lone(g, sqrt, "Div");
  if (div == graph::kNoNode || g.node(div).inputs[0] != f.x) return std::nullopt;
  f.mul = Lone(g, div, "Mul");
  if (f.mul == graph::kNoNode) return std::nullopt;
  // One reduced axis, the last (CheckAxesOnReduceMean; scale must be 1-D).
  const graph::Node& m = g.node(mean);
  std::vector<int64_t> axes = m.IntsAttr("axes");
  if (axes.size() != 1) return std::nullopt;
  const graph::Value* xv = g.FindValue(f.x);
  if (!xv || !xv->has_shape) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xv->shape.size());
  if (axes[0] != -1 && axes[0] != rank - 1) return std::nullopt;
  f.axis = axes[0];
  for (const std::string& in : g.node(f.mul).inputs) {
    const graph::Value* v = g.FindValue(in);
    if (v && v->has_shape && v->shape.size() == 1) f.scale = in;
  }
  if (f.scale.empty()) return std::nullopt;
  const graph::Node& a = g.node(add);
  if (a.inputs.size() == 2) {
    const graph::Value* e = g.FindValue(a.inputs[1]);
    if (e && e->is_initializer && e->elem_type == 1 && e->constant && !e->constant->empty()) {
      f.epsilon = static_cast<float>((*e->constant)[0]);
    }
  }
  f.chain = {id, mean, add, sqrt, div};
  return f;
}

RuleEffect SimplifiedLayerNormFusion::Apply(graph::Graph& g,
                                            const SimplifiedLayerNormFound& f) const {
  std::vector<std::string> sources;
  for (graph::NodeId n : f.chain) {
    const std::vector<std::string>& s = g.node(n).source_nodes;
    sources.insert(sources.end(), s.begin(), s.end());
    g.RemoveNode(n);
  }
  g.SetInputs(f.mul, {f.x, f.scale});
  graph::Node& n = g.mutable_node(f.mul);
  n.op_type = "SimplifiedLayerNormalization";
  n.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  n.source_nodes.insert(n.source_nodes.begin(), sources.begin(), sources.end());
  n.attributes.clear();
  n.attributes["axis"] = graph::Attribute::Int(f.axis);
  n.attributes["epsilon"] = graph::Attribute::Float(f.epsilon);
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
