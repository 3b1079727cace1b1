// MatMulAddFusion: MatMul followed by a bias Add becomes one Gemm.
// Mirrors ORT's MatMulAddFusion (onnxruntime/core/optimizer/matmul_add_fusion.cc), level 1.
// Pattern: MatMul(A[M, K], B[K, N]) → Add(·, C) with C of shape [N], [1, N] or [M, N].
// Conditions: both MatMul inputs are 2-D with known shapes; the MatMul output has the Add as
// lone consumer and is not a graph output; float types. Effect: op_type "Gemm", inputs
// {A, B, C}; the Add is removed (no runtime op recorded: Gemm adds C itself).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/matmul_add_fusion.cc:L64-L253
//   (MatMulAddFusion::ApplyImpl: MatMul 1/9/13 with one consumer Add 7/13/14 on the same EP,
//   float/float16/bfloat16 of one type L108-L116, B 2-D L121; bias [N], [1, N], [M, 1] or
//   [M, N] L171-L178); registered at level 1 for every EP at graph_transformer_utils.cc:L238.
//   Differs: v1.21.0 also fuses an A of rank ≠ 2 whose shape is fully known by wrapping the Gemm
//   in two Reshapes (L125-L152, L183-L211), and accepts a [M, 1] bias; hase fuses 2-D A only.
//   A symbolic dim in A keeps that path off (L138), so dynamic-batch exports match. Pinned tags'
//   text not read (docs/kernels-json.md "ORT sources").
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
