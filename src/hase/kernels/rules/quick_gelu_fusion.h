// QuickGeluFusion: x · sigmoid(α·x) becomes one QuickGelu kernel (com.microsoft). With α = 1
// this is SiLU/Swish, the activation of YOLOv5/YOLOv8's Conv blocks.
// Mirrors ORT's QuickGeluFusion (onnxruntime/core/optimizer/quick_gelu_fusion.cc), level 2,
// CPU and CUDA execution providers.
// Pattern: Sigmoid(x) → Mul(x, ·)  or  Mul(x, α) → Sigmoid → Mul(x, ·), α a constant scalar.
// Conditions: float (and float16 where the provider fuses it: CUDA; on the CPU EP of
// onnxruntime 1.30 an fp16 x·sigmoid(x) is not fused — the CPU EP has no fp16 Sigmoid/Mul
// kernels, so the nodes stay unassigned at level 2 and ORT's InsertCastTransformer then runs
// them in float: measured Cast, Sigmoid, Mul, Cast, which ort-cpu reproduces with
// InsertCastTransformer, insert_cast_transformer.h);
// each intermediate (α-Mul output, Sigmoid output) has its successor
// as lone consumer and is not a graph output. Effect: the Sigmoid node becomes
// QuickGelu(x){alpha=α} writing the final Mul's output; the Muls are removed.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/quick_gelu_fusion.cc:L18-L100
//   (QuickGeluFusion::ApplyImpl: optional Mul 7/13/14 by a scalar float/double/float16 constant
//   α, L32-L56; Sigmoid 6/13 with one edge, not a graph output, L70-L74; Mul 7/13/14 of its
//   output and the same x, L80-L86 → QuickGelu{alpha}); registered at level 2 for
//   CPU/ACL/CUDA/DML/ROCm at graph_transformer_utils.cc:L357. The rule has no type check: the
//   fp16 difference on the CPU EP comes from partitioning (no fp16 kernel, so the nodes are not
//   on the CPU EP the rule is registered for); the Casts come after it (see above). Pinned tags'
//   text not read (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct QuickGeluFound {
  graph::NodeId sigmoid;
  graph::NodeId alpha_mul = graph::kNoNode;  // Mul(x, α), when present
  graph::NodeId mul;                         // Mul(x, sigmoid(…))
  std::string x;
  float alpha = 1.0f;
};

class QuickGeluFusion : public RewriteRule<QuickGeluFound> {
 public:
  explicit QuickGeluFusion(bool allow_float16) : allow_float16_(allow_float16) {}
  std::string Name() const override { return "QuickGeluFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Sigmoid"}; }

 protected:
  std::optional<QuickGeluFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const QuickGeluFound& f) const override;

 private:
  const bool allow_float16_;  // CUDA: true; CPU: false
};

}  // namespace hase::kernels::rules
