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
