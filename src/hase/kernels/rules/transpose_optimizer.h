// TransposeOptimizer: pushes Transpose nodes down through the ops that can take a permuted input
// (elementwise, broadcasting, reductions, Softmax, Concat, Split, Squeeze/Unsqueeze, Slice, Pad,
// Shape), so that opposite Transposes meet and cancel. ConvNeXt's channels-first LayerNorm2d
// (Transpose → LayerNorm → Transpose) loses both Transposes this way, and its blocks keep one
// Transpose inside the LayerNorm (which then fuses as SimplifiedLayerNormalization).
// Mirrors ORT's TransposeOptimizer, run last among the level-1 transformers, all EPs (and again
// at level 2 for CPU-EP-specific handlers that do not apply here). Sources, read in the
// microsoft/onnxruntime versions stored by the source index (which records commits, not release
// tags, so these were not matched to the 1.30.0 tag; behaviour checked against onnxruntime-node
// 1.30.0 instead: ConvNeXt-Tiny and tests/kernels/front_end_cases_test.cc node for node):
//   onnxruntime/core/optimizer/transpose_optimization/onnx_transpose_optimization.cc
//     (commit 02a72958435233941e57d3b355751904d2029412): OptimizeImpl, ProcessTranspose,
//     DefaultCostCheck, CalculateCost, EstimateTransposeInputsCost, EstimateTransposeValueCost,
//     EstimateValueRank, CanLikelyRemoveTranspose, TransposeInputImpl, TransposeOutput(s),
//     UnsqueezeInput, NormalizeInputRanks, the Handle* functions and handler_map;
//   onnxruntime/core/optimizer/transpose_optimization/ort_transpose_optimization.cc
//     (commit 128eaec7f9ef0c250b7ba9be3f1b0770ad2c4375): OrtEPCostCheck, OrtExtendedHandlers;
//   onnxruntime/core/optimizer/graph_transformer_utils.cc
//     (commit 001290de2e0ce8429d461156843f7ce9b19e7a5d): GenerateTransformers, Level1/Level2.
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
