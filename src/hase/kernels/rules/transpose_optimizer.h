// TransposeOptimizer: pushes Transpose nodes down through the ops that can take a permuted input
// (elementwise, broadcasting, reductions, Softmax, Concat, Split, Squeeze/Unsqueeze, Slice, Pad,
// Shape), so that opposite Transposes meet and cancel. ConvNeXt's channels-first LayerNorm2d
// (Transpose → LayerNorm → Transpose) loses both Transposes this way, and its blocks keep one
// Transpose inside the LayerNorm (which then fuses as SimplifiedLayerNormalization).
// Mirrors ORT's TransposeOptimizer (onnxruntime/core/optimizer/transpose_optimization/
// onnx_transpose_optimization.cc: OptimizeImpl, ProcessTranspose, the handlers in handler_map,
// and the cost heuristics EstimateValueRank / EstimateTransposeValueCost / CalculateCost), run
// last among the level-1 transformers (graph_transformer_utils.cc), all EPs.
//
// Algorithm (as ORT): first, walking the nodes backwards, collect the values from which a path
// through handled ops leads to a Transpose ("outputs leading to a transpose"). Then, in
// topological order, for each node with a Transpose producing one of its inputs: if the op has a
// handler and that input is one it can transpose, estimate the cost of pushing the Transpose
// through — per transposable input: a constant costs 0, a Transpose with the same perm whose
// consumers all have handlers costs −rank, another Transpose 0, anything else +rank; plus the
// output's rank unless the output leads to a Transpose — and push when the cost is negative (a
// Transpose consumer: always). Pushing transposes the other inputs by the inverse perm (cancelling
// Transposes, permuting constants in place, or inserting a Transpose), adjusts axes attributes,
// and puts a Transpose on the outputs. Rank = dims ≠ 1; a dim ORT does not know (the symbolic
// batch of a dynamic-batch file: dim 0 of every non-constant tensor of rank ≥ 2 here, see
// Graph::batch_symbolic) counts as ≠ 1.
//
// Not handled (ORT does them; hase leaves the Transpose where it is): Tile, ArgMin/ArgMax, the
// QuantizeLinear/DequantizeLinear family and QDQ fix-ups, Reshape with a shape that is not a
// pure permutation, the CPU-EP extensions (NHWC MaxPool/Resize for int8). Rank-5 default for
// unknown shapes is kept.
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class TransposeOptimizer : public FusionRule {
 public:
  std::string Name() const override { return "TransposeOptimizer"; }
  std::vector<std::string> AnchorOps() const override { return {"Transpose"}; }
  bool IsGraphTransformer() const override { return true; }
  int ApplyToGraph(graph::Graph& g) const override;

 private:
  RuleEffect DoTryApply(graph::Graph&, graph::NodeId) const override {
    return RuleEffect::kUnchanged;
  }
};

}  // namespace hase::kernels::rules
