#include "hase/kernels/rules/reshape_fusion.h"

#include <algorithm>

#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

// Values of a constant integer tensor, or nullopt.
std::optional<std::vector<int64_t>> ConstInts(const graph::Graph& g, const std::string& name) {
  const graph::Value* v = g.FindValue(name);
  if (v == nullptr || !v->is_initializer || !v->constant) return std::nullopt;
  if (v->elem_type != 7 && v->elem_type != 6) return std::nullopt;  // int64, int32
  std::vector<int64_t> out;
  for (double d : *v->constant) out.push_back(static_cast<int64_t>(d));
  return out;
}

// The live ai.onnx node `op` writing `name`, whatever its other consumers (ORT's FindPath).
graph::NodeId ProducerOp(const graph::Graph& g, const std::string& name, const char* op) {
  const graph::NodeId p = g.Producer(name);
  return p != graph::kNoNode && IsOp(g.node(p), op) ? p : graph::kNoNode;
}

// ORT's NodeArg::Shape() of `name` (Value::ort_shape), or nullptr when ORT knows no rank.
const std::vector<int64_t>* OrtDims(const graph::Graph& g, const std::string& name) {
  const graph::Value* v = g.FindValue(name);
  return v && v->ort_shape ? &*v->ort_shape : nullptr;
}

// Is_One_Element_Input (reshape_fusion.cc:L240-L259): every dim known, product 1.
bool OneElement(const graph::Graph& g, const std::string& name) {
  const std::vector<int64_t>* d = OrtDims(g, name);
  if (d == nullptr) return false;
  for (int64_t x : *d) {
    if (x != 1) return false;  // product 1: every dim 1
  }
  return true;
}

// optimizer_utils::IsScalar: rank 0, or [1].
bool OrtScalar(const graph::Graph& g, const std::string& name) {
  const std::vector<int64_t>* d = OrtDims(g, name);
  return d && (d->empty() || (d->size() == 1 && (*d)[0] == 1));
}

bool UnsqueezeAxesZero(const graph::Graph& g, const graph::Node& un) {
  std::vector<int64_t> axes = un.IntsAttr("axes");
  if (un.inputs.size() > 1) {
    auto a = ConstInts(g, un.inputs[1]);
    if (!a) return false;
    axes = *a;
  }
  return axes == std::vector<int64_t>{0};
}

// [X] → Shape → Gather → Unsqueeze(axes [0]) → concat input `in`: the Gather, or kNoNode
// (Match_One_Element_Output_Subgraph_1's path, L165-L183).
graph::NodeId ShapeGatherPath(const graph::Graph& g, const std::string& in) {
  const graph::NodeId u = ProducerOp(g, in, "Unsqueeze");
  if (u == graph::kNoNode) return graph::kNoNode;
  const graph::NodeId ga = ProducerOp(g, g.node(u).inputs[0], "Gather");
  if (ga == graph::kNoNode || g.node(ga).inputs.size() < 2) return graph::kNoNode;
  const graph::NodeId s = ProducerOp(g, g.node(ga).inputs[0], "Shape");
  if (s == graph::kNoNode || g.node(s).IntAttr("start", 0) != 0 ||
      g.node(s).attributes.count("end")) {
    return graph::kNoNode;
  }
  return UnsqueezeAxesZero(g, g.node(u)) ? ga : graph::kNoNode;
}

// Match_Shape (L132-L150) as onnxruntime-node 1.30 behaves: the Shape reads the Reshape's own
// input, or both have a known rank and dim j of one equals dim j of the other (the same value
// or the same symbolic name: a Shape of the model input gathered at the batch matches a Conv
// output's batch). Measured with onnxruntime-node 1.30 on small models (v1.21.0 compares the
// whole shapes, values only).
bool MatchShape(const graph::Graph& g, const std::string& shape_input, const std::string& root,
                int64_t j) {
  if (shape_input == root) return true;
  const std::vector<int64_t>* a = OrtDims(g, shape_input);
  const std::vector<int64_t>* b = OrtDims(g, root);
  if (!a || !b || j < 0 || j >= static_cast<int64_t>(a->size()) ||
      j >= static_cast<int64_t>(b->size())) {
    return false;
  }
  const int64_t x = (*a)[j], y = (*b)[j];
  return x == y && x != graph::kOrtUnknownDim;
}

// Is_One_Element_Output_Subgraph (L276-L329): a concat input that yields one element.
bool OneElementSubgraph(const graph::Graph& g, const std::string& in) {
  if (OneElement(g, in)) return true;
  const graph::NodeId ga = ShapeGatherPath(g, in);
  if (ga != graph::kNoNode && OneElement(g, g.node(ga).inputs[1])) return true;
  const graph::NodeId u = ProducerOp(g, in, "Unsqueeze");
  if (u == graph::kNoNode || !UnsqueezeAxesZero(g, g.node(u))) return false;
  const std::string& x = g.node(u).inputs[0];
  if (OneElement(g, x)) return true;
  graph::NodeId bin = ProducerOp(g, x, "Div");
  if (bin == graph::kNoNode) bin = ProducerOp(g, x, "Mul");
  if (bin == graph::kNoNode) return false;
  for (const std::string& i : g.node(bin).inputs) {
    if (!OneElement(g, i)) return false;
  }
  return true;
}

