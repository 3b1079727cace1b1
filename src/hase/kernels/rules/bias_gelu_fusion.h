// BiasGeluFusion: the bias Add in front of a Gelu joins it as one BiasGelu kernel
// (com.microsoft): Linear → GELU on a 3-D/4-D activation, where MatMul + Add does not become Gemm.
// Mirrors ORT's BiasGelu transformer (onnxruntime/core/optimizer/bias_gelu_fusion.cc), level 2,
// CPU and CUDA EPs (BiasGelu predates both pins; measured: ConvNeXt-Tiny's 18 Linear → GELU
// pairs become MatMul + BiasGelu in onnxruntime-node 1.30).
// Pattern: Add(X, B) → Gelu, where exactly one operand is 1-D (B; need not be constant) and its
// length equals X's last dim. Conditions: the Add's output has the Gelu as lone consumer and is
// not a graph output. Effect: the Gelu becomes BiasGelu(X, B) (a fresh node in ORT) and the Add
// is removed.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/bias_gelu_fusion.cc:L14-L112
//   (BiasGeluFusion::ApplyImpl: Add 7/13/14 with one consumer, one operand 1-D with the other's
//   last dim, L33-L56; consumer Gelu (com.microsoft 1 or ONNX 20) or bias-less FastGelu on the same
//   EP, L65-L76; Add output not a graph output, L84 → BiasGelu, or FastGelu when approximate);
//   registered at level 2 for CPU/ACL/CUDA/DML/ROCm at graph_transformer_utils.cc:L352, after
//   GeluFusion (L343). Pinned tags' text not read
//   (docs/kernels-json.md "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct BiasGeluFound {
  graph::NodeId add;
  graph::NodeId gelu;
  std::string x;
  std::string bias;
};

class BiasGeluFusion : public RewriteRule<BiasGeluFound> {
 public:
  std::string Name() const override { return "BiasGeluFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Add"}; }

 protected:
  std::optional<BiasGeluFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const BiasGeluFound& f) const override;
};

}  // namespace hase::kernels::rules
