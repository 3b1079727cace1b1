#include "hase/kernels/rules/conv_add_fusion.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<ConvAddFound> ConvAddFusion::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& conv = g.node(id);
  if (!IsOp(conv, "Conv") || conv.inputs.size() < 2 || !g.IsConstant(conv.inputs[1])) {
    return std::nullopt;
  }
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !g.IsConstant(conv.inputs[2])) {
    return std::nullopt;
  }
  const graph::NodeId add = LoneConsumer(g, id);
  if (add == graph::kNoNode || !IsOp(g.node(add), "Add")) return std::nullopt;
  const graph::Node& a = g.node(add);
  if (a.inputs.size() != 2) return std::nullopt;
  const std::string& c = a.inputs[0] == conv.outputs[0] ? a.inputs[1] : a.inputs[0];
  if (!g.IsConstant(c)) return std::nullopt;
  const graph::Value* cv = g.FindValue(c);
  const graph::Value* w = g.FindValue(conv.inputs[1]);
  const graph::Value* y = g.FindValue(conv.outputs[0]);
  if (!cv || !w || !y || !cv->shape_known() || !w->shape_known() || !y->has_shape) {
    return std::nullopt;
  }
  const int64_t cout = w->shape[0];
  const size_t spatial = y->shape.size() - 2;
  // [Cout, 1, …] with `spatial` trailing 1s, optionally preceded by a leading 1.
  std::vector<int64_t> dims = cv->shape;
  if (dims.size() == spatial + 2) {
    if (dims[0] != 1) return std::nullopt;
    dims.erase(dims.begin());
  }
  if (dims.size() != spatial + 1 || dims[0] != cout) return std::nullopt;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] != 1) return std::nullopt;
  }
  return ConvAddFound{id, add, c};
}

RuleEffect ConvAddFusion::Apply(graph::Graph& g, const ConvAddFound& f) const {
  std::vector<std::string> ins = g.node(f.conv).inputs;
  if (ins.size() < 3 || ins[2].empty()) {
    ins.resize(3);
    ins[2] = f.constant;
    g.SetInputs(f.conv, std::move(ins));
  }
  AbsorbConsumer(g, f.conv, f.add, /*record_op=*/false);
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
