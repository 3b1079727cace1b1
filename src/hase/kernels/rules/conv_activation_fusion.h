// ConvActivationFusion: Conv followed by an activation (and on CUDA, a residual Add + Relu)
// becomes one FusedConv kernel (com.microsoft), the activation recorded as an attribute.
// Mirrors ORT's ConvActivationFusion (onnxruntime/core/optimizer/conv_activation_fusion.cc),
// level 2 ("extended"); which activations fuse depends on the execution provider:
//   CUDA (onnxruntime 1.18.1, the ort-cuda pin): ConvActivationSelector lets only Relu
//         (opset 6/13/14) through for kCudaExecutionProvider, and the ConvAddRelu selector
//         fuses Conv → Add → Relu with the Add's other operand as FusedConv's 4th input Z.
//         ConvFusionDataTypeCheck: CUDA fuses only a float (fp32) Conv — an fp16 Conv + Relu
//         stays two kernels. Clip, Sigmoid, … stay separate kernels. (Later sources differ:
//         PR #19470, cuDNN frontend, 2024, reworked the CUDA path; current main returns no
//         CUDA selection at all — see docs/kernels-json.md "ORT releases".)
//   CPU (onnxruntime 1.30.0, the ort-cpu pin): Relu (6/13/14), Sigmoid (6/13), Tanh (6/13),
//         LeakyRelu (6/16), HardSigmoid (6), Clip (6/11/12/13) only with constant min/max;
//         float only on x86-64 (fp16 needs MLAS_F16VEC_INTRINSICS_SUPPORTED, an ARM build).
//         The residual Add is not fused (measured with onnxruntime-node 1.30).
// Conditions: Conv in ai.onnx with float input; its output has the activation (or Add) as lone
// consumer and is not a graph output; for Add+Relu, the Add's output has the Relu as lone
// consumer. Effect: op_type "FusedConv", fused_ops {act} or {"Add", "Relu"}, attribute
// activation = act (+ activation_params for Clip/LeakyRelu/HardSigmoid).
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
    bool allow_float16 = false;         // float16 Convs fuse too (neither pinned release)
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
