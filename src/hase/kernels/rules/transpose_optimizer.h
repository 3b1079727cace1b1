// TransposeOptimizer: pushes Transpose nodes down through the ops that can take a permuted input
// (elementwise, broadcasting, reductions, Softmax, Concat, Split, Squeeze/Unsqueeze, Slice, Pad,
// Shape), so that opposite Transposes meet and cancel. ConvNeXt's channels-first LayerNorm2d
// (Transpose → LayerNorm → Transpose) loses both Transposes this way, and its blocks keep one
// Transpose inside the LayerNorm (which then fuses as SimplifiedLayerNormalization).
// Mirrors ORT's TransposeOptimizer, run last among the level-1 transformers, all EPs (and again
// at level 2 for CPU-EP-specific handlers — int8 NHWC MaxPool/Resize — that do not apply here).
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
// and puts a Transpose on the outputs. Rank = dims ≠ 1 of the value as ORT sees it
// (Value::ort_shape, graph/ort_shape_view.h): a dim ORT does not know (the symbolic batch, a dim
// computed from it) counts as ≠ 1, a value whose rank ORT does not know counts 5, and an input
// of unknown rank stops rank normalisation (NormalizeInputRanks) — ViT-B/16's residual Adds
// after its computed attention Reshapes keep their Transposes, as in ORT. Without that view
// (a file ONNX cannot infer unbound) the bound dims are used, dim 0 counting as ≠ 1 in a
// dynamic-batch file (Graph::batch_symbolic).
// Gather with a scalar index has a handler (onnxruntime-node 1.30; not in the v1.21.0 text):
// Transpose → Gather(axis a) becomes Gather(axis perm[a]) → Transpose, like a Squeeze — Swin-T's
// k = qkv[1] before k.transpose(-2, -1) (measured on small models and Swin-T).
//
// Not handled (ORT does them; hase leaves the Transpose where it is): Tile, ArgMin/ArgMax, the
// QuantizeLinear/DequantizeLinear family and QDQ fix-ups, Reshape with a shape that is not a
// pure permutation, the CPU-EP extensions (NHWC MaxPool/Resize for int8). Rank-5 default for
// unknown shapes is kept.
// Mirrors: onnxruntime v1.21.0
//   onnxruntime/core/optimizer/transpose_optimization/onnx_transpose_optimization.cc:
//   OptimizeImpl L3146-L3301 (outputs leading to a Transpose, the topological walk),
//   ProcessTranspose L2670-L2704, DefaultCostCheck L2654-L2667, CalculateCost L2619-L2651,
//   EstimateTransposeInputsCost L1546-L1557, EstimateTransposeValueCost L1488-L1543,
//   IsConstant L1464-L1484, CanLikelyRemoveTranspose L1438-L1450, EstimateValueRank L1420-L1433;
//   TransposeInputImpl L1128-L1310, Permute1DConstant L1103-L1124, UnsqueezeInput L971-L1101,
//   NormalizeInputRanks L1326-L1353, TransposeOutput(s) L1368-L1401; handlers
//   HandleSimpleNodeBase L1577-L1587, NonScalarInputs L1612-L1623, HandleSimpleNodeWithAxis
//   L1628-L1649 (Split L1651, Concat L1657), HandleSoftHardMax L1664-L1689, HandleShape
//   L1693-L1748, PermuteInput L1753-L1777, HandlePad L1810-L1844, HandleReduceOpWithArg
//   L1848-L1884, HandleReduceOps L1886-L1953, HandleSqueeze L1957-L1988, HelpHandleUnsqueeze /
//   HandleUnsqueeze L1994-L2010, HandleSlice L2113-L2190, RemoveCancelingTransposeNodes
//   L2235-L2282, HandleTransposeImpl L2286-L2320, HandleTranspose L2322-L2330, HandleReshape
//   L2394-L2482; handler_map L2487-L2592.
//   .../transpose_optimization/ort_transpose_optimization.cc: OrtExtendedHandlers L129-L151,
//   OrtEPCostCheck L153-L179 (both act only on nodes already assigned to the CPU EP).
//   onnxruntime/core/optimizer/graph_transformer_utils.cc: L261-L263 (last of level 1),
//   L272-L274 (again at level 2, CPU EP).
//   Differences seen in a later version of onnx_transpose_optimization.cc stored by the source
//   index (commit 02a72958…, not a tag) and followed here: Gelu, ReduceL1 and ReduceL2 have
//   handlers; Resize leaves the base map for the EP-aware extended handler. Pinned tags' text not
//   read (docs/kernels-json.md "ORT sources"); checked against onnxruntime-node 1.30.0 on
//   ConvNeXt-Tiny and tests/kernels/front_end_cases_test.cc (ConvNextBlockTransposeOptimizer,
//   TransposeOptimizerHandlers).
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
