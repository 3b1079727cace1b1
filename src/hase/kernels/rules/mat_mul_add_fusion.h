// MatMulAddFusion: MatMul followed by a bias Add becomes one Gemm.
// Mirrors ORT's MatMulAddFusion (onnxruntime/core/optimizer/matmul_add_fusion.cc), level 1.
// Pattern: MatMul(A[M, K], B[K, N]) → Add(·, C) with C of shape [N], [1, N] or [M, N].
// Conditions: both MatMul inputs are 2-D with known shapes; the MatMul output has the Add as
// lone consumer and is not a graph output; float types. Effect: op_type "Gemm", inputs
// {A, B, C}; the Add is removed (no runtime op recorded: Gemm adds C itself).
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct MatMulAddFound {
  graph::NodeId matmul;
  graph::NodeId add;
  std::string bias;  // C
};

class MatMulAddFusion : public RewriteRule<MatMulAddFound> {
 public:
  std::string Name() const override { return "MatMulAddFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"MatMul"}; }

 protected:
  std::optional<MatMulAddFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const MatMulAddFound& f) const override;
};

}  // namespace hase::kernels::rules
