// LayerNormFusion: the decomposed layer norm opset-≤16 exporters write becomes one
// LayerNormalization kernel: torch's F.layer_norm → ReduceMean → Sub → Pow → ReduceMean → Add →
// Sqrt → Div → Mul → Add.
// Mirrors ORT's LayerNormFusion (onnxruntime/core/optimizer/layer_norm_fusion.cc), level 2, CPU
// and CUDA EPs (the rule predates both pins, 1.17.3 and 1.30.0) — the canonical pattern only.
// Pattern: m = ReduceMean(X, axes); d = Sub(X, m); v = ReduceMean(Pow(d, 2), axes);
// y = Div(d, Sqrt(Add(v, eps))) · scale + bias.
// Conditions: both ReduceMeans reduce the same trailing axes of X (keepdims 1); the Sub output
// feeds exactly the Pow and the Div; every other intermediate has one consumer and is not a
// graph output; exponent 2 and eps constant; scale and bias constant with the normalised dims.
// Not handled (ORT handles them, hase leaves the nodes unfused): the Cast variants of
// mixed-precision exports. The RMSNorm form is SimplifiedLayerNormFusion's, and a pattern that
// TransposeOptimizer has cut (ConvNeXt's channels-first norms) no longer matches, in ORT as here.
// Effect: the first ReduceMean becomes LayerNormalization(X, scale, bias){axis, epsilon} writing
// the bias Add's output; the rest are removed.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/layer_norm_fusion.cc:L141-L515
//   (LayerNormFusion::ApplyImpl: ReduceMean 1/11/13/18 → Sub (one or two) → Pow 2 → ReduceMean →
//   Add ε → Sqrt → Div → Mul scale → Add bias, optional Casts L241-L263 and L354-L378; trailing
//   contiguous axes, CheckAxesOnReduceMean L35-L61; scale/bias of the normalised rank, L431-L460);
//   registered at level 2 for CPU/ACL/CUDA/DML/ROCm at graph_transformer_utils.cc:L344, and at
//   level 1 for every EP (L244), where it fuses only when the model's opset is ≥ 17 (L141-L153).
//   SimplifiedLayerNormFusion (RMSNorm, L540-L761, level 2 CPU/CUDA/ROCm at L345) is mirrored in
//   simplified_layer_norm_fusion.h. Pinned tags' text not read (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct LayerNormFound {
  graph::NodeId mean;                // first ReduceMean (becomes the fused node)
  std::vector<graph::NodeId> rest;   // Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add
  std::string x, scale, bias;
  int64_t axis = -1;
  float epsilon = 1e-5f;
};

class LayerNormFusion : public RewriteRule<LayerNormFound> {
 public:
  std::string Name() const override { return "LayerNormFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"ReduceMean"}; }

 protected:
  std::optional<LayerNormFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const LayerNormFound& f) const override;
};

}  // namespace hase::kernels::rules
