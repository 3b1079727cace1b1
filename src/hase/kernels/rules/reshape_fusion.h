// ReshapeFusion: a Reshape whose target shape is a Concat of constants and shape arithmetic
// gets one constant target — 0 ("copy this dim") for a dim read from a tensor with the same dim,
// -1 for one computed element — and the shape subgraph feeding only it disappears.
// Mirrors ORT's ReshapeFusion (onnxruntime/core/optimizer/reshape_fusion.cc, ReshapeFusion::
// Fuse_Subgraph), level 1, all EPs; measured with onnxruntime-node 1.30 on
// models/view_flatten_cnn.onnx (x.view(x.size(0), -1)) and ViT-B/16's patch embedding
// (x.reshape(n, 768, h/16 · w/16) → [0, 768, -1]).
// Pattern: Reshape(X, Concat(e_0, …, e_{n-1})) where each e_i is (a) a constant int tensor (its
// values are copied), (b) Unsqueeze(axes [0]) ← Gather(j) ← Shape(Y) with j = the position of
// e_i and Y = X or Y's dim j the same as X's dim j in ORT's view (the same value or the same
// symbolic name; Value::ort_shape) → 0, or (c) a one-element input in ORT's view (its dims all
// known, product 1; or such an Unsqueeze of one, or of a Div/Mul of two) → -1.
// Conditions: Reshape allowzero 0; the Concat's output has one consuming edge and is not a graph
// output; at most one -1 in the result. Effect: the Reshape reads a new constant (values kept);
// the Concat is removed, and each node feeding it is removed bottom-up while nothing else reads
// it (graph_utils::RemoveNodesWithOneOutputBottomUp).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/reshape_fusion.cc:L24-L61
//   (ReshapeFusion::ApplyImpl: Reshape 5/13/14 with allowzero 0, L43-L46), :L360-L455
//   (Fuse_Subgraph: Concat 1/4/11/13 with one output edge; each input a constant, or
//   Shape → Gather(j) → Unsqueeze(0) → 0 (Match_One_Element_Output_Subgraph_1 L157-L198 with
//   Match_Shape L132-L150), or a one-element subgraph → -1 (Is_One_Element_Output_Subgraph
//   L276-L329, Is_One_Element_Input L240-L259); at most one -1, L419-L428; bottom-up removal
//   graph_utils.cc:L849-L899); registered at level 1 for every EP at
//   graph_transformer_utils.cc:L239. Differs from the v1.21.0 text as onnxruntime-node 1.30
//   behaves: Match_Shape there compares whole shapes by value; 1.30 matches the gathered dim,
//   symbolic names included (measured: Shape of a [batch, 3, 16, 16] input gathered at 0 gives 0
//   in the target of a [batch, 8, 4, 4] Conv output; of a [b2, 5] input it does not). Not
//   mirrored: the DistilBert linear-path match (Match_Linear_Subgraph_1), the Shape → Slice →
//   Squeeze one-element path, FuseContiguousReshapes (L457-L504). Pinned tags' text not read
//   (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct ReshapeFound {
  graph::NodeId reshape;
  graph::NodeId concat;
  std::vector<graph::NodeId> input_producers;  // nodes feeding the Concat (removed bottom-up)
  std::vector<int64_t> target;            // the constant target shape
};

class ReshapeFusion : public RewriteRule<ReshapeFound> {
 public:
  std::string Name() const override { return "ReshapeFusion"; }
  bool RefinesOrtShapes() const override { return true; }
  std::vector<std::string> AnchorOps() const override { return {"Reshape"}; }

 protected:
  std::optional<ReshapeFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const ReshapeFound& f) const override;
};

}  // namespace hase::kernels::rules
