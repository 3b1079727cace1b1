#include "hase/kernels/rules/matmul_transpose_fusion.h"

#include <numeric>

#include "hase/kernels/rules/cpu_float16_kernels.h"
#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

bool IsFusedMatMul(const graph::Node& n) {
  return !n.removed && n.domain == "com.microsoft" && n.op_type == "FusedMatMul";
}

// FLOAT, FLOAT16, DOUBLE, BFLOAT16 (IsAllowedFusedMatMulDataType).
bool AllowedType(int32_t t) { return t == 1 || t == 10 || t == 11 || t == 16; }

// The Transpose producing `value` if it can be folded (GetTransposeNodeFromOutput).
graph::NodeId FoldableTranspose(const graph::Graph& g, const std::string& value, bool* is_trans,
                                bool* is_trans_batch) {
  *is_trans = *is_trans_batch = false;
  const graph::NodeId t = g.Producer(value);
  if (t == graph::kNoNode) return graph::kNoNode;
  const graph::Node& n = g.node(t);
  if (!IsOp(n, "Transpose") || n.inputs.empty()) return graph::kNoNode;
  for (const std::string& o : n.outputs) {
    if (!o.empty() && g.IsGraphOutput(o)) return graph::kNoNode;
  }
  std::vector<int64_t> perm;
  if (n.attributes.count("perm")) {
    perm = n.IntsAttr("perm");
  } else {
    const graph::Value* in = g.FindValue(n.inputs[0]);
    const std::vector<int64_t>* d = in ? DecisionDims(g, *in) : nullptr;
    if (d == nullptr) return graph::kNoNode;
    perm.resize(d->size());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  const size_t rank = perm.size();
  if (rank < 2) return graph::kNoNode;
  const int64_t last_axis = static_cast<int64_t>(rank) - 1;
  const size_t last_axis_index =
      perm[rank - 1] == last_axis ? rank - 1 : (perm[rank - 2] == last_axis ? rank - 2 : rank);
  if (last_axis_index == rank) return graph::kNoNode;
  if (rank >= 3) {
    if (perm[0] != 0 && perm[0] != 1) return graph::kNoNode;
    for (size_t i = 0; i + 3 < rank; ++i) {
      if (perm[i] + 1 != perm[i + 1]) return graph::kNoNode;
    }
  }
  *is_trans = last_axis_index == rank - 2;
  *is_trans_batch = rank >= 3 && perm[0] == 1;
  return t;
}

}  // namespace

std::optional<MatmulTransposeFound> MatmulTransposeFusion::Match(const graph::Graph& g,
                                                                 graph::NodeId id) const {
  const graph::Node& mm = g.node(id);
  const bool fused = IsFusedMatMul(mm);
  if ((!IsOp(mm, "MatMul") && !fused) || mm.inputs.size() < 2) return std::nullopt;
  // IsSupportedProvider: the MatMul must be assigned to the CPU EP. A float16 MatMul has no CPU
  // kernel on x86-64 and stays unassigned until InsertCastTransformer (measured:
  // Float16Fusion.FunctionInliningAttention keeps Transpose → Cast → MatMul).
  if (!CpuEpHasKernel(g, mm)) return std::nullopt;
  MatmulTransposeFound f;
  f.matmul = id;
  if (!AllowedType(ElemType(g, mm.inputs[0]))) return std::nullopt;
  if (!fused || mm.IntAttr("transBatchA", 0) == 0) {
    f.left = FoldableTranspose(g, mm.inputs[0], &f.trans_left, &f.trans_batch_left);
  }
  if (!AllowedType(ElemType(g, mm.inputs[1]))) return std::nullopt;
  if (!fused || mm.IntAttr("transBatchB", 0) == 0) {
    f.right = FoldableTranspose(g, mm.inputs[1], &f.trans_right, &f.trans_batch_right);
  }
  if (f.left == graph::kNoNode) f.trans_left = f.trans_batch_left = false;
  if (f.right == graph::kNoNode) f.trans_right = f.trans_batch_right = false;
  if (f.trans_batch_left || f.trans_batch_right) {
    // Padding a lower-rank side with 1s would make transBatch wrong: both ranks known, equal.
    const graph::Value* a = g.FindValue(mm.inputs[0]);
    const graph::Value* b = g.FindValue(mm.inputs[1]);
    const std::vector<int64_t>* da = a ? DecisionDims(g, *a) : nullptr;
    const std::vector<int64_t>* db = b ? DecisionDims(g, *b) : nullptr;
    if (!da || !db || da->size() != db->size()) {
      if (f.trans_batch_left) {
        f.left = graph::kNoNode;
        f.trans_left = f.trans_batch_left = false;
      }
      if (f.trans_batch_right) {
        f.right = graph::kNoNode;
        f.trans_right = f.trans_batch_right = false;
      }
    }
  }
  if (f.left == graph::kNoNode && f.right == graph::kNoNode) return std::nullopt;
  return f;
}

RuleEffect MatmulTransposeFusion::Apply(graph::Graph& g, const MatmulTransposeFound& f) const {
  graph::Node mm = g.node(f.matmul);
  std::vector<std::string> inputs = mm.inputs;
  std::vector<std::string> absorbed;
  auto fold = [&](graph::NodeId t, int side) {
    if (t == graph::kNoNode) return;
    const graph::Node tn = g.node(t);
    inputs[side] = tn.inputs[0];
  };
  fold(f.left, 0);
  fold(f.right, 1);
  g.SetInputs(f.matmul, inputs);
  // A Transpose that fed only this MatMul goes (ORT removes it once its consumer count is 0).
  for (graph::NodeId t : {f.left, f.right}) {
    if (t == graph::kNoNode || g.node(t).removed) continue;
    const std::string& out = g.node(t).outputs[0];
    if (g.Consumers(out).empty() && !g.IsGraphOutput(out)) {
      const std::vector<std::string>& src = g.node(t).source_nodes;
      absorbed.insert(absorbed.end(), src.begin(), src.end());
      g.RemoveNode(t);
    }
  }
  const bool fused = IsFusedMatMul(mm);
  auto flag = [&](const char* key, bool v) {
    return static_cast<int64_t>(v ^ (fused && mm.IntAttr(key, 0) != 0));
  };
  graph::Node& n = g.mutable_node(f.matmul);
  float alpha = 1.0f;
  if (fused) {
    if (auto it = mm.attributes.find("alpha"); it != mm.attributes.end() && !it->second.floats.empty()) {
      alpha = it->second.floats[0];
    }
  }
  n.attributes["transA"] = graph::Attribute::Int(flag("transA", f.trans_left));
  n.attributes["transB"] = graph::Attribute::Int(flag("transB", f.trans_right));
  n.attributes["transBatchA"] = graph::Attribute::Int(flag("transBatchA", f.trans_batch_left));
  n.attributes["transBatchB"] = graph::Attribute::Int(flag("transBatchB", f.trans_batch_right));
  n.attributes["alpha"] = graph::Attribute::Float(alpha);
  n.op_type = "FusedMatMul";
  n.domain = "com.microsoft";
  n.order_key = g.NewOrderKey();  // ORT adds the fused node anew
  n.source_nodes.insert(n.source_nodes.end(), absorbed.begin(), absorbed.end());
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
