// ConstantFolding: a node whose inputs are all constant is computed once at load time, so it
// launches no kernel; its outputs become constants (metadata only: hase never needs values).
// Mirrors ORT's ConstantFolding (onnxruntime/core/optimizer/constant_folding.cc), level 1, all
// EPs. Conditions: ai.onnx op, at least one input, every non-empty input constant, no output is
// a graph output, the op is deterministic (not RandomNormal/RandomUniform/…/Multinomial).
// A Shape node is folded, as in ORT, when ORT knows every dim of its input (Value::ort_shape,
// the file's dims with the batch open: graph/ort_shape_view.h) — Swin's window-padding
// arithmetic over static dims; a Shape of a batch-dependent tensor stays (the view-flatten
// chain goes through ReshapeFusion as in ORT; a chain left in the graph is kept, under ort-cuda
// marked cpu_placed: kernels/cpu_placement.h). Folded values take the integers ORT computes
// (Value::ort_value) when known, so later rules (ReshapeFusion) read them.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/constant_folding.cc:L134-L345
//   (ConstantFolding::ApplyImpl: a deterministic node without subgraphs whose inputs are all
//   constant, L180-L190, is run once on the CPU EP and replaced by initializers, L229-L337),
//   :L33-L93 (ConstantFoldShapeNode: a Shape whose input dims are all known), :L96-L132 (an If
//   with a constant condition is inlined; not mirrored); IsOperationDeterministic in
//   onnxruntime/core/optimizer/utils.cc:L289-L302; registered at level 1 for every EP at
//   graph_transformer_utils.cc:L236-L237. Pinned tags' text not read (docs/kernels-json.md
//   "ORT sources").
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class ConstantFolding : public RewriteRule<graph::NodeId> {
 public:
  std::string Name() const override { return "ConstantFolding"; }
  bool RefinesOrtShapes() const override { return true; }
  std::vector<std::string> AnchorOps() const override { return {}; }  // any op

 protected:
  std::optional<graph::NodeId> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const graph::NodeId& id) const override;
};

}  // namespace hase::kernels::rules
