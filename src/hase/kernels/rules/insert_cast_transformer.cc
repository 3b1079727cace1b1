#include "hase/kernels/rules/insert_cast_transformer.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "hase/graph/topological_order.h"
#include "hase/kernels/rules/cpu_float16_kernels.h"
#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

using graph::Graph;
using graph::Node;
using graph::NodeId;

constexpr int32_t kFloat = 1;
constexpr int32_t kFloat16 = 10;
constexpr char kCastPrefix[] = "InsertedPrecisionFreeCast_";

bool IsFloat16(const Graph& g, const std::string& name) {
  return !name.empty() && ElemType(g, name) == kFloat16;
}

// Nodes with a GRAPH attribute: ORT casts neither them nor around them (L21-L24, L96).
bool ContainsSubgraph(const Node& n) {
  return n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan");
}

// Ops whose one formal input is variadic: IsIsolatedFp16NodeOnCpu looks at its first actual
// input only (the `break` at L149/L152).
bool HasVariadicInput(const Node& n) {
  static const std::unordered_set<std::string> k = {"Concat", "Max", "Min", "Sum", "Mean"};
  return n.domain.empty() && k.count(n.op_type) > 0;
}

// Live node ids in ORT node index order (graph.Nodes()).
std::vector<NodeId> ByNodeIndex(const Graph& g) {
  std::vector<NodeId> ids;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    if (!g.node(id).removed) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end(),
            [&](NodeId a, NodeId b) { return g.node(a).order_key < g.node(b).order_key; });
  return ids;
}

