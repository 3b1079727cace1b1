// ReshapeFusion: a Reshape whose target shape is computed from its own input's shape
// (x.view(x.size(0), -1): Shape → Gather → Unsqueeze → Concat) gets a constant target with 0
// ("copy this dim") in place of each gathered dim, and the shape subgraph disappears.
// Mirrors ORT's ReshapeFusion (onnxruntime/core/optimizer/reshape_fusion.cc, ReshapeFusion::
// Fuse_Subgraph), level 1, all EPs; measured with onnxruntime-node 1.30 on
// models/view_flatten_cnn.onnx (12 nodes → FusedConv, MaxPool, FusedConv, MaxPool, Reshape, Gemm).
// Pattern: Reshape(X, Concat(e_0, …, e_{n-1}), axis 0) where each e_i is either a constant
// int64 1-D tensor (its values are copied) or Unsqueeze(axes [0]) ← Gather(scalar constant j,
// axis 0) ← Shape(X) with j equal to the output position of e_i (→ 0).
// Conditions: the Concat's output feeds only this Reshape and is not a graph output; at least
// one e_i is a Shape path; at most one -1 in the result. Effect: the Reshape reads a new
// constant (values kept in the graph); the Concat and the Shape paths feeding only it are removed.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/reshape_fusion.cc:L24-L61
//   (ReshapeFusion::ApplyImpl: Reshape 5/13/14 with allowzero 0, L43-L46), :L360-L455
//   (Fuse_Subgraph: Concat 1/4/11/13 with one output edge; each input a constant, or
//   Shape → Gather(j) → Unsqueeze(0) of the Reshape's own input → 0 (L391-L397, matched by
//   Match_One_Element_Output_Subgraph_1 L157-L198), or a one-element shape computation → -1
//   (L404-L409); at most one -1, L419-L428); registered at level 1 for every EP at
//   graph_transformer_utils.cc:L239. Differs: hase does not turn a computed one-element input
//   into -1 (Is_One_Element_Output_Subgraph L276-L329) nor merge chains of Reshapes
//   (FuseContiguousReshapes L457-L504). Pinned tags' text not read (docs/kernels-json.md
//   "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct ReshapeFound {
  graph::NodeId reshape;
  graph::NodeId concat;
  std::vector<graph::NodeId> shape_path;  // Unsqueeze, Gather, Shape nodes to remove
  std::vector<int64_t> target;            // the constant target shape
};

class ReshapeFusion : public RewriteRule<ReshapeFound> {
 public:
  std::string Name() const override { return "ReshapeFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Reshape"}; }

 protected:
  std::optional<ReshapeFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const ReshapeFound& f) const override;
};

}  // namespace hase::kernels::rules
