// GatherSliceToSplitFusion: a tensor read by several Gathers of one index and Slices of one
// range along the same axis, together covering that axis exactly once, is cut by one Split; a
// Gather with a scalar index gets a Squeeze after its piece. torchvision's box coders and
// detection heads (boxes[:, 0::4] style reads: Faster R-CNN, RetinaNet, FCOS).
// Mirrors ORT's GatherSliceToSplitFusion (onnxruntime/core/optimizer/gather_fusion.cc),
// level 2, CPU/CUDA/ROCm, registered after EmbedLayerNormFusion and before
// MatmulTransposeFusion (graph_transformer_utils.cc). ort-cpu only here.
// Pattern: model opset ≥ 13; a value that is a graph input with several consumers, or the single
// output of a node other than Shape with more than one consumer edge, whose dims ORT knows
// (DecisionDims) with a known dim along the axis; at least two of its consumers are Gather /
// Slice reading it as input 0 (other consumers do not matter). Each of those must be a Gather on
// the axis (of the first one) with a one-element int64 constant index (rank 0: needs a Squeeze;
// [1]: its output is the piece itself), or a Slice with one-element int64 constant starts, ends,
// axes (= the axis) and steps (absent or 1), start < end after clamping; the pieces may not
// overlap and must cover the axis. Not emulated: an initializer read by several Gathers/Slices
// (ORT's third kind of candidate; constant folding removes those first in practice).
// Effect: the Gathers and Slices are removed; for each piece in axis order a Squeeze (fresh
// node, then) where needed; then one Split (axis, split sizes as a constant) writing the pieces.
#pragma once

#include <string>
#include <vector>

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class GatherSliceToSplitFusion : public FusionRule {
 public:
  std::string Name() const override { return "GatherSliceToSplitFusion"; }
  std::vector<std::string> AnchorOps() const override { return {}; }
  bool IsGraphTransformer() const override { return true; }
  int ApplyToGraph(graph::Graph& g) const override;

 private:
  RuleEffect DoTryApply(graph::Graph&, graph::NodeId) const override {
    return RuleEffect::kUnchanged;
  }
};

}  // namespace hase::kernels::rules
