// IdentityElimination: removes Identity nodes; consumers read the Identity's input directly.
// Mirrors ORT's EliminateIdentity (onnxruntime/core/optimizer/identity_elimination.cc), level 1,
// all execution providers.
// Pattern: X → Identity → Y.  Conditions: Y is not a graph output, or X's producer writes X for
// this Identity alone (then the producer is made to write Y directly).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/identity_elimination.cc:L63-L102
//   (EliminateIdentity::SatisfyCondition: CanRemoveNode, or an Identity writing a graph output
//   whose producer's output feeds it alone and is no graph output itself), :L42-L61 (Apply:
//   remove, or make the producer write the graph output); registered as a level-1 rewrite rule
//   for every EP at graph_transformer_utils.cc:L120. Pinned tags' text not read
//   (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct IdentityFound {
  graph::NodeId identity;
  bool rename_producer;  // Y is a graph output: X's producer writes Y instead
};

class IdentityElimination : public RewriteRule<IdentityFound> {
 public:
  std::string Name() const override { return "IdentityElimination"; }
  std::vector<std::string> AnchorOps() const override { return {"Identity"}; }

 protected:
  std::optional<IdentityFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const IdentityFound& f) const override;
};

}  // namespace hase::kernels::rules
