// ConvActivationFusion: Conv followed by an activation (and on CUDA, a residual Add + Relu)
// becomes one FusedConv kernel (com.microsoft), the activation recorded as an attribute.
// Mirrors ORT's ConvActivationFusion (onnxruntime/core/optimizer/conv_activation_fusion.cc),
// level 2 ("extended"); which activations fuse depends on the execution provider:
//   CUDA: Relu (opset 6/13/14); and Conv → Add → Relu with the Add's other operand as
//         FusedConv's 4th input Z (ConvAddRelu selector). Clip, Sigmoid, … stay separate kernels.
//   CPU:  Relu (6/13/14), Sigmoid (6/13), Tanh (6/13), LeakyRelu (6/16), HardSigmoid (6),
//         Clip (6/11/12/13) only with constant min/max. The residual Add is not fused (measured
//         with onnxruntime-node 1.30, see ../shared/REFERENCE.md).
// Conditions: Conv in ai.onnx with float input (CUDA also float16 for Relu); its output has the
// activation (or Add) as lone consumer and is not a graph output; for Add+Relu, the Add's
// output has the Relu as lone consumer. Effect: op_type "FusedConv", fused_ops {act} or
// {"Add", "Relu"}, attribute activation = act (+ activation_params for Clip/LeakyRelu/
// HardSigmoid).
#pragma once

#include <set>

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct ConvActivationFound {
  graph::NodeId conv;
  graph::NodeId add = graph::kNoNode;  // CUDA Conv+Add+Relu only
  std::string z;                       // the Add's other operand
  graph::NodeId activation;
  std::vector<float> activation_params;  // Clip min/max, LeakyRelu alpha, HardSigmoid alpha/beta
};

class ConvActivationFusion : public RewriteRule<ConvActivationFound> {
 public:
  struct Config {
    std::set<std::string> activations;  // op types that fuse
    bool fuse_add_relu = false;         // Conv → Add → Relu (CUDA)
    bool allow_float16 = false;         // CUDA kernels also take float16
  };
  // The provider sets ORT uses.
  static Config Cuda();
  static Config Cpu();

  explicit ConvActivationFusion(Config config) : config_(std::move(config)) {}
  std::string Name() const override { return "ConvActivationFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Conv"}; }

 protected:
  std::optional<ConvActivationFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const ConvActivationFound& f) const override;

 private:
  const Config config_;
};

}  // namespace hase::kernels::rules
