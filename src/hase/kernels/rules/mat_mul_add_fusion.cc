#include "hase/kernels/rules/mat_mul_add_fusion.h"

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {

std::optional<MatMulAddFound> MatMulAddFusion::Match(const graph::Graph& g,
                                                     graph::NodeId id) const {
  const graph::Node& mm = g.node(id);
  if (!IsOp(mm, "MatMul") || mm.inputs.size() != 2) return std::nullopt;
  const graph::Value* a = g.FindValue(mm.inputs[0]);
  const graph::Value* b = g.FindValue(mm.inputs[1]);
  if (!a || !b || !a->shape_known() || !b->shape_known()) return std::nullopt;
  if (a->shape.size() != 2 || b->shape.size() != 2 || a->elem_type != 1) return std::nullopt;
  const graph::NodeId add = LoneConsumer(g, id);
  if (add == graph::kNoNode || !IsOp(g.node(add), "Add") || g.node(add).inputs.size() != 2) {
    return std::nullopt;
  }
  const graph::Node& ad = g.node(add);
  const std::string& c = ad.inputs[0] == mm.outputs[0] ? ad.inputs[1] : ad.inputs[0];
  const graph::Value* cv = g.FindValue(c);
  if (!cv || !cv->shape_known()) return std::nullopt;
  const int64_t m = a->shape[0], n = b->shape[1];
  const auto& s = cv->shape;
  const bool ok = (s.size() == 1 && s[0] == n) ||
                  (s.size() == 2 && (s[0] == 1 || s[0] == m) && s[1] == n);
  if (!ok) return std::nullopt;
  return MatMulAddFound{id, add, c};
}

RuleEffect MatMulAddFusion::Apply(graph::Graph& g, const MatMulAddFound& f) const {
  std::vector<std::string> ins = g.node(f.matmul).inputs;
  ins.push_back(f.bias);
  g.SetInputs(f.matmul, std::move(ins));
  AbsorbConsumer(g, f.matmul, f.add, /*record_op=*/false);
  g.mutable_node(f.matmul).op_type = "Gemm";
  g.mutable_node(f.matmul).order_key = g.NewOrderKey();  // ORT adds the Gemm anew
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
