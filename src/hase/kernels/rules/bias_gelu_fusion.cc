#include "hase/kernels/rules/bias_gelu_fusion.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<BiasGeluFound> BiasGeluFusion::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& add = g.node(id);
  if (!IsOp(add, "Add") || add.inputs.size() != 2) return std::nullopt;
  const graph::Value* a = g.FindValue(add.inputs[0]);
  const graph::Value* b = g.FindValue(add.inputs[1]);
  if (!a || !b) return std::nullopt;
  // The dims ORT reads: an operand of unknown rank — a Reshape to a computed, batch-dependent
  // target upstream — stops the fusion in ORT.
  const std::vector<int64_t>* pa = DecisionDims(g, *a);
  const std::vector<int64_t>* pb = DecisionDims(g, *b);
  if (!pa || !pb || pa->empty() || pb->empty()) return std::nullopt;
  const std::vector<int64_t>& da = *pa;
  const std::vector<int64_t>& db = *pb;
  if (da.back() == graph::kOrtUnknownDim || da.back() != db.back()) return std::nullopt;
  BiasGeluFound f{id, graph::kNoNode, "", ""};
  if (da.size() == 1) {
    f.x = add.inputs[1];
    f.bias = add.inputs[0];
  } else if (db.size() == 1) {
    f.x = add.inputs[0];
    f.bias = add.inputs[1];
  } else {
    return std::nullopt;
  }
  f.gelu = LoneConsumer(g, id);
  if (f.gelu == graph::kNoNode) return std::nullopt;
  const graph::Node& gelu = g.node(f.gelu);
  if (gelu.removed || gelu.domain != "com.microsoft" || gelu.op_type != "Gelu") return std::nullopt;
  return f;
}

RuleEffect BiasGeluFusion::Apply(graph::Graph& g, const BiasGeluFound& f) const {
  const std::vector<std::string> add_sources = g.node(f.add).source_nodes;
  g.RemoveNode(f.add);
  g.SetInputs(f.gelu, {f.x, f.bias});
  graph::Node& n = g.mutable_node(f.gelu);
  n.op_type = "BiasGelu";
  n.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  n.source_nodes.insert(n.source_nodes.begin(), add_sources.begin(), add_sources.end());
  return RuleEffect::kRemovedAnchor;
}

}  // namespace hase::kernels::rules
