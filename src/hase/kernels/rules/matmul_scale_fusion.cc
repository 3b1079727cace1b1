#include "hase/kernels/rules/matmul_scale_fusion.h"

#include <cmath>

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

// The value of a one-element constant initializer of rank ≤ max_rank, if float holds it
// losslessly (GetScalarConstantInitializer).
std::optional<double> ScalarConstant(const graph::Graph& g, const std::string& name,
                                     size_t max_rank) {
  const graph::Value* v = g.FindValue(name);
  if (!v || !v->is_initializer || !v->constant || v->constant->size() != 1 || !v->has_shape ||
      v->shape.size() > max_rank) {
    return std::nullopt;
  }
  const double x = (*v->constant)[0];
  switch (v->elem_type) {
    case 1: case 10: case 16: case 11:  // float, float16, bfloat16, double
      return v->elem_type == 11 ? x : static_cast<double>(static_cast<float>(x));
    case 2: case 3: case 4: case 5: case 6: case 7: case 12: case 13:  // integers
      if (static_cast<double>(static_cast<float>(x)) != x) return std::nullopt;
      return x;
    default:
      return std::nullopt;
  }
}

size_t RankOr0(const graph::Graph& g, const std::string& name) {
  const graph::Value* v = g.FindValue(name);
  const std::vector<int64_t>* d = v ? DecisionDims(g, *v) : nullptr;
  return d ? d->size() : 0;
}

// Scale factor of a Div(x, c) / Mul(x, c) / Mul(c, x) node and the index of x (GetScaleFromNode).
std::optional<std::pair<double, int>> ScaleOf(const graph::Graph& g, const graph::Node& n) {
  if (n.inputs.size() != 2) return std::nullopt;
  if (IsOp(n, "Div")) {
    auto c = ScalarConstant(g, n.inputs[1], RankOr0(g, n.inputs[0]));
    if (!c || *c == 0) return std::nullopt;
    const bool is_double = g.FindValue(n.inputs[1])->elem_type == 11;
    const double s = is_double ? 1.0 / *c : static_cast<double>(1.0f / static_cast<float>(*c));
    return std::make_pair(s, 0);
  }
  if (IsOp(n, "Mul")) {
    for (int i = 0; i < 2; ++i) {
      if (auto c = ScalarConstant(g, n.inputs[i], RankOr0(g, n.inputs[1 - i]))) {
        return std::make_pair(*c, 1 - i);
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<MatMulScaleFound> MatMulScaleFusion::Match(const graph::Graph& g,
                                                         graph::NodeId id) const {
  const graph::Node& mm = g.node(id);
  const bool fused = !mm.removed && mm.domain == "com.microsoft" && mm.op_type == "FusedMatMul";
  if ((!IsOp(mm, "MatMul") && !fused) || mm.inputs.size() < 2 || mm.outputs.empty()) {
    return std::nullopt;
  }
  for (const std::string& in : mm.inputs) {
    const int32_t t = ElemType(g, in);
    if (t != 1 && t != 11) return std::nullopt;  // CPU EP: float, double
  }
  MatMulScaleFound f;
  f.matmul = id;
  for (int i = 0; i < 2; ++i) {
    const graph::NodeId p = g.Producer(mm.inputs[i]);
    if (p == graph::kNoNode) continue;
    auto s = ScaleOf(g, g.node(p));
    if (!s) continue;
    const std::string& x = g.node(p).inputs[s->second];
    const graph::Value* xv = g.FindValue(x);
    const std::vector<int64_t>* d = xv ? DecisionDims(g, *xv) : nullptr;
    if (!d || d->empty()) continue;  // ORT: the non-scale input's shape, rank > 0
    f.leading.push_back({p, i, x});
    f.alpha *= s->first;
  }
  // One output edge: one consumer reading it once, and not a graph output.
  const std::string& y = mm.outputs[0];
  const auto consumers = g.Consumers(y);
  if (!g.IsGraphOutput(y) && consumers.size() == 1) {
    int uses = 0;
    for (const auto& in : g.node(consumers[0]).inputs) uses += in == y;
    if (uses == 1) {
      if (auto s = ScaleOf(g, g.node(consumers[0]))) {
        f.trailing = consumers[0];
        f.alpha *= s->first;
      }
    }
  }
  if (f.leading.empty() && f.trailing == graph::kNoNode) return std::nullopt;
  return f;
}

RuleEffect MatMulScaleFusion::Apply(graph::Graph& g, const MatMulScaleFound& f) const {
  const graph::Node mm = g.node(f.matmul);
  std::vector<std::string> inputs = mm.inputs;
  for (const auto& l : f.leading) inputs[l.matmul_input] = l.x;
  g.SetInputs(f.matmul, inputs);
  std::vector<std::string> absorbed;
  for (const auto& l : f.leading) {
    const graph::Node& s = g.node(l.scale_node);
    if (s.removed || !g.Consumers(s.outputs[0]).empty() || g.IsGraphOutput(s.outputs[0])) continue;
    absorbed.insert(absorbed.end(), s.source_nodes.begin(), s.source_nodes.end());
    g.RemoveNode(l.scale_node);
  }
  if (f.trailing != graph::kNoNode) {
    AbsorbConsumer(g, f.matmul, f.trailing, /*record_op=*/false);
  }
  graph::Node& n = g.mutable_node(f.matmul);
  float alpha = 1.0f;
  if (auto it = n.attributes.find("alpha"); it != n.attributes.end() && !it->second.floats.empty()) {
    alpha = it->second.floats[0];
  }
  n.attributes["alpha"] = graph::Attribute::Float(static_cast<float>(alpha * f.alpha));
  n.op_type = "FusedMatMul";
  n.domain = "com.microsoft";
  n.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  n.source_nodes.insert(n.source_nodes.end(), absorbed.begin(), absorbed.end());
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
