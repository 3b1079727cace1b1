#include "hase/kernels/rules/transpose_optimizer.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "hase/graph/topological_order.h"
#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

using graph::Graph;
using graph::Node;
using graph::NodeId;
using Perm = std::vector<int64_t>;

// ---- handlers (ORT's handler_map; kUnhandled = listed by ORT, not reproduced here) ----
enum class Kind {
  kSimple, kBroadcast, kFirstInput, kTranspose, kConcat, kSplit, kReduce, kSqueeze, kUnsqueeze,
  kSlice, kSoftMax, kShape, kPad, kReshape, kGather, kUnhandled
};
enum class Inputs { kAll, kFirst, kNonScalar };

struct HandlerInfo {
  Kind kind;
  Inputs inputs;
  bool transposes_outputs;
};

const HandlerInfo* GetHandler(const Node& n) {
  static const std::unordered_map<std::string, HandlerInfo> kMap = [] {
    std::unordered_map<std::string, HandlerInfo> m;
    for (const char* op : {"Cast", "Exp", "Gelu", "Identity", "LeakyRelu", "Log", "Reciprocal",
                           "Relu", "Sigmoid", "Sqrt", "Tanh", "Abs", "Not", "Ceil", "Floor", "Neg",
                           "Erf", "HardSigmoid", "Round", "IsInf", "IsNaN", "Selu", "Shrink",
                           "Sign", "Softplus", "Softsign", "ThresholdedRelu", "Celu", "HardSwish",
                           "Sin", "Cos", "Tan", "Sinh", "Cosh", "Asin", "Acos", "Atan", "Asinh",
                           "Acosh", "Atanh"}) {
      m[op] = {Kind::kSimple, Inputs::kAll, true};
    }
    for (const char* op : {"Add", "Max", "Min", "Mul", "Sub", "Div", "And", "Or", "Xor", "Mod",
                           "PRelu", "BitShift", "Equal", "Greater", "Less", "GreaterOrEqual",
                           "LessOrEqual", "Mean", "Sum", "Pow", "Where"}) {
      m[op] = {Kind::kBroadcast, Inputs::kNonScalar, true};
    }
    m["Clip"] = m["CastLike"] = {Kind::kFirstInput, Inputs::kFirst, true};
    m["Transpose"] = {Kind::kTranspose, Inputs::kFirst, false};
    m["Concat"] = {Kind::kConcat, Inputs::kAll, true};
    m["Split"] = {Kind::kSplit, Inputs::kFirst, true};
    m["Shape"] = {Kind::kShape, Inputs::kFirst, false};
    m["Pad"] = {Kind::kPad, Inputs::kFirst, true};
    for (const char* op : {"ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                           "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "ReduceL1",
                           "ReduceL2"}) {
      m[op] = {Kind::kReduce, Inputs::kFirst, true};
    }
    m["ArgMin"] = m["ArgMax"] = m["Tile"] = {Kind::kUnhandled, Inputs::kFirst, true};
    m["QuantizeLinear"] = m["DequantizeLinear"] = {Kind::kUnhandled, Inputs::kFirst, true};
    m["MaxPool"] = {Kind::kUnhandled, Inputs::kFirst, true};  // CPU EP: int8 NHWC only
    m["Resize"] = {Kind::kUnhandled, Inputs::kFirst, true};   // CPU EP, once assigned
    m["Squeeze"] = {Kind::kSqueeze, Inputs::kFirst, true};
    m["Unsqueeze"] = {Kind::kUnsqueeze, Inputs::kFirst, true};
    m["Slice"] = {Kind::kSlice, Inputs::kFirst, true};
    m["Softmax"] = m["Hardmax"] = m["LogSoftmax"] = {Kind::kSoftMax, Inputs::kFirst, true};
    m["Reshape"] = {Kind::kReshape, Inputs::kFirst, false};
    m["Gather"] = {Kind::kGather, Inputs::kFirst, true};  // onnxruntime-node 1.30; not in v1.21.0
    return m;
  }();
  if (!n.domain.empty() && n.domain != "ai.onnx") return nullptr;
  auto it = kMap.find(n.op_type);
  return it == kMap.end() ? nullptr : &it->second;
}

// ---- permutation helpers ----
bool IsValidPerm(const Perm& p) {
  std::vector<bool> used(p.size());
  for (int64_t x : p) {
    if (x < 0 || x >= static_cast<int64_t>(p.size()) || used[x]) return false;
    used[x] = true;
  }
  return true;
}

std::optional<Perm> PermOf(const Node& n) {
  auto it = n.attributes.find("perm");
  if (it == n.attributes.end() || !IsValidPerm(it->second.ints)) return std::nullopt;
  return it->second.ints;
}

Perm Invert(const Perm& p) {
  Perm r(p.size());
  for (size_t i = 0; i < p.size(); ++i) r[p[i]] = static_cast<int64_t>(i);
  return r;
}

// Transposing by p1 then by p2 = transposing by Compose(p1, p2).
Perm Compose(const Perm& p1, const Perm& p2) {
  Perm r;
  for (int64_t p : p2) r.push_back(p1[p]);
  return r;
}

