// GeluFusion: the erf form of GELU, x · 0.5 · (1 + erf(x / √2)), becomes one Gelu kernel
// (com.microsoft). torch exports nn.GELU at opset ≤ 17 as Div → Erf → Add → Mul → Mul.
// Mirrors ORT's GeluFusion (onnxruntime/core/optimizer/gelu_fusion.cc), level 2, CPU and CUDA
// EPs (the rule predates both pins, 1.17.3 and 1.30.0).
// Pattern: Div(x, √2) | Mul(x, 1/√2) → Erf → Add(·, 1) → then either Mul(x, ·) → Mul(·, 0.5)
// (torch) or Mul(·, Mul(x, 0.5)). Constants within 1e-5 (float) of √2, 1/√2, 1 and 0.5.
// Conditions: float/float16/double; every intermediate has its successor as lone consumer and is
// not a graph output. Effect: the Div (or Mul) node becomes Gelu(x) writing the last Mul's
// output; the others are removed; fused_ops stay empty (ORT's kernel is one op).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/gelu_fusion.cc:L46-L200
//   (GeluFusion::ApplyImpl: Div 7/13/14 by √2 (or 1.4142099…) with one consumer, Erf, Add 1, then
//   Mul(x, ·)·0.5 or Mul(·, Mul(x, 0.5)); float16/float/double, L16-L26); registered at level 2
//   for CPU/ACL/CUDA/DML/ROCm at graph_transformer_utils.cc:L343, and at level 1 for every EP
//   (L243), where it fuses only when the model's opset is ≥ 20 and writes ONNX Gelu (L47-L58).
//   Differs: v1.21.0 matches the Div head only; hase also takes Mul(x, 1/√2). Pinned tags' text
//   not read (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct GeluFound {
  graph::NodeId head;                   // Div(x, √2) or Mul(x, 1/√2)
  std::vector<graph::NodeId> rest;      // Erf, Add, Mul(s), in order; the last writes the output
  std::string x;
};

class GeluFusion : public RewriteRule<GeluFound> {
 public:
  std::string Name() const override { return "GeluFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Div", "Mul"}; }

 protected:
  std::optional<GeluFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const GeluFound& f) const override;
};

}  // namespace hase::kernels::rules
