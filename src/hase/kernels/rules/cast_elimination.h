// CastElimination: removes a Cast to the type its input already has; consumers read the input.
// torch.onnx writes such Casts around integer floor division in shape arithmetic
// (`h // p` → Div → Cast(int64) → Cast(int64): ViT-B/16, Swin-T).
// Mirrors ORT's CastElimination (onnxruntime/core/optimizer/cast_elimination.cc), a level-1
// rewrite rule, all EPs.
// Pattern: X → Cast{to = dtype of X} → Y.  Conditions: X's dtype is known; Y is not a graph
// output (ORT's CanRemoveNode). Effect: the Cast is removed and Y's consumers read X.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/cast_elimination.cc:L13-L32
//   (Apply: RemoveNode; SatisfyCondition: CanRemoveNode and `to` equal to the input's elem_type),
//   registered as a level-1 rewrite rule for every EP at graph_transformer_utils.cc:L125, after
//   EliminateDropout (L123). Pinned tags' text not read (docs/kernels-json.md "ORT sources");
//   checked against onnxruntime-node 1.30.0 (tests/kernels/front_end_cases_test.cc,
//   CastElimination).
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class CastElimination : public RewriteRule<graph::NodeId> {
 public:
  std::string Name() const override { return "CastElimination"; }
  std::vector<std::string> AnchorOps() const override { return {"Cast"}; }

 protected:
  std::optional<graph::NodeId> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const graph::NodeId& id) const override;
};

}  // namespace hase::kernels::rules