bool IsIdentity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> PermuteDims(const std::vector<int64_t>& dims, const Perm& p) {
  std::vector<int64_t> r;
  for (int64_t x : p) r.push_back(dims[x]);
  return r;
}

// PermuteDims of `dims` when present and of the perm's rank; nullopt otherwise.
std::optional<std::vector<int64_t>> Permuted(const std::optional<std::vector<int64_t>>& dims,
                                             const Perm& p) {
  if (!dims || dims->size() != p.size()) return std::nullopt;
  return PermuteDims(*dims, p);
}

bool NormalizeAxes(std::vector<int64_t>& axes, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  for (int64_t& a : axes) {
    if (a < 0) a += r;
    if (a < 0 || a >= r) return false;
  }
  return true;
}

std::vector<int64_t> SortedAxesForTransposedInput(const std::vector<int64_t>& axes, const Perm& p) {
  std::vector<bool> inc(p.size());
  for (int64_t a : axes) inc[p[a]] = true;
  std::vector<int64_t> r;
  for (size_t a = 0; a < p.size(); ++a) {
    if (inc[a]) r.push_back(static_cast<int64_t>(a));
  }
  return r;
}

Perm UnsqueezePerm(const std::vector<int64_t>& axes, const Perm& perm) {
  const size_t new_rank = perm.size() + axes.size();
  std::vector<bool> added(new_rank);
  for (int64_t a : axes) added[a] = true;
  std::vector<int64_t> map;
  for (size_t i = 0; i < new_rank; ++i) {
    if (!added[i]) map.push_back(static_cast<int64_t>(i));
  }
  Perm r;
  size_t j = 0;
  for (size_t i = 0; i < new_rank; ++i) {
    r.push_back(added[i] ? static_cast<int64_t>(i) : map[perm[j++]]);
  }
  return r;
}

Perm SqueezePerm(const std::vector<int64_t>& axes, const Perm& perm) {
  std::vector<bool> removed(perm.size());
  for (int64_t a : axes) removed[a] = true;
  std::vector<int64_t> map(perm.size());
  int64_t j = 0;
  for (size_t i = 0; i < perm.size(); ++i) {
    if (!removed[i]) map[i] = j++;
  }
  Perm r;
  for (int64_t p : perm) {
    if (!removed[p]) r.push_back(map[p]);
  }
  return r;
}

std::vector<int64_t> UnsqueezeShape(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
  const size_t rank = shape.size() + axes.size();
  std::vector<int64_t> r(rank, 1);
  std::vector<bool> added(rank);
  for (int64_t a : axes) added[a] = true;
  size_t j = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (!added[i]) r[i] = shape[j++];
  }
  return r;
}

// ---- the optimiser's state over one run ----
struct Ctx {
  Graph& g;
  int64_t opset;
  std::unordered_set<std::string> leading;  // outputs leading to a Transpose
  int changes = 0;
  int counter = 0;

  std::string NewName(const std::string& base) {
    std::string n;
    do {
      n = base + "/tp_" + std::to_string(counter++);
    } while (g.FindValue(n) != nullptr);
    return n;
  }

  std::optional<std::vector<int64_t>> Shape(const std::string& name) const {
    const graph::Value* v = g.FindValue(name);
    if (!v || !v->has_shape) return std::nullopt;
    return v->shape;
  }

  // ORT's view of `name`'s dims (Value::ort_shape), nullopt when ORT knows no rank.
  std::optional<std::vector<int64_t>> OrtShape(const std::string& name) const {
    const graph::Value* v = g.FindValue(name);
    if (!v) return std::nullopt;
    return v->ort_shape;
  }

  // The dims ORT's checks read (GetValueInfo(…)->Shape()): its view when the graph has one.
  std::optional<std::vector<int64_t>> CheckedShape(const std::string& name) const {
    const graph::Value* v = g.FindValue(name);
    const std::vector<int64_t>* d = v ? DecisionDims(g, *v) : nullptr;
    return d ? std::optional(*d) : std::nullopt;
  }

  // A value named `name` like `like` (dtype) with dims `dims` and ORT's view `ort_dims`.
  void DeclareValue(const std::string& name, const std::string& like,
                    std::optional<std::vector<int64_t>> dims,
                    std::optional<std::vector<int64_t>> ort_dims) {
    graph::Value v;
    if (const graph::Value* l = g.FindValue(like)) v.elem_type = l->elem_type;
    v.name = name;
    if (dims) {
      v.has_shape = true;
      v.shape = *dims;
    }
    v.ort_shape = std::move(ort_dims);
    g.SetValue(std::move(v));
  }

  std::string AddInt64Initializer(const std::vector<int64_t>& values) {
    graph::Value v;
    v.name = NewName("tp_const");
    v.elem_type = 7;
    v.has_shape = true;
    v.shape = {static_cast<int64_t>(values.size())};
    v.ort_shape = v.shape;
    v.is_initializer = true;
    v.constant = std::vector<double>(values.begin(), values.end());
    const std::string name = v.name;
    g.SetValue(std::move(v));
    return name;
  }