// Output edges of `id` (one per consuming input slot), as ORT's Node::GetOutputEdgesCount.
size_t OutputEdges(const graph::Graph& g, graph::NodeId id) {
  size_t edges = 0;
  for (const std::string& out : g.node(id).outputs) {
    if (out.empty()) continue;
    for (graph::NodeId c : g.Consumers(out)) {
      const auto& in = g.node(c).inputs;
      edges += static_cast<size_t>(std::count(in.begin(), in.end(), out));
    }
  }
  return edges;
}

// graph_utils::RemoveNodesWithOneOutputBottomUp (graph_utils.cc:L849-L899): removes `start`
// unless it feeds several edges or a graph output, then each ancestor left without consumers.
void RemoveBottomUp(graph::Graph& g, graph::NodeId start) {
  std::vector<graph::NodeId> queue{start};
  for (size_t k = 0; k < queue.size(); ++k) {
    const graph::NodeId cur = queue[k];
    if (g.node(cur).removed || OutputEdges(g, cur) > 1) continue;
    bool graph_output = false;
    for (const std::string& o : g.node(cur).outputs) graph_output |= !o.empty() && g.IsGraphOutput(o);
    if (graph_output) continue;
    for (const std::string& in : g.node(cur).inputs) {
      if (in.empty() || g.IsConstant(in)) continue;
      const graph::NodeId p = g.Producer(in);
      if (p != graph::kNoNode) queue.push_back(p);
    }
    if (cur == start || OutputEdges(g, cur) == 0) g.RemoveNode(cur);
  }
}

}  // namespace

std::optional<ReshapeFound> ReshapeFusion::Match(const graph::Graph& g, graph::NodeId id) const {
  const graph::Node& reshape = g.node(id);
  if (!IsOp(reshape, "Reshape") || reshape.inputs.size() < 2 ||
      reshape.IntAttr("allowzero", 0) != 0) {
    return std::nullopt;
  }
  const std::string& root = reshape.inputs[0];
  const graph::NodeId c = ProducerOp(g, reshape.inputs[1], "Concat");
  // CheckOutputEdges(concat, 1): one consuming edge, not a graph output.
  if (c == graph::kNoNode || OutputEdges(g, c) != 1 ||
      g.IsGraphOutput(g.node(c).outputs[0])) {
    return std::nullopt;
  }
  ReshapeFound f{id, c, {}, {}};
  for (const std::string& in : g.node(c).inputs) {
    if (auto values = ConstInts(g, in)) {
      f.target.insert(f.target.end(), values->begin(), values->end());
      continue;
    }
    const graph::NodeId ga = ShapeGatherPath(g, in);
    if (ga != graph::kNoNode) {
      const graph::Node& gn = g.node(ga);
      auto j = ConstInts(g, gn.inputs[1]);
      const int64_t pos = static_cast<int64_t>(f.target.size());
      if (j && j->size() == 1 && (*j)[0] == pos && OrtScalar(g, gn.inputs[1]) &&
          MatchShape(g, g.node(g.Producer(gn.inputs[0])).inputs[0], root, pos)) {
        f.target.push_back(0);
        continue;
      }
    }
    if (!OneElementSubgraph(g, in)) return std::nullopt;
    f.target.push_back(-1);
  }
  if (std::count(f.target.begin(), f.target.end(), -1) > 1) return std::nullopt;
  for (const std::string& in : g.node(c).inputs) {
    const graph::NodeId p = g.Producer(in);
    if (p != graph::kNoNode) f.input_producers.push_back(p);
  }
  return f;
}

RuleEffect ReshapeFusion::Apply(graph::Graph& g, const ReshapeFound& f) const {
  const std::string shape_name = g.node(f.concat).outputs[0];
  for (graph::NodeId p : f.input_producers) {
    if (!g.node(p).removed) RemoveBottomUp(g, p);
  }
  graph::Value v;
  if (const graph::Value* old = g.FindValue(shape_name)) v = *old;
  v.name = shape_name;
  v.elem_type = 7;
  v.has_shape = true;
  v.shape = {static_cast<int64_t>(f.target.size())};
  v.ort_shape = v.shape;
  v.is_initializer = true;
  v.constant = std::vector<double>(f.target.begin(), f.target.end());
  g.RemoveNode(f.concat);
  g.SetValue(std::move(v));
  return RuleEffect::kModified;
}

}  // namespace hase::kernels::rules
