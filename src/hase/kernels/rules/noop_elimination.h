// NoopElimination: x + 0, 0 + x, x - 0, x · 1, 1 · x and x / 1 are removed; consumers read x.
// Exporters write them in shape arithmetic: torch's nn.MultiheadAttention splits its packed q/k/v
// projection with Slice ends computed as (size / 3) · 1 (ViT-B/16: one per encoder layer).
// Mirrors ORT's NoopElimination (onnxruntime/core/optimizer/noop_elimination.cc), a level-1
// rewrite rule, every EP.
// Pattern: Add/Sub/Mul/Div(x, c) (Add/Mul also (c, x)) with c a constant of at most one
// element whose value is the op's neutral element (0 for Add/Sub, 1 for Mul/Div) or of no
// element. Conditions: exactly one operand constant; ORT knows x's rank (Value::ort_shape) and
// c's rank does not exceed it (the output keeps x's shape); the output is not a graph output;
// x is written by a node (ORT's CanRemoveNode needs one input edge: x · 1 of a graph input stays).
// Effect: the node is removed and its consumers read x.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/noop_elimination.cc:L18-L112
//   (NoopElimination::SatisfyCondition: one constant initializer operand, Sub/Div only as the
//   second, L26-L38; its rank ≤ the other's, L42-L49; size ≤ 1, L51-L62; value 0/1 of a float,
//   float16, double, int32 or int64 constant, L64-L104; CanRemoveNode L107, graph_utils.cc:L494-L530), target ops
//   noop_elimination.h:L20-L22; registered as a level-1 rewrite rule for every EP at
//   graph_transformer_utils.cc:L127. Pinned tags' text not read (docs/kernels-json.md
//   "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct NoopFound {
  graph::NodeId node;
  std::string x;  // the operand consumers read instead
};

class NoopElimination : public RewriteRule<NoopFound> {
 public:
  std::string Name() const override { return "NoopElimination"; }
  std::vector<std::string> AnchorOps() const override { return {"Add", "Sub", "Mul", "Div"}; }

 protected:
  std::optional<NoopFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const NoopFound& f) const override;
};

}  // namespace hase::kernels::rules