  // A new node (a fresh ORT node index) with one output named after `base`.
  NodeId AddNode(const std::string& op, std::vector<std::string> inputs, const std::string& base) {
    Node n;
    n.op_type = op;
    n.name = NewName(op);
    n.inputs = std::move(inputs);
    n.outputs = {NewName(base)};
    return g.AddNode(std::move(n));
  }

  NodeId MakeTranspose(const std::string& input, const Perm& perm) {
    const NodeId t = AddNode("Transpose", {input}, input);
    g.mutable_node(t).attributes["perm"] = graph::Attribute::Ints(perm);
    DeclareValue(g.node(t).outputs[0], input, Permuted(Shape(input), perm),
                 Permuted(OrtShape(input), perm));
    return t;
  }

  NodeId MakeSqueezeOrUnsqueeze(const std::string& op, const std::string& input,
                                const std::vector<int64_t>& axes) {
    NodeId n;
    if (opset < 13) {
      n = AddNode(op, {input}, input);
      g.mutable_node(n).attributes["axes"] = graph::Attribute::Ints(axes);
    } else {
      n = AddNode(op, {input, AddInt64Initializer(axes)}, input);
    }
    return n;
  }

  void SetInput(NodeId id, size_t i, const std::string& value) {
    std::vector<std::string> in = g.node(id).inputs;
    in[i] = value;
    g.SetInputs(id, std::move(in));
  }

  // Every live node in `nodes` reading `from` reads `to` instead.
  void ReplaceRefs(const std::vector<NodeId>& nodes, const std::string& from, const std::string& to) {
    for (NodeId c : nodes) {
      std::vector<std::string> in = g.node(c).inputs;
      std::replace(in.begin(), in.end(), from, to);
      g.SetInputs(c, std::move(in));
    }
  }

  bool HasConsumers(const std::string& v) const {
    return !g.Consumers(v).empty() || g.IsGraphOutput(v);
  }

  bool IsLocalConstant(const std::string& v) const {
    return g.Producer(v) == graph::kNoNode && g.IsConstant(v);
  }
};

// ---- cost heuristics ----
int EstimateValueRank(const Ctx& c, const std::string& name) {
  const graph::Value* v = c.g.FindValue(name);
  if (c.g.has_ort_view()) {
    if (!v || !v->ort_shape) return 5;
    // onnx_transpose_optimization.cc EstimateValueRank: dims ≠ 1, an unknown or symbolic dim
    // counting as ≠ 1; 5 when ORT knows no rank.
    return static_cast<int>(std::count_if(v->ort_shape->begin(), v->ort_shape->end(),
                                          [](int64_t d) { return d != 1; }));
  }
  if (!v || !v->has_shape) return 5;
  int rank = 0;
  for (size_t i = 0; i < v->shape.size(); ++i) {
    // ORT sees the batch of a dynamic-batch file as unknown (≠ 1).
    const bool symbolic_batch =
        i == 0 && c.g.batch_symbolic() && !v->is_initializer && v->shape.size() >= 2;
    if (symbolic_batch || v->shape[i] != 1) ++rank;
  }
  return rank;
}

std::vector<size_t> InputIndices(const Ctx& c, const Node& n, const HandlerInfo& h) {
  std::vector<size_t> r;
  if (h.inputs == Inputs::kFirst) return {0};
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (h.inputs == Inputs::kNonScalar) {
      auto s = c.CheckedShape(n.inputs[i]);
      if (s && s->empty()) continue;
    }
    r.push_back(i);
  }
  return r;
}

bool CanLikelyRemoveTranspose(const Ctx& c, const Node& t) {
  if (c.g.IsGraphOutput(t.outputs[0])) return false;
  for (NodeId u : c.g.Consumers(t.outputs[0])) {
    if (!GetHandler(c.g.node(u))) return false;
  }
  return true;
}

int EstimateTransposeValueCost(const Ctx& c, const std::string& input, const Perm& perm) {
  if (c.IsLocalConstant(input)) return 0;
  const NodeId p = c.g.Producer(input);
  if (p != graph::kNoNode && c.g.node(p).op_type == "Transpose" && c.g.node(p).domain.empty()) {
    if (auto perm2 = PermOf(c.g.node(p))) {
      return *perm2 == perm && CanLikelyRemoveTranspose(c, c.g.node(p)) ? -EstimateValueRank(c, input)
                                                                         : 0;
    }
  }
  return EstimateValueRank(c, input);
}

