// InsertCastTransformer: a float16 node the CPU execution provider has no float16 kernel for
// runs in float, between a Cast to float on each float16 input and a Cast back to float16 on
// each float16 output; then Cast pairs that cancel are removed
// (RemoveDuplicateCastTransformer). ort-cpu only.
// Mirrors ORT's InsertCastTransformer (onnxruntime/core/optimizer/insert_cast_transformer.cc),
// which InferenceSession::TransformGraph applies once after partitioning and after the level 2+
// transformers, and before copy insertion: no fusion sees its Casts. (ORT's level-2 fusions
// skip float16 nodes the CPU EP left unassigned; hase's rules model that with their float16
// conditions, e.g. QuickGeluFusion(allow_float16 = false) on ort-cpu.)
// A node "has no float16 kernel" when the CPU EP's kernel registry has none for its types at
// partitioning: cpu_float16_kernels.h holds that list (onnxruntime v1.21.0 registrations).
//
// Pattern: every live node, in three steps, as ORT's ApplyImpl takes them.
// Conditions:
// 1. ForceSingleNodeCPUFloat16ToFloat32: a node the CPU EP runs in float16 that reads a value
//    from another node, writes no graph output, has float16 inputs (for a variadic input, the
//    first only) all produced by, and float16 outputs all consumed by, nodes that will be cast
//    is run in float too (node index order; each decision sees the ones before it). ORT also
//    asks that a float CPU kernel exists: every op hase meets has one.
// 2. In ORT's topological order, each node left without a kernel (and with no subgraph) that
//    reads a float16 value gets Cast{to=float} on each such input (one Cast per value, shared
//    by later readers: an initializer's Cast stays, there is no constant folding after this),
//    and each float16 output is written through a new float value and Cast{to=float16}.
// 3. RemoveDuplicateCastTransformer, on every Cast (node index order, model Casts included,
//    float models too): a Cast whose consumer Casts back to its input type (the consumer not
//    writing a graph output, the pair not losing precision) loses that consumer, whose readers
//    read the first Cast's input; a Cast all of whose consumers were removed or are Casts, and
//    that writes no graph output, is removed too.
// Effect: Casts (op Cast, ai.onnx, fresh ORT node indices, named InsertedPrecisionFreeCast_<value>
//   as ORT names them) are real kernels; the float nodes read and write float values.
// A float16 op without a CPU kernel that has an ONNX function body (Softmax 13, …) reaches this
//   rule already replaced by its body (FunctionInlining, function_inlining.h), as in ORT; the
//   ones libonnx 1.12 has no body for (LeakyRelu 16, PRelu 16) are cast around. Nodes with a
//   subgraph (If, Loop, Scan) are left alone, as ORT leaves them; their bodies are not searched.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/insert_cast_transformer.cc:L17-L26
//   (NeedInsertCast), L28-L47 (AddCastNode), L51-L64 (NodeNeedsInputCastToFp32), L87-L235
//   (IsIsolatedFp16NodeOnCpu, ForceSingleNodeCPUFloat16ToFloat32), L245-L331 (type groups,
//   UnsafeCast), L333-L454 (RemoveDuplicateCastTransformer::ApplyImpl), L457-L572 (ApplyImpl);
//   run at onnxruntime/core/session/inference_session.cc:L1332-L1349 (after Partition at L1328
//   and the level 2+ loop at L1334). Checked against onnxruntime-node 1.30.0
//   (tests/kernels/insert_cast_transformer_test.cc).
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class InsertCastTransformer : public FusionRule {
 public:
  std::string Name() const override { return "InsertCastTransformer"; }
  std::vector<std::string> AnchorOps() const override { return {}; }
  bool IsGraphTransformer() const override { return true; }
  bool AppliesAfterOptimizationLevels() const override { return true; }
  // Returns the number of Casts inserted plus the number removed.
  int ApplyToGraph(graph::Graph& g) const override;

 private:
  RuleEffect DoTryApply(graph::Graph&, graph::NodeId) const override {
    return RuleEffect::kUnchanged;
  }
};

}  // namespace hase::kernels::rules
