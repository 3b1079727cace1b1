// FunctionInlining: a node the CPU execution provider has no kernel for, whose ONNX op has a
// function body, is replaced by that body (ORT's partitioner inlines it, then partitions the new
// nodes again). ort-cpu only; in practice any HardSwish, or a float16 Softmax, LogSoftmax,
// GreaterOrEqual or LessOrEqual, which then runs as ReduceMax → Sub → Exp → ReduceSum → Div (and
// so on) in float between Casts (InsertCastTransformer) instead of as one float Softmax.
//
// Pattern: every live ai.onnx node, in node order, repeated until no node is inlined (a body
// node may itself be a function op without a kernel).
// Conditions: the CPU EP has no kernel for the node (CpuEpHasKernel, cpu_float16_kernels.h: a
// node ORT leaves unassigned after partitioning — a float16 node of an op without a float16
// kernel, or a HardSwish in any type), it
// has no subgraph, and the op's schema at the opset the model imports has a function body —
// plain (GreaterOrEqual 12/16, LessOrEqual 12/16, HardSwish 14, …) or built from the node's
// attributes and input types (Softmax 13, LogSoftmax 13, …) — in the ONNX release hase links
// (libonnx 1.12).
// Effect: the node is removed; each body node is added (a fresh ORT node index, in body order),
// named as ORT's function_utils::Specialize names it: "_inlfunc_<op>[_token_<n>]" + "_" + the
// body's name (values too: the body's intermediate value "X_Exp" becomes
// "_inlfunc_Softmax_X_Exp"); formal inputs and outputs read and write the node's values;
// attribute references take the node's attribute or the schema default; a body Constant becomes
// an initializer (Graph::InlineFunctionProto). Intermediate values get the dtype and shape ONNX
// shape inference gives them. Returns the number of nodes inlined.
// Differences: ORT 1.21 (and onnxruntime-node 1.30) link a newer ONNX whose schemas also give
// LeakyRelu 16 and PRelu 16 function bodies; libonnx 1.12 has none, so hase keeps those ops
// and casts around them (measured with 1.30: ORT inlines both, e.g. float16 LeakyRelu 16 →
// Cast, Mul, Less, Where, Cast). ORT inlines during partitioning, between level 1 and level 2;
// hase runs this rule after the level-1 rules in each pass, so a level-1 rule may see the body
// in a later pass (no level-1 rule matches the bodies above). Local (model) functions are not
// modelled: hase's loader does not read them.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/framework/graph_partitioner.cc:L558-L585
//   (InlineNodes: nodes with no EP that CanBeInlined) and L793-L829 (PartitionOnnxFormatModel:
//   partition, inline, resolve, until nothing is inlined); onnxruntime/core/graph/graph.cc:
//   L5263-L5288 (Graph::InlineFunction: "_inlfunc_" + op, Specialize), L5220-L5240
//   (InlineFunctionProto: Constant nodes become initializers), L3912-L3948 (GenerateNodeName),
//   L3200-L3210 (schema defaults added to a node's attributes at resolve);
//   function_utils.cc:L373-L398 (Inliner: prefix_ + "_" + name), L443-L463 (attribute
//   references: the call node's value, else dropped), L504-L512 (Specialize).
//   Measured with onnxruntime-node 1.30.0 (tests/kernels/float16_fusion_test.cc,
//   FunctionInlining*): float16 Softmax 13 and 17, LogSoftmax 13, HardSwish 14, GreaterOrEqual 16,
//   LessOrEqual 12 and a scaled dot-product attention block list the same kernels, in the same
//   order, with the same value names; Softmax 11 (no body) stays one Softmax between Casts.
//   Not comparable: ORT rejects a float16 MeanVarianceNormalization 13 at session creation (its
//   body adds a float ε to a float16 value); hase inlines it.
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class FunctionInlining : public FusionRule {
 public:
  std::string Name() const override { return "FunctionInlining"; }
  std::vector<std::string> AnchorOps() const override { return {}; }
  bool IsGraphTransformer() const override { return true; }
  // Returns the number of nodes inlined.
  int ApplyToGraph(graph::Graph& g) const override;

 private:
  RuleEffect DoTryApply(graph::Graph&, graph::NodeId) const override {
    return RuleEffect::kUnchanged;
  }
};

}  // namespace hase::kernels::rules
