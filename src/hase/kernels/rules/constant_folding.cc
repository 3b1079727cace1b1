#include "hase/kernels/rules/constant_folding.h"

#include <algorithm>
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
  for (const std::string& out : n.outputs) {
    if (!out.empty() && g.IsGraphOutput(out)) return std::nullopt;
  }
  if (n.op_type == "Shape") {
    // ConstantFoldShapeNode: its input need not be constant, only its dims all known to ORT.
    const graph::Value* in = g.FindValue(n.inputs[0]);
    return in && in->ort_shape_concrete() ? std::optional(id) : std::nullopt;
  }
  bool any = false;
  for (const std::string& in : n.inputs) {
    if (in.empty()) continue;
    if (!g.IsConstant(in)) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
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
    // An Identity of a constant keeps its values; shape arithmetic gets the values ORT computes.
    if (n.op_type == "Identity" && !v.constant) {
      if (const graph::Value* src = g.FindValue(n.inputs[0])) v.constant = src->constant;
    }
    if (n.op_type == "Shape") {
      // The input's dims (all known to ORT), sliced by opset-15 start/end.
      const std::vector<int64_t>& d = *g.FindValue(n.inputs[0])->ort_shape;
      const int64_t rank = static_cast<int64_t>(d.size());
      int64_t start = n.IntAttr("start", 0), end = n.IntAttr("end", rank);
      start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
      end = std::clamp<int64_t>(end < 0 ? end + rank : end, start, rank);
      v.constant = std::vector<double>(d.begin() + start, d.begin() + end);
      v.ort_shape = std::vector<int64_t>{end - start};
    }
    if (!v.constant && v.ort_value) {
      v.constant = std::vector<double>(v.ort_value->begin(), v.ort_value->end());
    }
    if (!v.constant && v.ort_float_value) v.constant = *v.ort_float_value;
    g.SetValue(std::move(v));
  }
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
