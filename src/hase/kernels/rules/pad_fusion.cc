#include "hase/kernels/rules/pad_fusion.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<PadFound> PadFusion::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& pad = g.node(id);
  if (!IsOp(pad, "Pad") || pad.inputs.empty() || pad.inputs.size() > 3) return std::nullopt;
  auto mode = pad.attributes.find("mode");
  if (mode != pad.attributes.end() && mode->second.s != "constant") return std::nullopt;
  const graph::NodeId c = LoneConsumer(g, id);
  if (c == graph::kNoNode) return std::nullopt;
  const graph::Node& child = g.node(c);
  if (!(IsOp(child, "Conv") || IsOp(child, "MaxPool") || IsOp(child, "AveragePool"))) {
    return std::nullopt;
  }
  if (child.inputs.empty() || child.inputs[0] != pad.outputs[0]) return std::nullopt;
  if (child.outputs.size() > 1 && !child.outputs[1].empty()) return std::nullopt;
  // ORT refuses an AveragePool that pads by itself and leaves the padding out of the mean: the
  // fused pool could not tell its own padding from the Pad's (pad_fusion.cc:L34-L48).
  if (IsOp(child, "AveragePool") && child.IntAttr("count_include_pad", 0) == 0) {
    for (int64_t p : child.IntsAttr("pads")) {
      if (p != 0) return std::nullopt;
    }
  }
  auto ap = child.attributes.find("auto_pad");
  if (ap != child.attributes.end() && ap->second.s != "NOTSET" && !ap->second.s.empty()) {
    return std::nullopt;
  }
  std::vector<int64_t> pads;
  if (g.opset("") >= 11) {
    if (pad.inputs.size() < 2) return std::nullopt;
    const graph::Value* p = g.FindValue(pad.inputs[1]);
    if (!p || !p->is_initializer || !p->constant) return std::nullopt;
    for (double v : *p->constant) pads.push_back(static_cast<int64_t>(v));
    if (pad.inputs.size() > 2 && !pad.inputs[2].empty()) {
      const graph::Value* cv = g.FindValue(pad.inputs[2]);
      if (!cv || !cv->is_initializer || !cv->constant || cv->constant->size() != 1 ||
          (*cv->constant)[0] != 0.0) {
        return std::nullopt;
      }
    }
  } else {
    pads = pad.IntsAttr("pads");
    auto v = pad.attributes.find("value");
    if (v != pad.attributes.end() && !v->second.floats.empty() && v->second.floats[0] != 0.0f) {
      return std::nullopt;
    }
  }
  const size_t rank = pads.size() / 2;
  if (rank < 3 || pads.size() != 2 * rank) return std::nullopt;
  for (int64_t p : pads) {
    if (p < 0) return std::nullopt;
  }
  if (pads[0] != 0 || pads[1] != 0 || pads[rank] != 0 || pads[rank + 1] != 0) return std::nullopt;
  std::vector<int64_t> spatial;
  for (size_t i = 2; i < rank; ++i) spatial.push_back(pads[i]);
  for (size_t i = rank + 2; i < 2 * rank; ++i) spatial.push_back(pads[i]);
  return PadFound{id, c, spatial};
}

RuleEffect PadFusion::Apply(graph::Graph& g, const PadFound& f) const {
  const std::string x = g.node(f.pad).inputs[0];
  const std::vector<std::string> pad_sources = g.node(f.pad).source_nodes;
  g.RemoveNode(f.pad);
  graph::Node& child = g.mutable_node(f.consumer);
  std::vector<int64_t> pads = child.IntsAttr("pads");
  if (pads.size() != f.spatial_pads.size()) pads.assign(f.spatial_pads.size(), 0);
  for (size_t i = 0; i < pads.size(); ++i) pads[i] += f.spatial_pads[i];
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInts;
  a.ints = pads;
  child.attributes["pads"] = a;
  // The Pad's zeros count in the mean: ORT sets count_include_pad = 1 (pad_fusion.cc:L74-L76),
  // so the fused AveragePool is exact.
  if (IsOp(child, "AveragePool")) child.attributes["count_include_pad"] = graph::Attribute::Int(1);
  // Recorded for the list's warnings: MaxPool pads with -inf where the Pad wrote zeros
  // (kernel_list_builder.cc).
  child.attributes["fused_pad"] = graph::Attribute::Int(1);
  child.source_nodes.insert(child.source_nodes.begin(), pad_sources.begin(), pad_sources.end());
  std::vector<std::string> ins = child.inputs;
  ins[0] = x;
  g.SetInputs(f.consumer, std::move(ins));
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
