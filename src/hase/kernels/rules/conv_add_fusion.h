// ConvAddFusion: folds a per-channel constant Add after Conv into the Conv's bias.
// Mirrors ORT's ConvAddFusion (onnxruntime/core/optimizer/conv_add_fusion.cc), level 1, all EPs.
// Pattern: Conv(X, W[, B]) → Add(·, C) → Y with C constant.
// Conditions: Conv's output has the Add as lone consumer and is not a graph output; W (and B)
// constant; C has Cout elements laid out per channel: [Cout, 1, 1] or [1, Cout, 1, 1] (any
// number of trailing 1s matching the spatial rank). Effect: Conv writes Y; bias = B + C (B := C
// when Conv had none). The residual Add of ResNets (both operands activations) never matches.
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
