#include "hase/kernels/rules/reshape_fusion.h"

#include <algorithm>

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

// Values of a constant integer tensor, or nullopt.
std::optional<std::vector<int64_t>> ConstInts(const graph::Graph& g, const std::string& name) {
  const graph::Value* v = g.FindValue(name);
  if (v == nullptr || !v->is_initializer || !v->constant) return std::nullopt;
  if (v->elem_type != 7 && v->elem_type != 6) return std::nullopt;  // int64, int32
  std::vector<int64_t> out;
  for (double d : *v->constant) out.push_back(static_cast<int64_t>(d));
  return out;
}

// The live producer of `name` when it is op `op` whose output 0 is read by one node only.
graph::NodeId SingleUseProducer(const graph::Graph& g, const std::string& name, const char* op) {
  const graph::NodeId p = g.Producer(name);
  if (p == graph::kNoNode || !IsOp(g.node(p), op) || g.node(p).outputs[0] != name) {
    return graph::kNoNode;
  }
  return LoneConsumer(g, p) == graph::kNoNode ? graph::kNoNode : p;
}

}  // namespace

std::optional<ReshapeFound> ReshapeFusion::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& reshape = g.node(id);
  if (!IsOp(reshape, "Reshape") || reshape.inputs.size() < 2) return std::nullopt;
  const std::string& x = reshape.inputs[0];
  const graph::NodeId c = SingleUseProducer(g, reshape.inputs[1], "Concat");
  if (c == graph::kNoNode || g.node(c).IntAttr("axis", 0) != 0) return std::nullopt;
  ReshapeFound f{id, c, {}, {}};
  for (const std::string& in : g.node(c).inputs) {
    if (auto values = ConstInts(g, in)) {
      f.target.insert(f.target.end(), values->begin(), values->end());
      continue;
    }
    // Unsqueeze(axes [0]) ← Gather(j, axis 0) ← Shape(X), j = this output position.
    const graph::NodeId u = SingleUseProducer(g, in, "Unsqueeze");
    if (u == graph::kNoNode) return std::nullopt;
    const graph::Node& un = g.node(u);
    std::vector<int64_t> axes = un.IntsAttr("axes");
    if (un.inputs.size() > 1) {
      auto a = ConstInts(g, un.inputs[1]);
      if (!a) return std::nullopt;
      axes = *a;
    }
    if (axes != std::vector<int64_t>{0}) return std::nullopt;
    const graph::NodeId ga = SingleUseProducer(g, un.inputs[0], "Gather");
    if (ga == graph::kNoNode || g.node(ga).IntAttr("axis", 0) != 0) return std::nullopt;
    const graph::Node& gn = g.node(ga);
    const graph::Value* idx = g.FindValue(gn.inputs[1]);
    auto j = ConstInts(g, gn.inputs[1]);
    if (!idx || !j || j->size() != 1 || !idx->shape.empty()) return std::nullopt;  // scalar
    const graph::NodeId s = SingleUseProducer(g, gn.inputs[0], "Shape");
    if (s == graph::kNoNode || g.node(s).inputs[0] != x || !g.node(s).attributes.empty()) {
      return std::nullopt;
    }
    if ((*j)[0] != static_cast<int64_t>(f.target.size())) return std::nullopt;
    f.target.push_back(0);
    f.shape_path.insert(f.shape_path.end(), {u, ga, s});
  }
  if (f.shape_path.empty() || std::count(f.target.begin(), f.target.end(), -1) > 1) {
    return std::nullopt;
  }
  return f;
}

RuleEffect ReshapeFusion::Apply(graph::Graph& g, const ReshapeFound& f) const {
  const std::string shape_name = g.node(f.concat).outputs[0];
  graph::Value v;
  if (const graph::Value* old = g.FindValue(shape_name)) v = *old;
  v.name = shape_name;
  v.elem_type = 7;
  v.has_shape = true;
  v.shape = {static_cast<int64_t>(f.target.size())};
  v.is_initializer = true;
  v.constant = std::vector<double>(f.target.begin(), f.target.end());
  g.RemoveNode(f.concat);
  for (graph::NodeId n : f.shape_path) g.RemoveNode(n);
  g.SetValue(std::move(v));
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
