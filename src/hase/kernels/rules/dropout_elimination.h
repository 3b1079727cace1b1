// DropoutElimination: removes Dropout, a no-op at inference; consumers read its input.
// Mirrors ORT's EliminateDropout (onnxruntime/core/optimizer/dropout_elimination.cc), level 1,
// all execution providers.
// Pattern: X → Dropout → Y.  Conditions: the mask output is absent or unused, Y is not a graph
// output.
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