class Inserter {
 public:
  explicit Inserter(Graph& g) : g_(g), assigned_(g.nodes().size(), false) {
    for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
      const Node& n = g.node(id);
      if (!n.removed) assigned_[id] = CpuEpHasKernel(g, n);
      names_.insert(n.name);
    }
  }

  // NodeNeedsInputCastToFp32 (L51-L64): unassigned with a float16 input.
  bool NeedsInputCast(NodeId id) const {
    if (assigned_[id]) return false;
    for (const auto& in : g_.node(id).inputs) {
      if (IsFloat16(g_, in)) return true;
    }
    return false;
  }

  // IsIsolatedFp16NodeOnCpu (L87-L223), with the fp32 kernel lookup (L213-L219) taken as found.
  bool IsIsolatedFloat16Node(NodeId id) const {
    const Node& n = g_.node(id);
    if (!assigned_[id] || ContainsSubgraph(n)) return false;
    bool has_input_edge = false;
    for (const auto& in : n.inputs) {
      if (!in.empty() && g_.Producer(in) != graph::kNoNode) has_input_edge = true;
    }
    if (!has_input_edge) return false;
    for (const auto& out : n.outputs) {
      if (!out.empty() && g_.IsGraphOutput(out)) return false;
    }
    const size_t checked_inputs = HasVariadicInput(n) ? std::min<size_t>(1, n.inputs.size())
                                                      : n.inputs.size();
    bool any = false;
    for (size_t i = 0; i < checked_inputs; ++i) {
      if (!IsFloat16(g_, n.inputs[i])) continue;
      any = true;
      const NodeId p = g_.Producer(n.inputs[i]);
      if (p != graph::kNoNode && !NeedsInputCast(p)) return false;
    }
    if (!any) return false;
    any = false;
    for (const auto& out : n.outputs) {
      if (!IsFloat16(g_, out)) continue;
      any = true;
      for (NodeId c : g_.Consumers(out)) {
        if (!NeedsInputCast(c)) return false;
      }
    }
    return any;
  }

  // ForceSingleNodeCPUFloat16ToFloat32 (L225-L235).
  void ForceIsolatedNodesToFloat() {
    for (NodeId id : ByNodeIndex(g_)) {
      if (IsIsolatedFloat16Node(id)) assigned_[id] = false;
    }
  }

  // InsertCastTransformer::ApplyImpl's loop (L470-L547). Returns the Casts added.
  int InsertCasts() {
    int added = 0;
    std::map<std::string, std::string> cast_of;  // float16 value → its float Cast (input_def_updates)
    for (NodeId id : graph::OrtTopologicalOrder(g_)) {
      const Node& n = g_.node(id);
      if (assigned_[id] || ContainsSubgraph(n)) continue;
      std::vector<std::string> inputs = n.inputs;
      bool casted = false;
      for (std::string& in : inputs) {
        if (!IsFloat16(g_, in)) continue;
        auto it = cast_of.find(in);
        if (it == cast_of.end()) {
          const std::string name = NewFloatValue(in);
          AddCastNode(name, in, name, kFloat);
          it = cast_of.emplace(in, name).first;
          ++added;
        }
        in = it->second;
        casted = true;
      }
      if (!casted) continue;
      assigned_[id] = true;
      std::vector<std::string> outputs = g_.node(id).outputs;
      // (float value, float16 output it is cast back to), in output order
      std::vector<std::pair<std::string, std::string>> cast_back;
      for (std::string& out : outputs) {
        if (!IsFloat16(g_, out)) continue;
        const std::string name = NewFloatValue(out);
        cast_back.emplace_back(name, out);
        out = name;
      }
      Node& m = g_.mutable_node(id);
      if (auto a = m.attributes.find("dtype");  // generator ops' output type (L508-L520)
          a != m.attributes.end() && !a->second.ints.empty() && a->second.ints[0] == kFloat16) {
        a->second.ints[0] = kFloat;
      }
      g_.SetInputs(id, std::move(inputs));
      g_.SetOutputs(id, std::move(outputs));  // before the Casts take over the float16 names
      for (const auto& [name, out] : cast_back) {
        AddCastNode(name, name, out, kFloat16);
        ++added;
      }
    }
    return added;
  }

 private:
  // AddCastNode (L28-L47), first half: a float value named InsertedPrecisionFreeCast_<value>
  // (made unique as Graph::GenerateNodeName does), shaped as `value`. Returns its name, which
  // the Cast node writing or reading it also takes.
  std::string NewFloatValue(const std::string& value) {
    const std::string base = kCastPrefix + value;
    std::string name = base;
    while (names_.count(name) || g_.FindValue(name) != nullptr) {
      name = base + "_token_" + std::to_string(name_counter_++);
    }
    names_.insert(name);
    graph::Value v;
    if (const graph::Value* old = g_.FindValue(value)) v = *old;
    v.name = name;
    v.elem_type = kFloat;
    v.is_initializer = false;
    v.constant.reset();
    g_.SetValue(std::move(v));
    return name;
  }

  // AddCastNode, second half: Cast{to} `name` reading `in`, writing `out` (a fresh node index).
  void AddCastNode(const std::string& name, const std::string& in, const std::string& out,
                   int32_t to) {
    Node c;
    c.name = name;
    c.op_type = "Cast";
    c.inputs = {in};
    c.outputs = {out};
    c.attributes["to"] = graph::Attribute::Int(to);
    g_.AddNode(std::move(c));
    assigned_.push_back(true);
  }

  Graph& g_;
  std::vector<bool> assigned_;  // by NodeId: the CPU EP runs the node as typed
  std::unordered_set<std::string> names_;
  int name_counter_ = 0;
};

enum class TypeGroup { kUnknown, kBool, kInteger, kUnsigned, kFloat };

// GetTypeGroup and BitLength (L245-L279), on ONNX TensorProto.DataType numbers.
TypeGroup GroupOf(int32_t t) {
  switch (t) {
    case 9: return TypeGroup::kBool;
    case 3: case 5: case 6: case 7: return TypeGroup::kInteger;    // int8, int16, int32, int64
    case 2: case 4: case 12: case 13: return TypeGroup::kUnsigned;  // uint8, uint16, uint32, uint64
    case 1: case 10: case 11: case 16: return TypeGroup::kFloat;    // float, float16, double, bfloat16
    default: return TypeGroup::kUnknown;
  }
}

