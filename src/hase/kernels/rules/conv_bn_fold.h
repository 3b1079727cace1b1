// ConvBnFold: folds an inference BatchNormalization into the preceding Conv's weights and bias.
// Mirrors ORT's ConvBNFusion (onnxruntime/core/optimizer/conv_bn_fusion.cc), level 1, all EPs.
// Pattern: Conv(X, W[, B]) → BatchNormalization(scale, bias, mean, var) → Y.
// Conditions: Conv's output has BN as its lone consumer and is not a graph output; W and, if
// present, B are constant; BN's scale/bias/mean/var are constant; BN's optional training outputs
// are unused. Effect: Conv writes Y; W keeps its shape; a bias of [Cout] is added when Conv had
// none (the folded shift). No runtime op is recorded: the fold happens at load time.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/conv_bn_fusion.cc:L147-L185
//   (ConvBNFusion::SatisfyCondition: Conv 1/11 → BatchNormalization 7/9/14/15, one edge, W/B and
//   scale/bias/mean/var constant, no BN training outputs, Conv output not a graph output),
//   :L13-L145 (Apply: scales W and B into the Conv; floating-point initializers only, L44-L48);
//   registered as a level-1 rewrite rule for every EP at graph_transformer_utils.cc:L135.
//   The rule predates both pins; the pinned tags' text was not read (docs/kernels-json.md
//   "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct ConvBnFound {
  graph::NodeId conv;
  graph::NodeId bn;
};

class ConvBnFold : public RewriteRule<ConvBnFound> {
 public:
  std::string Name() const override { return "ConvBnFold"; }
  std::vector<std::string> AnchorOps() const override { return {"Conv"}; }

 protected:
  std::optional<ConvBnFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const ConvBnFound& f) const override;
};

}  // namespace hase::kernels::rules
