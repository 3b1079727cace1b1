// SimplifiedLayerNormFusion: x / sqrt(mean(x²) + eps) · scale (RMSNorm) becomes one
// SimplifiedLayerNormalization kernel. In exported ConvNeXt blocks it appears after
// TransposeOptimizer has moved the block's Transpose between the LayerNorm's Sub and Pow: the
// mean-centring (ReduceMean, Sub) stays channels-first, the rest matches this pattern (measured
// with onnxruntime-node 1.30: 18 SimplifiedLayerNormalization + Add in ConvNeXt-Tiny).
// Mirrors ORT's SimplifiedLayerNormFusion (onnxruntime/core/optimizer/layer_norm_fusion.cc,
// SimplifiedLayerNormFusion::ApplyImpl and CheckAxesOnReduceMean, in a recent version stored by
// the source index, which records no release tags; checked against onnxruntime-node 1.30.0 on
// ConvNeXt-Tiny and tests/kernels/front_end_cases_test.cc), level 2, CPU/CUDA/ROCm EPs
// (registered after LayerNormFusion in graph_transformer_utils.cc, GenerateTransformers).
// Pattern: Pow(X, ·) → ReduceMean → Add → Sqrt → Div(X, ·) → Mul(·, scale).
// Conditions: float/double (fp16 X is not fused on the CPU EP; the Cast variants are CUDA-only
// and not handled); Pow, ReduceMean, Add, Sqrt, Div each have one consumer and Pow is not a
// graph output; Div's first input is Pow's first input; the ReduceMean reduces one axis, the
// last; some Mul input is 1-D (the scale; it need not be constant).
// Effect: the Mul becomes SimplifiedLayerNormalization(X, scale){axis, epsilon} (a fresh node in
// ORT); the other five nodes are removed.
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct SimplifiedLayerNormFound {
  std::vector<graph::NodeId> chain;  // Pow, ReduceMean, Add, Sqrt, Div
  graph::NodeId mul;
  std::string x, scale;
  int64_t axis = -1;
  float epsilon = 1e-5f;
};

class SimplifiedLayerNormFusion : public RewriteRule<SimplifiedLayerNormFound> {
 public:
  std::string Name() const override { return "SimplifiedLayerNormFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Pow"}; }

 protected:
  std::optional<SimplifiedLayerNormFound> Match(const graph::Graph& g,
                                                graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const SimplifiedLayerNormFound& f) const override;
};

}  // namespace hase::kernels::rules
