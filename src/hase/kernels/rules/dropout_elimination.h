// DropoutElimination: removes Dropout, a no-op at inference; consumers read its input.
// Mirrors ORT's EliminateDropout (onnxruntime/core/optimizer/dropout_elimination.cc), level 1,
// all execution providers.
// Pattern: X → Dropout → Y.  Conditions: the mask output is absent or unused, Y is not a graph
// output.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/dropout_elimination.cc:L22-L72
//   (EliminateDropout::SatisfyCondition: Dropout 1/6/7/10/12/13, CanRemoveNode and the mask
//   output unused, L71; the ratio checks L29-L65 are training builds only), :L14-L20 (Apply:
//   graph_utils::RemoveNode); registered as a level-1 rewrite rule for every EP at
//   graph_transformer_utils.cc:L123. Pinned tags' text not read (docs/kernels-json.md
//   "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class DropoutElimination : public RewriteRule<graph::NodeId> {
 public:
  std::string Name() const override { return "DropoutElimination"; }
  std::vector<std::string> AnchorOps() const override { return {"Dropout"}; }

 protected:
  std::optional<graph::NodeId> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const graph::NodeId& dropout) const override;
};

}  // namespace hase::kernels::rules