// ---- core helpers ----
// Replaces input i of `id` by its transpose by `perm` (perm_inv = its inverse): cancels or
// composes with a producing Transpose, transposes a constant in place, reuses or adds a Transpose.
void TransposeInput(Ctx& c, NodeId id, size_t i, const Perm& perm, const Perm& perm_inv) {
  Graph& g = c.g;
  const std::string input = g.node(id).inputs[i];
  c.SetInput(id, i, "");
  const std::vector<NodeId> consumers = g.Consumers(input);
  // Case 1: a constant.
  if (c.IsLocalConstant(input) && !g.IsGraphOutput(input)) {
    const graph::Value* v = g.FindValue(input);
    if (v->shape_known() && v->elements() == 1) {
      c.SetInput(id, i, input);
      return;
    }
    if (v->shape.size() == 1 && v->shape[0] == static_cast<int64_t>(perm.size())) {
      // Permute1DConstant: a new initializer with the values reordered.
      graph::Value nv = *v;
      nv.name = c.NewName(input);
      if (v->constant && v->constant->size() == perm.size()) {
        std::vector<double> d;
        for (int64_t p : perm) d.push_back((*v->constant)[p]);
        nv.constant = d;
      }
      const std::string name = nv.name;
      g.SetValue(std::move(nv));
      c.SetInput(id, i, name);
      return;
    }
    if (!consumers.empty()) {
      const NodeId t = c.MakeTranspose(input, perm_inv);
      c.DeclareValue(g.node(t).outputs[0], input, c.Shape(input), c.OrtShape(input));
      c.ReplaceRefs(consumers, input, g.node(t).outputs[0]);
    }
    graph::Value nv = *g.FindValue(input);
    if (nv.has_shape && nv.shape.size() == perm.size()) {
      if (nv.constant && nv.shape_known() &&
          static_cast<int64_t>(nv.constant->size()) == nv.elements()) {
        // Transpose the values: out[idx] = in[src(idx)].
        const std::vector<int64_t> in_dims = nv.shape;
        const std::vector<int64_t> out_dims = PermuteDims(in_dims, perm);
        std::vector<int64_t> in_strides(in_dims.size(), 1);
        for (int k = static_cast<int>(in_dims.size()) - 2; k >= 0; --k) {
          in_strides[k] = in_strides[k + 1] * in_dims[k + 1];
        }
        std::vector<double> out(nv.constant->size());
        std::vector<int64_t> idx(out_dims.size(), 0);
        for (size_t flat = 0; flat < out.size(); ++flat) {
          int64_t src = 0;
          for (size_t k = 0; k < idx.size(); ++k) src += idx[k] * in_strides[perm[k]];
          out[flat] = (*nv.constant)[src];
          for (int k = static_cast<int>(idx.size()) - 1; k >= 0; --k) {
            if (++idx[k] < out_dims[k]) break;
            idx[k] = 0;
          }
        }
        nv.constant = out;
      }
      nv.shape = PermuteDims(nv.shape, perm);
      nv.ort_shape = Permuted(nv.ort_shape, perm);
    }
    g.SetValue(std::move(nv));
    c.SetInput(id, i, input);
    return;
  }
  // Case 2: the input is a Transpose.
  const NodeId p = g.Producer(input);
  if (p != graph::kNoNode && g.node(p).op_type == "Transpose" && g.node(p).domain.empty()) {
    auto perm2 = PermOf(g.node(p));
    if (perm2 && perm2->size() == perm.size()) {
      const std::string pre = g.node(p).inputs[0];
      if (*perm2 == perm_inv) {
        c.SetInput(id, i, pre);
        if (g.Consumers(input).empty() && !g.IsGraphOutput(input)) g.RemoveNode(p);
        return;
      }
      const NodeId t = c.MakeTranspose(pre, Compose(*perm2, perm));
      c.DeclareValue(g.node(t).outputs[0], input, Permuted(c.Shape(input), perm),
                     Permuted(c.OrtShape(input), perm));
      if (g.Consumers(input).empty() && !g.IsGraphOutput(input)) g.RemoveNode(p);
      c.SetInput(id, i, g.node(t).outputs[0]);
      return;
    }
  }
  // Case 3: a Transpose with the same perm already reads the input.
  for (NodeId u : g.Consumers(input)) {
    const Node& un = g.node(u);
    if (un.op_type == "Transpose" && un.domain.empty() && PermOf(un) == perm) {
      c.SetInput(id, i, un.outputs[0]);
      return;
    }
  }
  // Case 4: a new Transpose.
  const NodeId t = c.MakeTranspose(input, perm);
  c.SetInput(id, i, g.node(t).outputs[0]);
}

// Inserts Transpose(perm) after output i of `id`; the node writes a renamed, permuted value.
std::string TransposeOutput(Ctx& c, NodeId id, size_t i, const Perm& perm, const Perm& perm_inv) {
  Graph& g = c.g;
  const std::string y = g.node(id).outputs[i];
  const std::string y2 = c.NewName(y);
  c.DeclareValue(y2, y, Permuted(c.Shape(y), perm_inv), Permuted(c.OrtShape(y), perm_inv));
  std::vector<std::string> outs = g.node(id).outputs;
  outs[i] = y2;
  g.SetOutputs(id, std::move(outs));
  Node t;
  t.op_type = "Transpose";
  t.name = c.NewName("Transpose");
  t.inputs = {y2};
  t.outputs = {y};
  t.attributes["perm"] = graph::Attribute::Ints(perm);
  g.AddNode(std::move(t));
  return y;
}

void TransposeOutputs(Ctx& c, NodeId id, const Perm& perm) {
  if (IsIdentity(perm)) return;
  const Perm inv = Invert(perm);
  for (size_t j = 0; j < c.g.node(id).outputs.size(); ++j) {
    if (c.g.node(id).outputs[j].empty()) continue;
    TransposeOutput(c, id, j, perm, inv);
  }
}

void TransposeFirstInput(Ctx& c, NodeId id, const Perm& perm) {
  TransposeInput(c, id, 0, perm, Invert(perm));
}

