// IdentityElimination: removes Identity nodes; consumers read the Identity's input directly.
// Mirrors ORT's EliminateIdentity (onnxruntime/core/optimizer/identity_elimination.cc), level 1,
// all execution providers.
// Pattern: X → Identity → Y.  Conditions: Y is not a graph output, or X's producer writes X for
// this Identity alone (then the producer is made to write Y directly).
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
