#include "hase/kernels/rules/conv_activation_fusion.h"

#include "hase/kernels/rules/activation_params.h"
#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

ConvActivationFusion::Config ConvActivationFusion::Cuda() {
  // fp32 only: ConvFusionDataTypeCheck returns false for a non-float Conv on the CUDA EP.
  return Config{{"Relu"}, /*fuse_add_relu=*/true, /*allow_float16=*/false};
}

ConvActivationFusion::Config ConvActivationFusion::Cpu() {
  return Config{{"Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "Clip"},
                /*fuse_add_relu=*/false, /*allow_float16=*/false};
}

std::optional<ConvActivationFound> ConvActivationFusion::Match(const graph::Graph& g,
                                                               graph::NodeId id) const {
  const graph::Node& conv = g.node(id);
  if (!IsOp(conv, "Conv") || conv.inputs.empty()) return std::nullopt;
  const int32_t t = ElemType(g, conv.inputs[0]);
  if (!(t == 1 || (config_.allow_float16 && t == 10))) return std::nullopt;
  const graph::NodeId next = LoneConsumer(g, id);
  if (next == graph::kNoNode) return std::nullopt;
  const graph::Node& n = g.node(next);
  if (!n.domain.empty()) return std::nullopt;
  if (config_.activations.count(n.op_type)) {
    auto params = ActivationParams(g, n);
    if (!params) return std::nullopt;
    return ConvActivationFound{id, graph::kNoNode, "", next, *params};
  }
  if (config_.fuse_add_relu && n.op_type == "Add" && t == 1 && n.inputs.size() == 2) {
    const graph::NodeId relu = LoneConsumer(g, next);
    if (relu == graph::kNoNode || !IsOp(g.node(relu), "Relu")) return std::nullopt;
    const std::string& z = n.inputs[0] == conv.outputs[0] ? n.inputs[1] : n.inputs[0];
    return ConvActivationFound{id, next, z, relu, {}};
  }
  return std::nullopt;
}

RuleEffect ConvActivationFusion::Apply(graph::Graph& g, const ConvActivationFound& f) const {
  const std::string act = g.node(f.activation).op_type;
  if (f.add != graph::kNoNode) {
    std::vector<std::string> ins = g.node(f.conv).inputs;
    ins.resize(3);  // X, W, B ("" when absent)
    ins.push_back(f.z);
    g.SetInputs(f.conv, std::move(ins));
    AbsorbConsumer(g, f.conv, f.add, /*record_op=*/true);
  }
  AbsorbConsumer(g, f.conv, f.activation, /*record_op=*/true);
  graph::Node& conv = g.mutable_node(f.conv);
  conv.op_type = "FusedConv";
  conv.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  conv.domain = "com.microsoft";
  conv.attributes["activation"] = graph::Attribute::Str(act);
  if (!f.activation_params.empty()) {
    graph::Attribute p;
    p.kind = graph::Attribute::Kind::kFloats;
    p.floats = f.activation_params;
    conv.attributes["activation_params"] = p;
  }
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
