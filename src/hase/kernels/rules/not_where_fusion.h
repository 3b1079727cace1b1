// NotWhereFusion: Where(Not(c), a, b) becomes Where(c, b, a) and the Not is removed (Swin-T's
// shifted-window attention masks: five Not nodes).
// Mirrors ORT's NotWhereFusion (onnxruntime/core/optimizer/not_where_fusion.cc), a level-1
// rewrite rule, every EP.
// Pattern: Not(c) → Where (Where-9 and Where-16: onnxruntime-node 1.30 fuses Not → Where at
// opsets 15, 16 and 17 alike, measured) at input 0. Conditions: every consumer of the Not is a
// Where; the Not's output is not a graph output. Effect: each consuming Where reads c and has its
// inputs 1 and 2 swapped; the Not is removed.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/not_where_fusion.cc:L43-L70
//   (SatisfyCondition: Where 9 whose input 0 is Not 1 on the same EP; all Not consumers Where;
//   CanRemoveNode), :L72-L131 (Apply: consumers read the Not's input, inputs 1 and 2 swapped,
//   the Not removed); registered as a level-1 rewrite rule for every EP at
//   graph_transformer_utils.cc:L132. Pinned tags' text not read (docs/kernels-json.md
//   "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct NotWhereFound {
  graph::NodeId not_node;
  std::vector<graph::NodeId> wheres;
};

class NotWhereFusion : public RewriteRule<NotWhereFound> {
 public:
  std::string Name() const override { return "NotWhereFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Where"}; }

 protected:
  std::optional<NotWhereFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const NotWhereFound& f) const override;
};

}  // namespace hase::kernels::rules