void TransposeInputs(Ctx& c, NodeId id, const Perm& perm, const std::vector<size_t>& idx) {
  const Perm inv = Invert(perm);
  for (size_t j : idx) TransposeInput(c, id, j, perm, inv);
}

std::string HelpHandleUnsqueeze(Ctx& c, NodeId id, const Perm& perm, const std::vector<int64_t>& axes) {
  TransposeFirstInput(c, id, Invert(perm));
  const Perm np = UnsqueezePerm(axes, perm);
  return TransposeOutput(c, id, 0, np, Invert(np));
}

// Replaces input i of `id` by its unsqueeze over `axes` (ORT's UnsqueezeInput).
void UnsqueezeInput(Ctx& c, NodeId id, size_t i, const std::vector<int64_t>& axes) {
  Graph& g = c.g;
  const std::string input = g.node(id).inputs[i];
  c.SetInput(id, i, "");
  const std::vector<NodeId> consumers = g.Consumers(input);
  if (c.IsLocalConstant(input) && !g.IsGraphOutput(input)) {
    if (!consumers.empty()) {
      const NodeId sq = c.MakeSqueezeOrUnsqueeze("Squeeze", input, axes);
      c.DeclareValue(g.node(sq).outputs[0], input, c.Shape(input), c.OrtShape(input));
      c.ReplaceRefs(consumers, input, g.node(sq).outputs[0]);
    }
    graph::Value nv = *g.FindValue(input);
    nv.shape = UnsqueezeShape(nv.shape, axes);
    if (nv.ort_shape) nv.ort_shape = UnsqueezeShape(*nv.ort_shape, axes);
    g.SetValue(std::move(nv));
    c.SetInput(id, i, input);
    return;
  }
  const NodeId p = g.Producer(input);
  if (p != graph::kNoNode && g.node(p).op_type == "Squeeze" && g.node(p).domain.empty()) {
    const Node& sq = g.node(p);
    std::vector<int64_t> sq_axes = sq.IntsAttr("axes");
    if (c.opset >= 13 && sq.inputs.size() > 1) {
      const graph::Value* a = g.FindValue(sq.inputs[1]);
      sq_axes.clear();
      if (a && a->constant) {
        for (double d : *a->constant) sq_axes.push_back(static_cast<int64_t>(d));
      }
    }
    if (!sq_axes.empty() && sq_axes == axes) {
      c.SetInput(id, i, sq.inputs[0]);
      if (!c.HasConsumers(input)) g.RemoveNode(p);
      return;
    }
  }
  const NodeId u = c.MakeSqueezeOrUnsqueeze("Unsqueeze", input, axes);
  auto s = c.Shape(input);
  auto os = c.OrtShape(input);
  c.DeclareValue(g.node(u).outputs[0], input,
                 s ? std::optional(UnsqueezeShape(*s, axes)) : std::nullopt,
                 os ? std::optional(UnsqueezeShape(*os, axes)) : std::nullopt);
  if (p != graph::kNoNode && g.node(p).op_type == "Transpose" && g.node(p).domain.empty()) {
    if (auto perm = PermOf(g.node(p))) {
      c.SetInput(id, i, HelpHandleUnsqueeze(c, u, *perm, axes));
      return;
    }
  }
  c.SetInput(id, i, g.node(u).outputs[0]);
}

bool NormalizeInputRanks(Ctx& c, NodeId id, size_t rank, const std::vector<size_t>& idx) {
  std::vector<size_t> ranks;
  for (size_t i : idx) {
    auto s = c.CheckedShape(c.g.node(id).inputs[i]);
    if (!s || s->size() > rank) return false;
    ranks.push_back(s->size());
  }
  for (size_t k = 0; k < idx.size(); ++k) {
    const size_t diff = rank - ranks[k];
    if (diff == 0) continue;
    std::vector<int64_t> axes;
    for (size_t j = 0; j < diff; ++j) axes.push_back(static_cast<int64_t>(j));
    UnsqueezeInput(c, id, idx[k], axes);
  }
  return true;
}

// ---- handlers ----
struct Args {
  NodeId transpose;
  NodeId node;
  Perm perm, perm_inv;
  std::vector<size_t> idx;
};

bool HandleSimple(Ctx& c, const Args& a, bool broadcast) {
  if (broadcast && !NormalizeInputRanks(c, a.node, a.perm.size(), a.idx)) return false;
  TransposeInputs(c, a.node, a.perm_inv, a.idx);
  TransposeOutputs(c, a.node, a.perm);
  return true;
}

bool HandleWithAxis(Ctx& c, const Args& a, std::optional<int64_t> default_axis) {
  const Node& n = c.g.node(a.node);
  std::optional<int64_t> axis = default_axis;
  if (auto it = n.attributes.find("axis"); it != n.attributes.end() && !it->second.ints.empty()) {
    axis = it->second.ints[0];
  }
  if (!axis) return false;
  const int64_t rank = static_cast<int64_t>(a.perm.size());
  if (*axis < 0) *axis += rank;
  if (*axis < 0 || *axis >= rank) return false;
  HandleSimple(c, a, false);
  c.g.mutable_node(a.node).attributes["axis"] = graph::Attribute::Int(a.perm[*axis]);
  return true;
}

