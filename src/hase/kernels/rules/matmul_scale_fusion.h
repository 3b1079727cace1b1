// MatMulScaleFusion: multiplying or dividing a MatMul's operand or result by a constant scalar
// becomes the alpha of one FusedMatMul (com.microsoft): attention's q / sqrt(d) or
// (q k^T) * scale.
// Mirrors ORT's MatMulScaleFusion (onnxruntime/core/optimizer/matmul_scale_fusion.cc), level 2,
// CPU/CUDA/DML/ROCm, registered after FastGeluFusion (graph_transformer_utils.cc).
// Pattern: MatMul (ai.onnx) or FusedMatMul, inputs float or double (the CPU EP's types), with
//  - a leading scale: an operand produced by Div(x, c) or Mul(x, c)/Mul(c, x), c a constant
//    initializer of one element whose rank is at most x's rank (0 when ORT does not know it)
//    and whose value converts to float losslessly, x of known non-zero rank (ORT's
//    NodeArg::Shape(); hase's DecisionDims);
//  - and/or a trailing scale: the MatMul's one consumer (one output edge) is such a Div/Mul.
// Effect: one fresh FusedMatMul with alpha = product of the scales (1/c for Div), reading x for
// each leading scale and writing the trailing scale's output; a leading scale node left without
// consumers and the trailing one are removed. Attributes of a FusedMatMul anchor are kept.
#pragma once

#include <string>
#include <vector>

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct MatMulScaleFound {
  graph::NodeId matmul;
  struct Lead {
    graph::NodeId scale_node;
    int matmul_input;   // which MatMul input it feeds
    std::string x;      // the unscaled operand
  };
  std::vector<Lead> leading;
  graph::NodeId trailing = graph::kNoNode;
  double alpha = 1.0;
};

class MatMulScaleFusion : public RewriteRule<MatMulScaleFound> {
 public:
  std::string Name() const override { return "MatMulScaleFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"MatMul", "FusedMatMul"}; }

 protected:
  std::optional<MatMulScaleFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const MatMulScaleFound& f) const override;
};

}  // namespace hase::kernels::rules