int BitLength(int32_t t) {
  switch (t) {
    case 9: return 1;
    case 2: case 3: return 8;
    case 4: case 5: case 10: case 16: return 16;
    case 1: case 6: case 12: return 32;
    case 7: case 11: case 13: return 64;
    default: return -1;
  }
}

// RemoveDuplicateCastTransformer::UnsafeCast (L288-L331): true when a src → dst Cast may lose
// information; a Cast InsertCastTransformer made never counts as losing precision.
bool UnsafeCast(int32_t src, int32_t dst, const std::string& cast_name) {
  const TypeGroup s = GroupOf(src), d = GroupOf(dst);
  if (s == TypeGroup::kUnknown || d == TypeGroup::kUnknown) return true;
  if (s != TypeGroup::kBool && s != TypeGroup::kUnsigned && d == TypeGroup::kUnsigned) return true;
  if (s == TypeGroup::kFloat && d != TypeGroup::kFloat) return true;
  const int sb = BitLength(src), db = BitLength(dst);
  if (s == TypeGroup::kUnsigned && d == TypeGroup::kInteger) return db <= sb;
  if ((s == TypeGroup::kInteger || s == TypeGroup::kUnsigned) && d == TypeGroup::kFloat) {
    return db <= sb;
  }
  if ((src == 10 && dst == 16) || (src == 16 && dst == 10)) return true;
  return sb > db && cast_name.rfind(kCastPrefix, 0) != 0;
}

// RemoveDuplicateCastTransformer::ApplyImpl (L333-L454). Returns the Casts removed.
int RemoveDuplicateCasts(Graph& g) {
  int removed = 0;
  for (NodeId id : ByNodeIndex(g)) {
    const Node& n = g.node(id);
    if (n.removed || !IsOp(n, "Cast") || n.inputs.empty() || n.outputs.empty()) continue;
    const std::string in = n.inputs[0], out = n.outputs[0];
    const int32_t src = ElemType(g, in), dst = ElemType(g, out);
    const bool loss = UnsafeCast(src, dst, n.name);
    size_t children = 0;  // output edges
    std::vector<NodeId> to_remove, to_keep;
    bool inconsistent = false;
    for (NodeId c : g.Consumers(out)) {
      const Node& child = g.node(c);
      children += std::count(child.inputs.begin(), child.inputs.end(), out);
      if (!IsOp(child, "Cast") || child.outputs.empty()) continue;
      const int32_t src1 = ElemType(g, child.inputs[0]), dst1 = ElemType(g, child.outputs[0]);
      if (loss && UnsafeCast(dst1, src1, child.name)) {  // (sic) arguments as in L374
        inconsistent = true;
        break;
      }
      if (!g.IsGraphOutput(child.outputs[0]) && src == dst1 && src1 == dst) {
        to_remove.push_back(c);
      } else {
        to_keep.push_back(c);
      }
    }
    if (inconsistent) continue;
    for (NodeId r : to_remove) {  // L394-L432: the pair's readers read the first Cast's input
      const std::string r_out = g.node(r).outputs[0];
      g.RemoveNode(r);
      g.ReplaceUses(r_out, in);
      ++removed;
    }
    if (children > 0 && to_remove.size() + to_keep.size() == children && !g.IsGraphOutput(out)) {
      g.RemoveNode(id);  // L436-L445: graph_utils::RemoveNode reconnects the kept Casts
      g.ReplaceUses(out, in);
      ++removed;
    }
  }
  return removed;
}

}  // namespace

int InsertCastTransformer::ApplyToGraph(Graph& g) const {
  Inserter inserter(g);
  inserter.ForceIsolatedNodesToFloat();
  const int added = inserter.InsertCasts();
  return added + RemoveDuplicateCasts(g);
}

}  // namespace hase::kernels::rules