std::optional<std::vector<int64_t>> ConstInts(const Ctx& c, const std::string& name) {
  const graph::Value* v = c.g.FindValue(name);
  if (!v || !v->is_initializer || !v->constant) return std::nullopt;
  std::vector<int64_t> r;
  for (double d : *v->constant) r.push_back(static_cast<int64_t>(d));
  return r;
}

// Axes from the attribute (before `opset_input`) or from constant input 1.
std::optional<std::vector<int64_t>> AxesOf(const Ctx& c, const Node& n, int64_t opset_input) {
  if (c.opset < opset_input) {
    auto it = n.attributes.find("axes");
    if (it == n.attributes.end()) return std::nullopt;
    return it->second.ints;
  }
  if (n.inputs.size() < 2 || n.inputs[1].empty()) return std::nullopt;
  return ConstInts(c, n.inputs[1]);
}

bool HandleReduce(Ctx& c, const Args& a) {
  Node& n = c.g.mutable_node(a.node);
  const int64_t keepdims = n.IntAttr("keepdims", 1);
  const bool attr_axes = (n.op_type == "ReduceSum" && c.opset < 13) ||
                         (n.op_type != "ReduceSum" && c.opset < 18);
  Perm out_perm;
  if (attr_axes) {
    auto it = n.attributes.find("axes");
    if (it == n.attributes.end()) {
      out_perm = keepdims == 0 ? Perm{} : a.perm;
    } else {
      std::vector<int64_t> axes = it->second.ints;
      if (!NormalizeAxes(axes, a.perm.size())) return false;
      const std::vector<int64_t> na = SortedAxesForTransposedInput(axes, a.perm);
      n.attributes["axes"] = graph::Attribute::Ints(na);
      out_perm = keepdims == 0 ? SqueezePerm(na, a.perm) : a.perm;
    }
  } else {
    const bool empty_axes = n.inputs.size() < 2 || n.inputs[1].empty() ||
                            (ConstInts(c, n.inputs[1]) && ConstInts(c, n.inputs[1])->empty());
    if (empty_axes) {
      TransposeFirstInput(c, a.node, a.perm_inv);
      if (n.IntAttr("noop_with_empty_axes", 0) != 0 || keepdims) TransposeOutputs(c, a.node, a.perm);
      return true;
    }
    auto axes = ConstInts(c, n.inputs[1]);
    if (!axes || !NormalizeAxes(*axes, a.perm.size())) return false;
    const std::vector<int64_t> na = SortedAxesForTransposedInput(*axes, a.perm);
    c.SetInput(a.node, 1, c.AddInt64Initializer(na));
    out_perm = keepdims ? a.perm : SqueezePerm(na, a.perm);
  }
  TransposeFirstInput(c, a.node, a.perm_inv);
  TransposeOutputs(c, a.node, out_perm);
  return true;
}

bool HandleSqueeze(Ctx& c, const Args& a) {
  const Node& n = c.g.node(a.node);
  auto axes = AxesOf(c, n, 13);
  if (!axes || !NormalizeAxes(*axes, a.perm.size())) return false;
  const std::vector<int64_t> na = SortedAxesForTransposedInput(*axes, a.perm);
  if (c.opset < 13) {
    c.g.mutable_node(a.node).attributes["axes"] = graph::Attribute::Ints(na);
  } else {
    c.SetInput(a.node, 1, c.AddInt64Initializer(na));
  }
  TransposeFirstInput(c, a.node, a.perm_inv);
  TransposeOutputs(c, a.node, SqueezePerm(na, a.perm));
  return true;
}

// Gather with a scalar index: Transpose → Gather(axis a) becomes Gather(axis perm[a]) →
// Transpose, like a Squeeze of that axis. Measured with onnxruntime-node 1.30 (x[b, 49, 3, 3, 32]
// → Transpose[2, 0, 3, 1, 4] → Gather(1) → Transpose[0, 1, 3, 2] gives Gather(axis 2) →
// Transpose[0, 2, 3, 1]: Swin-T's k = qkv[1]); the v1.21.0 text has no Gather handler.
bool HandleGather(Ctx& c, const Args& a) {
  const Node& n = c.g.node(a.node);
  if (n.inputs.size() != 2) return false;
  auto idx = c.CheckedShape(n.inputs[1]);
  if (!idx || !idx->empty()) return false;
  std::vector<int64_t> axes = {n.IntAttr("axis", 0)};
  if (!NormalizeAxes(axes, a.perm.size())) return false;
  const std::vector<int64_t> na = SortedAxesForTransposedInput(axes, a.perm);
  c.g.mutable_node(a.node).attributes["axis"] = graph::Attribute::Int(na[0]);
  TransposeFirstInput(c, a.node, a.perm_inv);
  TransposeOutputs(c, a.node, SqueezePerm(na, a.perm));
  return true;
}

bool HandleUnsqueeze(Ctx& c, const Args& a) {
  auto axes = AxesOf(c, c.g.node(a.node), 13);
  if (!axes || !NormalizeAxes(*axes, a.perm.size() + axes->size())) return false;
  HelpHandleUnsqueeze(c, a.node, a.perm, *axes);
  return true;
}

