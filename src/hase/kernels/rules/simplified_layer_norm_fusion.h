// SimplifiedLayerNormFusion: x / sqrt(mean(x²) + eps) · scale (RMSNorm) becomes one
// SimplifiedLayerNormalization kernel. In exported ConvNeXt blocks it appears after
// TransposeOptimizer has moved the block's Transpose between the LayerNorm's Sub and Pow: the
// mean-centring (ReduceMean, Sub) stays channels-first, the rest matches this pattern (measured
// with onnxruntime-node 1.30: 18 SimplifiedLayerNormalization + Add in ConvNeXt-Tiny).
// Mirrors ORT's SimplifiedLayerNormFusion, level 2, CPU/CUDA/ROCm EPs, registered after
// LayerNormFusion.
// Pattern: Pow(X, ·) → ReduceMean → Add → Sqrt → Div(X, ·) → Mul(·, scale).
// Conditions: X float, double, bfloat16 or float16 — float16 not on the CPU EP (`allow_float16`
// false for ort-cpu); the Cast variants are CUDA-only and not handled. Pow, ReduceMean, Add, Sqrt,
// Div each have one consumer and Pow is not a graph output; Div's first input is Pow's first
// input; the ReduceMean reduces one axis, the last; some Mul input is 1-D (the scale; it need
// not be constant).
// Effect: the Mul becomes SimplifiedLayerNormalization(X, scale){axis, epsilon} (a fresh node in
// ORT); the other five nodes are removed.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/layer_norm_fusion.cc:L540-L761
//   (SimplifiedLayerNormFusion::ApplyImpl; CheckAxesOnReduceMean L35-L61; one reduced axis and a
//   1-D scale L681-L706; no fp16 X on the CPU EP L715-L719), registered at level 2 for
//   CPU/CUDA/ROCm at graph_transformer_utils.cc:L345, after LayerNormFusion (L344). Pinned tags'
//   text not read (docs/kernels-json.md "ORT sources"); checked against onnxruntime-node 1.30.0
//   on ConvNeXt-Tiny and tests/kernels/front_end_cases_test.cc (SimplifiedLayerNormFusion).
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
  // allow_float16: true for the CUDA EP; the CPU EP has no fp16 SimplifiedLayerNormalization.
  explicit SimplifiedLayerNormFusion(bool allow_float16) : allow_float16_(allow_float16) {}
  std::string Name() const override { return "SimplifiedLayerNormFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Pow"}; }

 protected:
  std::optional<SimplifiedLayerNormFound> Match(const graph::Graph& g,
                                                graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const SimplifiedLayerNormFound& f) const override;

 private:
  const bool allow_float16_;
};

}  // namespace hase::kernels::rules
