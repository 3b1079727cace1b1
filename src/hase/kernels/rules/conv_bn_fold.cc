#include "hase/kernels/rules/conv_bn_fold.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<ConvBnFound> ConvBnFold::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& conv = g.node(id);
  if (!IsOp(conv, "Conv") || conv.inputs.size() < 2) return std::nullopt;
  const graph::NodeId bn = LoneConsumer(g, id);
  if (bn == graph::kNoNode || !IsOp(g.node(bn), "BatchNormalization")) return std::nullopt;
  const graph::Node& b = g.node(bn);
  if (b.inputs.size() != 5 || b.inputs[0] != conv.outputs[0]) return std::nullopt;
  for (int i = 1; i < 5; ++i) {
    if (!g.IsConstant(b.inputs[i])) return std::nullopt;
  }
  if (!g.IsConstant(conv.inputs[1])) return std::nullopt;
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !g.IsConstant(conv.inputs[2])) {
    return std::nullopt;
  }
  for (size_t i = 1; i < b.outputs.size(); ++i) {
    if (!b.outputs[i].empty() && !g.Consumers(b.outputs[i]).empty()) return std::nullopt;
  }
  return ConvBnFound{id, bn};
}

RuleEffect ConvBnFold::Apply(graph::Graph& g, const ConvBnFound& f) const {
  const graph::Node& conv = g.node(f.conv);
  std::vector<std::string> ins = conv.inputs;
  if (ins.size() < 3 || ins[2].empty()) {
    // The folded shift becomes Conv's bias: [Cout] of W's dtype.
    const graph::Value* w = g.FindValue(ins[1]);
    graph::Value bias;
    bias.name = conv.name + "_bn_folded_bias";
    bias.elem_type = w ? w->elem_type : 1;
    bias.has_shape = true;
    bias.shape = {w && w->has_shape && !w->shape.empty() ? w->shape[0] : -1};
    bias.ort_shape = bias.shape;
    bias.is_initializer = true;
    ins.resize(3);
    ins[2] = bias.name;
    g.SetValue(std::move(bias));
    g.SetInputs(f.conv, std::move(ins));
  }
  const std::vector<std::string> bn_out = {g.node(f.bn).outputs[0]};
  AbsorbConsumer(g, f.conv, f.bn, /*record_op=*/false);
  g.SetOutputs(f.conv, bn_out);
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