bool HandleSlice(Ctx& c, const Args& a) {
  const Node& n = c.g.node(a.node);
  if (c.opset < 10) {
    std::vector<int64_t> axes = n.IntsAttr("axes");
    if (axes.empty()) {
      for (size_t i = 0; i < n.IntsAttr("starts").size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (!NormalizeAxes(axes, a.perm.size())) return false;
    std::vector<int64_t> na;
    for (int64_t x : axes) na.push_back(a.perm[x]);
    c.g.mutable_node(a.node).attributes["axes"] = graph::Attribute::Ints(na);
  } else if (n.inputs.size() < 4 || n.inputs[3].empty()) {
    auto s = c.Shape(n.inputs[1]);
    if (!s || s->size() != 1 || (*s)[0] < 0) return false;
    std::vector<int64_t> na;
    for (int64_t i = 0; i < (*s)[0]; ++i) na.push_back(a.perm[i]);
    std::vector<std::string> in = n.inputs;
    in.resize(std::max<size_t>(in.size(), 4));
    in[3] = c.AddInt64Initializer(na);
    c.g.SetInputs(a.node, std::move(in));
  } else {
    auto axes = ConstInts(c, n.inputs[3]);
    if (!axes || !NormalizeAxes(*axes, a.perm.size())) return false;
    std::vector<int64_t> na;
    for (int64_t x : *axes) na.push_back(a.perm[x]);
    c.SetInput(a.node, 3, c.AddInt64Initializer(na));
  }
  TransposeFirstInput(c, a.node, a.perm_inv);
  TransposeOutputs(c, a.node, a.perm);
  return true;
}

// Permutes 1-D input i of `id` (Pad's pads): a new constant, or a Gather.
void PermuteInput(Ctx& c, NodeId id, size_t i, const Perm& perm) {
  const std::string in = c.g.node(id).inputs[i];
  auto vals = ConstInts(c, in);
  auto s = c.Shape(in);
  if (vals && s && s->size() == 1 && ((*s)[0] == static_cast<int64_t>(perm.size()) || (*s)[0] == 0)) {
    std::vector<int64_t> nv;
    if (!vals->empty()) {
      for (int64_t p : perm) nv.push_back((*vals)[p]);
    }
    c.SetInput(id, i, c.AddInt64Initializer(nv));
    return;
  }
  const NodeId gth = c.AddNode("Gather", {in, c.AddInt64Initializer(perm)}, in);
  c.g.mutable_node(gth).attributes["axis"] = graph::Attribute::Int(0);
  c.DeclareValue(c.g.node(gth).outputs[0], in, s, c.OrtShape(in));
  c.SetInput(id, i, c.g.node(gth).outputs[0]);
}

bool HandlePad(Ctx& c, const Args& a) {
  const size_t rank = a.perm.size();
  Perm pads_perm = a.perm_inv;
  for (int64_t p : a.perm_inv) pads_perm.push_back(p + static_cast<int64_t>(rank));
  if (c.opset < 11) {
    std::vector<int64_t> pads = c.g.node(a.node).IntsAttr("pads");
    if (pads.size() != rank * 2) return false;
    std::vector<int64_t> np;
    for (int64_t i : pads_perm) np.push_back(pads[i]);
    c.g.mutable_node(a.node).attributes["pads"] = graph::Attribute::Ints(np);
  } else {
    PermuteInput(c, a.node, 1, pads_perm);
  }
  TransposeFirstInput(c, a.node, a.perm_inv);
  TransposeOutputs(c, a.node, a.perm);
  return true;
}

bool HandleShape(Ctx& c, const Args& a) {
  TransposeInputs(c, a.node, a.perm_inv, a.idx);
  const int64_t rank = static_cast<int64_t>(a.perm.size());
  Perm np;
  Node& n = c.g.mutable_node(a.node);
  if (c.opset >= 15) {
    int64_t start = n.IntAttr("start", 0), end = n.IntAttr("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    for (int64_t i = start; i < end; ++i) np.push_back(a.perm[i]);
    n.attributes.erase("start");
    n.attributes.erase("end");
  } else {
    np = a.perm;
  }
  const std::string y = c.g.node(a.node).outputs[0];
  const std::string y2 = c.NewName(y);
  c.DeclareValue(y2, y, std::vector<int64_t>{rank}, std::vector<int64_t>{rank});
  c.g.SetOutputs(a.node, {y2});
  Node gth;
  gth.op_type = "Gather";
  gth.name = c.NewName("Gather");
  gth.inputs = {y2, c.AddInt64Initializer(np)};
  gth.outputs = {y};
  gth.attributes["axis"] = graph::Attribute::Int(0);
  c.g.AddNode(std::move(gth));
  return true;
}

// Transpose → Transpose: cancel both, or merge into the second.
bool HandleTranspose(Ctx& c, const Args& a) {
  Graph& g = c.g;
  auto node_perm = PermOf(g.node(a.node));
  if (!node_perm || node_perm->size() != a.perm.size()) return false;
  const std::string tin = g.node(a.transpose).inputs[0];
  const std::string tout = g.node(a.transpose).outputs[0];
  if (a.perm_inv == *node_perm) {
    const std::string out = g.node(a.node).outputs[0];
    if (!g.IsGraphOutput(out)) {
      c.ReplaceRefs(g.Consumers(out), out, tin);
      g.RemoveNode(a.node);
    } else {
      const NodeId parent = g.Producer(tin);
      if (parent != graph::kNoNode && !g.IsGraphOutput(tin)) {
        c.SetInput(a.node, 0, "");
        c.ReplaceRefs(g.Consumers(tin), tin, out);
        g.RemoveNode(a.node);
        std::vector<std::string> outs = g.node(parent).outputs;
        std::replace(outs.begin(), outs.end(), tin, out);
        g.SetOutputs(parent, std::move(outs));
      } else {
        g.RemoveNode(a.node);
        Node id;
        id.op_type = "Identity";
        id.name = c.NewName("Identity");
        id.inputs = {tin};
        id.outputs = {out};
        g.AddNode(std::move(id));
      }
    }
  } else {
    c.SetInput(a.node, 0, tin);
    g.mutable_node(a.node).attributes["perm"] = graph::Attribute::Ints(Compose(a.perm, *node_perm));
  }
  if (!g.node(a.transpose).removed && !c.HasConsumers(tout)) g.RemoveNode(a.transpose);
  return true;
}

bool RunHandler(Ctx& c, const HandlerInfo& h, const Args& a) {
  switch (h.kind) {
    case Kind::kSimple:
    case Kind::kFirstInput: return HandleSimple(c, a, false);
    case Kind::kBroadcast: return HandleSimple(c, a, true);
    case Kind::kTranspose: return HandleTranspose(c, a);
    case Kind::kConcat: return HandleWithAxis(c, a, std::nullopt);
    case Kind::kSplit: return HandleWithAxis(c, a, 0);
    case Kind::kSoftMax:
      if (c.opset >= 13) return HandleWithAxis(c, a, -1);
      return false;  // opset < 13 coercion rules: not reproduced
    case Kind::kReduce: return HandleReduce(c, a);
    case Kind::kSqueeze: return HandleSqueeze(c, a);
    case Kind::kUnsqueeze: return HandleUnsqueeze(c, a);
    case Kind::kSlice: return HandleSlice(c, a);
    case Kind::kShape: return HandleShape(c, a);
    case Kind::kGather: return HandleGather(c, a);
    case Kind::kPad: return HandlePad(c, a);
    case Kind::kReshape:
      // ORT treats a Reshape as a Transpose only with a concrete input shape; the symbolic batch
      // of a dynamic-batch file never is. Static-batch files: not reproduced.
      return false;
    case Kind::kUnhandled: return false;
  }
  return false;
}

bool ProcessTranspose(Ctx& c, NodeId transpose, NodeId id, const Perm& perm, size_t j) {
  const Node& n = c.g.node(id);
  const HandlerInfo* h = GetHandler(n);
  if (!h) return false;
  const std::vector<size_t> idx = InputIndices(c, n, *h);
  if (std::find(idx.begin(), idx.end(), j) == idx.end()) return false;
  if (!(n.op_type == "Transpose")) {
    int cost = 0;
    for (size_t k : idx) cost += EstimateTransposeValueCost(c, n.inputs[k], perm);
    if (cost < 0 && h->transposes_outputs) {
      int out_cost = 0;
      bool leads = false;
      for (const std::string& o : n.outputs) {
        out_cost = std::max(out_cost, EstimateValueRank(c, o));
        if (c.leading.count(o)) leads = true;
      }
      if (!leads) cost += out_cost;
    }
    if (cost >= 0) return false;
  }
  return RunHandler(c, *h, Args{transpose, id, perm, Invert(perm), idx});
}

}  // namespace

int TransposeOptimizer::ApplyToGraph(Graph& g) const {
  Ctx c{g, g.opset(""), {}, 0, 0};
  if (c.opset < 7) return 0;
  const std::vector<NodeId> order = graph::OrtTopologicalOrder(g);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = g.node(*it);
    if (n.op_type == "Transpose" && n.domain.empty()) {
      c.leading.insert(n.inputs[0]);
      continue;
    }
    for (const std::string& o : n.outputs) {
      if (!c.leading.count(o)) continue;
      const HandlerInfo* h = GetHandler(n);
      if (h && h->transposes_outputs) {
        for (size_t k : InputIndices(c, n, *h)) c.leading.insert(n.inputs[k]);
      }
    }
  }
  for (NodeId id : order) {
    if (g.node(id).removed) continue;
    const std::vector<std::string> inputs = g.node(id).inputs;
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (inputs[j].empty()) continue;
      const NodeId t = g.Producer(inputs[j]);
      if (t == graph::kNoNode || g.node(t).op_type != "Transpose" || !g.node(t).domain.empty()) {
        continue;
      }
      auto perm = PermOf(g.node(t));
      if (perm && ProcessTranspose(c, t, id, *perm, j)) {
        ++c.changes;
        break;
      }
    }
  }
  return c.changes;
}

}  // namespace hase::kernels::rules
