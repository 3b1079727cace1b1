// PadFusion: a zero constant Pad in front of Conv / MaxPool / AveragePool is merged into the
// consumer's own `pads` attribute (e.g. torch's AvgPool2d export in DenseNet's transitions).
// Mirrors ORT's PadFusion (onnxruntime/core/optimizer/pad_fusion.cc), level 1, all EPs.
// Pattern: Pad(X, pads[, 0]) → Conv | MaxPool | AveragePool.
// Conditions: Pad mode "constant" with constant pads (opset ≥ 11: inputs; before: attribute)
// that are ≥ 0 and 0 on the batch and channel dims, constant value 0 (or absent); Pad's output
// has the consumer as lone consumer and is not a graph output; the consumer has no second output
// (MaxPool indices) and no auto_pad; AveragePool only with count_include_pad = 1 unless all
// pads are 0. Effect: consumer's pads += Pad's spatial pads, consumer reads X, Pad removed.
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
