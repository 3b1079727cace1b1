// ConvAddFusion: folds a per-channel constant Add after Conv into the Conv's bias.
// Mirrors ORT's ConvAddFusion (onnxruntime/core/optimizer/conv_add_fusion.cc), level 1, all EPs.
// Pattern: Conv(X, W[, B]) → Add(·, C) → Y with C constant.
// Conditions: Conv's output has the Add as lone consumer and is not a graph output; W (and B)
// constant; C has Cout elements laid out per channel: [Cout, 1, 1] or [1, Cout, 1, 1] (any
// number of trailing 1s matching the spatial rank). Effect: Conv writes Y; bias = B + C (B := C
// when Conv had none). The residual Add of ResNets (both operands activations) never matches.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/conv_add_fusion.cc:L107-L133
//   (ConvAddFusion::SatisfyCondition: Conv 1/11 → Add 7/13/14 with one edge, W/B and the Add's
//   input 1 constant, Conv output not a graph output), :L13-L105 (Apply: C of [1, Cout, 1, …] or
//   [Cout, 1, …] added into B; same floating-point type as W, L26-L30); registered as a level-1
//   rewrite rule for every EP at graph_transformer_utils.cc:L133, before ConvBNFusion (L135).
//   Differs: ORT takes C only as the Add's second input (L124: Add(C, conv) is left alone) and
//   skips C of another element type than W; hase takes C on either side and any float type.
//   The pinned tags' text was not read (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct ConvAddFound {
  graph::NodeId conv;
  graph::NodeId add;
  std::string constant;  // C
};

class ConvAddFusion : public RewriteRule<ConvAddFound> {
 public:
  std::string Name() const override { return "ConvAddFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Conv"}; }

 protected:
  std::optional<ConvAddFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const ConvAddFound& f) const override;
};

}  // namespace hase::kernels::rules
