#include "hase/kernels/rules/gemm_activation_fusion.h"

#include <set>

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<GemmActivationFound> GemmActivationFusion::Match(const graph::Graph& g,
                                                               graph::NodeId id) const {
  static const std::set<std::string> kActivations = {
      "Elu", "HardSigmoid", "LeakyRelu", "Relu", "Selu", "Sigmoid", "Softplus", "Softsign", "Tanh"};
  const graph::Node& gemm = g.node(id);
  if (!IsOp(gemm, "Gemm") || gemm.inputs.empty() || ElemType(g, gemm.inputs[0]) != 1) {
    return std::nullopt;
  }
  const graph::NodeId act = LoneConsumer(g, id);
  if (act == graph::kNoNode) return std::nullopt;
  const graph::Node& a = g.node(act);
  if (!a.domain.empty() || !kActivations.count(a.op_type)) return std::nullopt;
  return GemmActivationFound{id, act};
}

RuleEffect GemmActivationFusion::Apply(graph::Graph& g, const GemmActivationFound& f) const {
  const std::string act = g.node(f.activation).op_type;
  AbsorbConsumer(g, f.gemm, f.activation, /*record_op=*/true);
  graph::Node& gemm = g.mutable_node(f.gemm);
  gemm.op_type = "FusedGemm";
  gemm.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  gemm.domain = "com.microsoft";
  gemm.attributes["activation"] = graph::Attribute::Str(act);
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
