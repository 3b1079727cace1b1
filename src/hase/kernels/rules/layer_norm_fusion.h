// LayerNormFusion: the decomposed layer norm opset-≤16 exporters write becomes one
// LayerNormalization kernel: torch's F.layer_norm → ReduceMean → Sub → Pow → ReduceMean → Add →
// Sqrt → Div → Mul → Add.
// Mirrors ORT's LayerNormFusion (onnxruntime/core/optimizer/layer_norm_fusion.cc), registered
// twice on ort-cpu as in ORT 1.21+: at level 1 (every EP, before partitioning), where it fuses
// only when the model imports ai.onnx ≥ 17 (LayerNormalization is a standard op there), and at
// level 2 (CPU EP), where it fuses only below opset 17; ort-cuda keeps one level-2 instance that
// fuses at every opset (Level::kExtendedOnly) — the canonical pattern only.
// Pattern: m = ReduceMean(X, axes); d = Sub(X, m); v = ReduceMean(Pow(d, 2), axes);
// y = Div(d, Sqrt(Add(v, eps))) · scale + bias.
// Conditions: the level's opset condition (above); the inputs of the nine nodes (the
// ReduceMeans' first only) float16, float, double or bfloat16 at level 1 — nodes are not
// assigned to an EP yet, so ORT's "CPU doesn't support fp16" check (L466-L470) does not hold
// there — and float at level 2 (ORT's level 2 skips float16 on the CPU EP; double, which ORT's
// level 2 would take where the EP has double kernels for all nine, is not modelled). Both
// ReduceMeans reduce the same one axis, the last, of X (keepdims 1; ORT: one axis in an
// inference build, L420-L423); the Sub output feeds exactly the Pow and the Div; every other
// intermediate has one consumer and is not a graph output; exponent 2 constant (ORT does not
// look at it); scale and bias constant with the normalised dims (ORT takes the 1-D Mul and Add
// operands, constant or not).
// Not handled (ORT handles them, hase leaves the nodes unfused): the duplicated Sub of old
// PyTorch exports and the Cast variants of mixed-precision exports. The RMSNorm form is
// SimplifiedLayerNormFusion's (level 2 only in ORT: no level-1 registration), and a pattern
// that TransposeOptimizer has cut (ConvNeXt's channels-first norms) no longer matches, in ORT
// as here.
// Effect: the first ReduceMean becomes LayerNormalization(X, scale, bias){axis, epsilon} writing
// the bias Add's output; the rest are removed. epsilon is the Add's input 1 when that is a float
// constant, else 1e-5 (ORT's default: a float16 model's ε is not read, L478-L487).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/layer_norm_fusion.cc:L141-L515
//   (LayerNormFusion::ApplyImpl: level gate L141-L153; supported data types L15-L33; ReduceMean
//   1/11/13/18 → Sub (one or two) → Pow 2 → ReduceMean → Add ε → Sqrt → Div → Mul scale → Add
//   bias, optional Casts L241-L263 and L354-L378; trailing contiguous axes, CheckAxesOnReduceMean
//   L35-L61; scale/bias of the normalised rank, L431-L460); registered at level 1 for every EP
//   at graph_transformer_utils.cc:L244 and at level 2 for CPU/ACL/CUDA/DML/ROCm at L344.
//   Measured with onnxruntime-node 1.30.0: a float16 decomposed layer norm at opset 17 is one
//   float16 LayerNormalization on the CPU EP, at opset 16 eleven float kernels between Casts
//   (tests/kernels/insert_cast_transformer_test.cc, LayerNormFusion*).
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
  // Which of ORT's two registrations an instance is (graph_transformer_utils.cc L244, L344).
  enum class Level {
    kBasic,     // level 1: fuses when ai.onnx ≥ 17; float16, float, double, bfloat16
    kExtended,  // level 2: fuses when ai.onnx < 17; float
    // Level 2 of a release without the level-1 registration (ort-cuda's 1.17.3, per
    // docs/kernels-json.md): fuses at every opset; float.
    kExtendedOnly,
  };
  explicit LayerNormFusion(Level level) : level_(level) {}
  std::string Name() const override { return "LayerNormFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"ReduceMean"}; }

 protected:
  std::optional<LayerNormFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const LayerNormFound& f) const override;

 private:
  const Level level_;
};

}  // namespace hase::kernels::rules
