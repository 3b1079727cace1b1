// CommonSubexpressionElimination: nodes that compute the same value from the same inputs are
// merged; consumers of the later ones read the first. Value numbering in ORT's topological
// order: every graph input and initializer is its own class (by name: two initializers with the
// same values are different unless ConstantSharing made them one), and a node output's class is
// (op, domain, input classes, attributes, output index). torch.onnx writes one Shape/Gather/
// Unsqueeze chain per use of x.shape (Swin-T: one Shape per window reshape, ViT-B/16: per block),
// which ORT keeps once.
// Mirrors ORT's CommonSubexpressionElimination (onnxruntime/core/optimizer/
// common_subexpression_elimination.cc), a level-1 graph transformer, all EPs, every step.
// Conditions (ORT's): a node is not merged when it has a subgraph (If, Loop, Scan), is
// non-deterministic (ai.onnx RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike,
// Multinomial, Dropout; every op of another domain but com.microsoft QuantizeLinear and
// DequantizeLinear), or is a DequantizeLinear. Attributes are equal when name, type and value
// are (floats by ==); a tensor attribute only when both are one-element [1] tensors of float,
// float16 or int64 held as raw_data with equal value (ConstantOfShape's `value`); GRAPH,
// TENSORS, SPARSE_TENSOR(S) and TYPE_PROTO(S) attributes are never equal. Trailing omitted
// optional inputs are ignored. An output that is a graph output is never replaced; a node is
// removed once none of its outputs is read or is a graph output.
// ORT quirk kept: ORT gives every omitted value ("") one shared entry, so an omitted optional
// input after a node with an omitted output belongs to that output's class (not the empty class).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/common_subexpression_elimination.cc:
//   L400-L514 (ApplyImpl: value numbering L422-L466, replacement and removal L472-L511),
//   L145-L166 (Normalize: trailing omitted inputs), L176-L236 (AreEqual, scalar tensor
//   attributes), L317-L329 (class equality), L375-L384 (IsNodeSupported);
//   IsOperationDeterministic in onnxruntime/core/optimizer/utils.cc:L274-L302, CheckOutputEdges
//   L367-L373; registered at level 1 for every EP after ConstantSharing and before
//   ConstantFolding at graph_transformer_utils.cc:L225-L236. Pinned tags' text not read
//   (docs/kernels-json.md "ORT sources"); checked against onnxruntime-node 1.30.0
//   (tests/kernels/front_end_cases_test.cc, CommonSubexpressionElimination).
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class CommonSubexpressionElimination : public FusionRule {
 public:
  std::string Name() const override { return "CommonSubexpressionElimination"; }
  std::vector<std::string> AnchorOps() const override { return {}; }
  bool IsGraphTransformer() const override { return true; }
  // Returns the number of nodes whose outputs were replaced by an equal node's.
  int ApplyToGraph(graph::Graph& g) const override;

 private:
  RuleEffect DoTryApply(graph::Graph&, graph::NodeId) const override {
    return RuleEffect::kUnchanged;
  }
};

}  // namespace hase::kernels::rules
