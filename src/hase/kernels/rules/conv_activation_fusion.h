// ConvActivationFusion: Conv followed by an activation (and on CUDA, a residual Add + Relu)
// becomes one FusedConv kernel (com.microsoft), the activation recorded as an attribute.
// Mirrors ORT's ConvActivationFusion (onnxruntime/core/optimizer/conv_activation_fusion.cc),
// level 2 ("extended"); which activations fuse depends on the execution provider:
//   CUDA (onnxruntime 1.17.3, the ort-cuda pin): ConvActivationSelector lets only Relu
//         (opset 6/13/14) through for kCudaExecutionProvider, and the ConvAddRelu selector
//         fuses Conv → Add → Relu with the Add's other operand as FusedConv's 4th input Z.
//         ConvFusionDataTypeCheck: CUDA fuses only a float (fp32) Conv — an fp16 Conv + Relu
//         stays two kernels (in ConvAddRelu too since PR #12058, ORT 1.12). Clip, Sigmoid, …
//         stay separate kernels. Later releases differ, which is why the pin is 1.17.3:
//         1.18.0–1.19.2: PR #20282 (April 2024) made GetLoneConsumerNode refuse a consumer with
//         more than one non-constant input, so a residual Add (both operands activations) is no
//         longer fused — only Conv+Relu and Conv+Add(constant or graph input)+Relu remain
//         (maintainers' description in PR #24525, which removed the check again in 2025; its CI
//         ran 2024-04-12, before rel-1.18.0 took cherry-picks of later PRs on 2024-05-06, so it
//         is in 1.18.0 by date — the tag's text was not read). 1.20.0 on: PR #19470 (cuDNN
//         frontend) removed the CUDA fusion — in the v1.21.0 text the selector returns nullopt
//         for CUDA (conv_activation_fusion.cc:L118-L119) and the transformer is registered
//         without the CUDA EP (graph_transformer_utils.cc:L341).
//   CPU (onnxruntime-node 1.30.0, the ort-cpu pin): Relu (6/13/14), Sigmoid (6/13), Tanh (6/13),
//         LeakyRelu (6/16), HardSigmoid (6), Clip (6/11/12/13) only with constant min/max;
//         float only on x86-64 (fp16 needs MLAS_F16VEC_INTRINSICS_SUPPORTED, an ARM build).
//         The residual Add is not fused (measured with onnxruntime-node 1.30).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/conv_activation_fusion.cc:L60-L80
//   (ConvFusionDataTypeCheck: float, or float16 with MLAS fp16 on the CPU EP), :L82-L139
//   (ConvActivationSelector: lone consumer on the same EP, activation list per EP), :L148-L218
//   (FuseConvActivationAction: FusedConv, activation + activation_params), :L252-L266 (registered
//   for Conv 1/11); registered at graph_transformer_utils.cc:L341 (level 2, CPU/ROCm/ACL/ArmNN/JS).
//   The CUDA branch and ConvAddRelu of 1.17.3 are not in v1.21.0: they were read in stored
//   pre-#20282 versions of the file (docs/kernels-json.md "ORT sources").
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
