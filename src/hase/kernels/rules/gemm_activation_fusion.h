// GemmActivationFusion: Gemm followed by an activation becomes FusedGemm (com.microsoft).
// Mirrors ORT's GemmActivationFusion (onnxruntime/core/optimizer/gemm_activation_fusion.cc),
// level 2, CPU execution provider only — on CUDA, Gemm + Relu stay two kernels (VGG's
// classifier: 3 Gemm + 2 Relu, ../shared/REFERENCE.md).
// Pattern: Gemm → act, act ∈ {Elu, HardSigmoid, LeakyRelu, Relu, Selu, Sigmoid, Softplus,
// Softsign, Tanh}. Conditions: Gemm in ai.onnx with float input; its output has the activation
// as lone consumer and is not a graph output. Effect: op_type "FusedGemm", fused_ops {act},
// attribute activation = act.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/gemm_activation_fusion.cc:L23-L38
//   (IsFusableActivation), :L41-L103 (GemmActivationFusion::ApplyImpl: Gemm 7/9/11/13, float
//   output only at L61, lone consumer on the same EP → FusedGemm); registered at level 2 for the
//   CPU EP only at graph_transformer_utils.cc:L337. Differs: v1.21.0 also fuses ThresholdedRelu
//   (and ScaledTanh, ParametricSoftplus), which hase leaves as separate kernels. The pinned
//   tag's text was not read (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct GemmActivationFound {
  graph::NodeId gemm;
  graph::NodeId activation;
};

class GemmActivationFusion : public RewriteRule<GemmActivationFound> {
 public:
  std::string Name() const override { return "GemmActivationFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Gemm"}; }

 protected:
  std::optional<GemmActivationFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const GemmActivationFound& f) const override;
};

}  // namespace hase::kernels::rules
