// PadFusion: a zero constant Pad in front of Conv / MaxPool / AveragePool is merged into the
// consumer's own `pads` attribute (e.g. torch's AvgPool2d export in DenseNet's transitions).
// Mirrors ORT's PadFusion (onnxruntime/core/optimizer/pad_fusion.cc, SatisfyCondition /
// VerifyNonCastChild / Apply), level 1, all EPs; same in both pinned releases.
// Pattern: Pad(X, pads[, 0]) → Conv | MaxPool | AveragePool.
// Conditions: Pad mode "constant" with constant pads (opset ≥ 11: inputs; before: attribute)
// that are ≥ 0 and 0 on the batch and channel dims, constant value 0 (or absent); Pad's output
// has the consumer as lone consumer and is not a graph output; the consumer has no second
// output (MaxPool indices) and no auto_pad (a consumer without `pads` gets them: onnxruntime-node
// 1.30 fuses Pad → Conv without a pads attribute, measured).
// Not a meaning-preserving rewrite in two cases, which ORT fuses anyway and hase therefore
// copies, flagged in KernelList::warnings (issue 12, C05): MaxPool pads with -inf where the Pad
// wrote zeros (results differ when inputs can be negative), and AveragePool with
// count_include_pad = 0 leaves the Pad's zeros out of the average.
// Effect: consumer's pads += Pad's spatial pads, attribute fused_pad = 1, consumer reads X,
// Pad removed.
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

struct PadFound {
  graph::NodeId pad;
  graph::NodeId consumer;
  std::vector<int64_t> spatial_pads;  // ONNX order: begins then ends, spatial dims only
};

class PadFusion : public RewriteRule<PadFound> {
 public:
  std::string Name() const override { return "PadFusion"; }
  std::vector<std::string> AnchorOps() const override { return {"Pad"}; }

 protected:
  std::optional<PadFound> Match(const graph::Graph& g, graph::NodeId id) const override;
  RuleEffect Apply(graph::Graph& g, const PadFound& f) const override;
};

}  // namespace hase::kernels::rules
