// PadFusion: a zero constant Pad in front of Conv / MaxPool / AveragePool is merged into the
// consumer's own `pads` attribute (e.g. torch's AvgPool2d export in DenseNet's transitions).
// Mirrors ORT's PadFusion (onnxruntime/core/optimizer/pad_fusion.cc, SatisfyCondition /
// VerifyNotCastChild / Apply), level 1, all EPs. Pad → Conv/MaxPool came with PR #18136 (Nov
// 2023, in 1.17); Pad → AveragePool with PR #21556 (July 2024), so onnxruntime 1.17.3 (the
// ort-cuda pin) does not fuse it — hase's ort-cuda does (a known deviation of that profile).
// Pattern: Pad(X, pads[, 0]) → Conv | MaxPool | AveragePool.
// Conditions: Pad mode "constant" with constant pads (opset ≥ 11: inputs; before: attribute)
// that are ≥ 0 and 0 on the batch and channel dims, constant value 0 (or absent); Pad's output
// has the consumer as lone consumer and is not a graph output; the consumer has no second
// output (MaxPool indices) and no auto_pad (a consumer without `pads` gets them: onnxruntime-node
// 1.30 fuses Pad → Conv without a pads attribute, measured).
// MaxPool pads with -inf where the Pad wrote zeros (results differ when inputs can be negative);
// ORT fuses it anyway and hase copies it, flagged in KernelList::warnings (issue 12, C05).
// Effect: consumer's pads += Pad's spatial pads, attribute fused_pad = 1, consumer reads X,
// Pad removed.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/pad_fusion.cc:L91-L145
//   (PadFusion::SatisfyCondition: Pad 1/2/11/13/18/19 without axes, one edge, not a graph output,
//   mode constant, constant pads and zero value, optional Cast child), :L11-L51
//   (VerifyNotCastChild: Conv 1/11, AveragePool 7/10/11/19, MaxPool 1/8/10/11/12, one output, no
//   auto_pad; an AveragePool with own non-zero pads and count_include_pad 0 is refused, L34-L48),
//   :L53-L77 (UpdatePaddingAttribute: adds the spatial pads and sets count_include_pad = 1 on an
//   AveragePool, L74-L76), :L150-L189 (Apply: pads ≥ 0, zero on N and C); registered as a
//   level-1 rewrite rule for every EP at graph_transformer_utils.cc:L136.
//   As v1.21.0, hase refuses an AveragePool with own non-zero pads and count_include_pad 0, and
//   sets count_include_pad = 1 on the fused AveragePool (exact: the Pad's zeros count in the
//   mean, so only MaxPool is flagged). Differs from v1.21.0 (pinned tags' text not read;
//   docs/kernels-json.md "ORT sources"): hase does not look through a Cast between Pad and
//   consumer (L132-L144).
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
