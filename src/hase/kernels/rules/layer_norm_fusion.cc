#include "hase/kernels/rules/layer_norm_fusion.h"

#include <algorithm>

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

// The operand of binary `n` that is not `one`, or "" when `one` is not an operand.
std::string Other(const graph::Node& n, const std::string& one) {
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == one) return n.inputs[1];
  if (n.inputs[1] == one) return n.inputs[0];
  return "";
}

std::optional<double> Scalar(const graph::Graph& g, const std::string& name) {
  const graph::Value* v = g.FindValue(name);
  if (!v || !v->is_initializer || !v->constant || v->constant->size() != 1) return std::nullopt;
  return (*v->constant)[0];
}

// Normalised axes of a ReduceMean over a rank-`rank` input (attribute, opset ≤ 17), sorted.
std::optional<std::vector<int64_t>> Axes(const graph::Node& n, int64_t rank) {
  if (n.inputs.size() != 1 || n.IntAttr("keepdims", 1) != 1) return std::nullopt;
  std::vector<int64_t> a = n.IntsAttr("axes");
  if (a.empty()) return std::nullopt;
  for (int64_t& x : a) x = x < 0 ? x + rank : x;
  std::sort(a.begin(), a.end());
  return a;
}

// ORT's supported_data_types (layer_norm_fusion.cc:L16): float16, float, double, bfloat16.
bool SupportedType(int32_t t, bool level1) {
  if (!level1) return t == 1;  // hase's level 2: float only (header)
  return t == 10 || t == 1 || t == 11 || t == 16;
}

// ORT's IsSupportedDataType (L20-L33): the first `first_n` inputs of `n` (all when -1).
bool SupportedInputs(const graph::Graph& g, const graph::Node& n, bool level1, int first_n = -1) {
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (first_n >= 0 && static_cast<int>(i) >= first_n) break;
    if (!SupportedType(ElemType(g, n.inputs[i]), level1)) return false;
  }
  return true;
}

graph::NodeId Lone(const graph::Graph& g, graph::NodeId id, const char* op) {
  const graph::NodeId c = LoneConsumer(g, id);
  return c != graph::kNoNode && IsOp(g.node(c), op) ? c : graph::kNoNode;
}

}  // namespace

std::optional<LayerNormFound> LayerNormFusion::Match(const graph::Graph& g,
                                                     graph::NodeId id) const {
  // L141-L153: LayerNormalization is a standard op from opset 17, so the level-1 instance fuses
  // there and the level-2 one only below.
  const bool level1 = level_ == Level::kBasic;
  if (level_ != Level::kExtendedOnly && level1 != (g.opset() >= 17)) return std::nullopt;
  const graph::Node& mean = g.node(id);
  if (!IsOp(mean, "ReduceMean") || mean.inputs.size() != 1) return std::nullopt;
  LayerNormFound f;
  f.mean = id;
  f.x = mean.inputs[0];
  const graph::Value* xv = g.FindValue(f.x);
  if (!xv || !xv->shape_known() || !SupportedInputs(g, mean, level1, 1)) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(xv->shape.size());
  const auto axes = Axes(mean, rank);
  if (!axes) return std::nullopt;
  for (size_t i = 0; i < axes->size(); ++i) {
    if ((*axes)[i] != rank - static_cast<int64_t>(axes->size()) + static_cast<int64_t>(i)) {
      return std::nullopt;  // trailing, contiguous
    }
  }
  if (axes->size() != 1) return std::nullopt;  // L420-L423: scale as 1-D
  f.axis = (*axes)[0];
  const graph::NodeId sub = Lone(g, id, "Sub");
  if (sub == graph::kNoNode || g.node(sub).inputs[0] != f.x ||
      g.node(sub).inputs[1] != mean.outputs[0]) {
    return std::nullopt;
  }
  // Sub feeds Pow and Div.
  const std::string& d = g.node(sub).outputs[0];
  if (g.IsGraphOutput(d)) return std::nullopt;
  const auto users = g.Consumers(d);
  if (users.size() != 2) return std::nullopt;
  graph::NodeId pow = graph::kNoNode, div = graph::kNoNode;
  for (graph::NodeId u : users) {
    if (IsOp(g.node(u), "Pow") && g.node(u).inputs[0] == d) pow = u;
    if (IsOp(g.node(u), "Div") && g.node(u).inputs[0] == d) div = u;
  }
  if (pow == graph::kNoNode || div == graph::kNoNode) return std::nullopt;
  if (Scalar(g, g.node(pow).inputs[1]) != 2.0) return std::nullopt;
  const graph::NodeId mean2 = Lone(g, pow, "ReduceMean");
  if (mean2 == graph::kNoNode || Axes(g.node(mean2), rank) != axes) return std::nullopt;
  const graph::NodeId add_eps = Lone(g, mean2, "Add");
  if (add_eps == graph::kNoNode) return std::nullopt;
  if (Other(g.node(add_eps), g.node(mean2).outputs[0]).empty()) return std::nullopt;
  // L477-L487: ε is the Add's input 1 when that is a float constant, else ORT's default.
  const std::string& eps_name = g.node(add_eps).inputs[1];
  const auto eps = ElemType(g, eps_name) == 1 ? Scalar(g, eps_name) : std::nullopt;
  f.epsilon = eps ? static_cast<float>(*eps) : 1e-5f;
  const graph::NodeId sqrt = Lone(g, add_eps, "Sqrt");
  if (sqrt == graph::kNoNode || LoneConsumer(g, sqrt) != div ||
      g.node(div).inputs[1] != g.node(sqrt).outputs[0]) {
    return std::nullopt;
  }
  const graph::NodeId mul = Lone(g, div, "Mul");
  if (mul == graph::kNoNode) return std::nullopt;
  f.scale = Other(g.node(mul), g.node(div).outputs[0]);
  const graph::NodeId add_bias = Lone(g, mul, "Add");
  if (add_bias == graph::kNoNode) return std::nullopt;
  f.bias = Other(g.node(add_bias), g.node(mul).outputs[0]);
  const std::vector<int64_t> normalised(xv->shape.begin() + f.axis, xv->shape.end());
  for (const std::string& c : {f.scale, f.bias}) {
    const graph::Value* v = g.FindValue(c);
    if (!v || !g.IsConstant(c) || v->shape != normalised) return std::nullopt;
  }
  f.rest = {sub, pow, mean2, add_eps, sqrt, div, mul, add_bias};
  for (graph::NodeId n : f.rest) {
    if (!SupportedInputs(g, g.node(n), level1, IsOp(g.node(n), "ReduceMean") ? 1 : -1)) {
      return std::nullopt;
    }
  }
  return f;
}

RuleEffect LayerNormFusion::Apply(graph::Graph& g, const LayerNormFound& f) const {
  const std::vector<std::string> outputs = g.node(f.rest.back()).outputs;
  for (graph::NodeId n : f.rest) {
    const std::vector<std::string> src = g.node(n).source_nodes;
    g.RemoveNode(n);
    graph::Node& m = g.mutable_node(f.mean);
    m.source_nodes.insert(m.source_nodes.end(), src.begin(), src.end());
  }
  g.SetInputs(f.mean, {f.x, f.scale, f.bias});
  g.SetOutputs(f.mean, outputs);
  graph::Node& n = g.mutable_node(f.mean);
  n.op_type = "LayerNormalization";
  n.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  n.attributes.clear();
  n.attributes["axis"] = graph::Attribute::Int(f.axis);
  n.attributes["epsilon"] = graph::Attribute::Float(f.epsilon);
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
