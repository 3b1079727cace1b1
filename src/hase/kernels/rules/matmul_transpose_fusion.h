// MatmulTransposeFusion: a Transpose that only swaps a MatMul operand's last two dims (and/or
// moves its first dim behind the batch dims) is folded into the MatMul as a FusedMatMul
// (com.microsoft) with transA/transB/transBatchA/transBatchB: attention's K-transpose and
// head transposes (ViT, Swin at opset ≥ 14, where ORT knows the operands' ranks).
// Mirrors ORT's MatmulTransposeFusion (onnxruntime/core/optimizer/matmul_transpose_fusion.cc),
// level 2, CPU/CUDA/ROCm, registered after EmbedLayerNormFusion and before BiasGeluFusion
// (graph_transformer_utils.cc).
// Pattern: MatMul (ai.onnx) or FusedMatMul assigned to the CPU EP (a float16 MatMul is not:
// no x86-64 kernel, CpuEpHasKernel) whose operand (float, float16, double, bfloat16) is
// the output of a Transpose that is not a graph output, with perm (or the reversed dims when
// absent) of rank ≥ 2 in which the operand's last axis stays in the last two places and, at
// rank ≥ 3, perm[0] ∈ {0, 1} and the batch dims stay contiguous (GetTransposeNodeFromOutput).
// is_trans = the last axis moved to place rank-2; is_trans_batch = rank ≥ 3 and perm[0] = 1.
// A side with is_trans_batch needs both MatMul operands' ranks known (ORT's NodeArg::Shape(),
// hase's DecisionDims) and equal, else that side is not fused. A FusedMatMul already carrying
// transBatchA/B is not fused again on that side. Not emulated: the Cast between Transpose and
// MatMul that ORT swaps (ReorderCastAndTranspose).
// Effect: the MatMul becomes a fresh FusedMatMul reading the Transposes' inputs (flags XORed
// with a FusedMatMul's own, alpha kept); a Transpose left without consumers is removed.
#pragma once

#include <string>
#include <vector>

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct MatmulTransposeFound {
  graph::NodeId matmul;
  graph::NodeId left = graph::kNoNode;   // the Transpose fused on each side, or kNoNode
  graph::NodeId right = graph::kNoNode;
  bool trans_left = false, trans_batch_left = false;
  bool trans_right = false, trans_batch_right = false;
};

class MatmulTransposeFusion : public RewriteRule<MatmulTransposeFound> {
 public:
  std::string Name() const override { return "MatmulTransposeFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"MatMul", "FusedMatMul"}; }

 protected:
  std::optional<MatmulTransposeFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const MatmulTransposeFound& f) const override;
};

}  // namespace hase::kernels::rules
