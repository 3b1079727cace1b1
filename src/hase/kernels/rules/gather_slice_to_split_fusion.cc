#include "hase/kernels/rules/gather_slice_to_split_fusion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "hase/graph/topological_order.h"
#include "hase/kernels/rules/rule_util.h"

namespace hase::kernels::rules {
namespace {

// The value of a one-element int64 constant (rank 0 or [1]) and its rank (GetScalarInt64Initializer).
std::optional<std::pair<int64_t, size_t>> ScalarInt64(const graph::Graph& g, const std::string& name) {
  const graph::Value* v = g.FindValue(name);
  if (!v || !v->is_initializer || !v->constant || v->elem_type != 7 || !v->has_shape ||
      v->constant->size() != 1 || v->shape.size() > 1 || (v->shape.size() == 1 && v->shape[0] != 1)) {
    return std::nullopt;
  }
  return std::make_pair(static_cast<int64_t>((*v->constant)[0]), v->shape.size());
}

// One piece of the split: start along the axis, size, the consumer, its output, Squeeze needed.
struct Piece {
  int64_t start;
  int64_t size;
  graph::NodeId node;
  std::string output;
  bool squeeze;
};

// The pieces `x`'s Gather/Slice consumers cut along one axis, covering it exactly; nullopt if
// they do not (GatherSliceToSplitFusion::ApplyImpl's per-candidate checks).
std::optional<std::pair<int64_t, std::vector<Piece>>> Pieces(const graph::Graph& g,
                                                             const std::string& x) {
  const graph::Value* xv = g.FindValue(x);
  const std::vector<int64_t>* dims = xv ? DecisionDims(g, *xv) : nullptr;
  if (!dims) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(dims->size());
  std::vector<graph::NodeId> cands;
  for (graph::NodeId c : g.Consumers(x)) {
    const graph::Node& n = g.node(c);
    if (!n.inputs.empty() && n.inputs[0] == x && (IsOp(n, "Gather") || IsOp(n, "Slice"))) {
      cands.push_back(c);
    }
  }
  if (cands.size() < 2) return std::nullopt;
  auto axis_of = [&](const graph::Node& n) -> std::optional<int64_t> {
    int64_t a = 0;
    if (n.op_type == "Gather") {
      a = n.IntAttr("axis", 0);
    } else {
      if (n.inputs.size() < 4) return std::nullopt;
      auto s = ScalarInt64(g, n.inputs[3]);
      if (!s) return std::nullopt;
      a = s->first;
    }
    return a < 0 ? a + rank : a;
  };
  auto first = axis_of(g.node(cands[0]));
  if (!first || *first < 0 || *first >= rank) return std::nullopt;
  const int64_t axis = *first;
  const int64_t dim = (*dims)[axis];
  if (dim < 0) return std::nullopt;  // ORT needs a dim value
  std::vector<bool> consumed(static_cast<size_t>(dim), false);
  std::vector<Piece> pieces;
  for (graph::NodeId c : cands) {
    const graph::Node& n = g.node(c);
    auto a = axis_of(n);
    if (!a || *a != axis || n.outputs.empty()) return std::nullopt;
    if (n.op_type == "Gather") {
      if (n.inputs.size() < 2) return std::nullopt;
      auto idx = ScalarInt64(g, n.inputs[1]);
      if (!idx) return std::nullopt;
      int64_t s = idx->first < 0 ? idx->first + dim : idx->first;
      if (s < 0 || s >= dim || consumed[s]) return std::nullopt;
      consumed[s] = true;
      pieces.push_back({s, 1, c, n.outputs[0], idx->second == 0});
    } else {
      auto st = ScalarInt64(g, n.inputs[1]);
      auto en = ScalarInt64(g, n.inputs[2]);
      if (!st || !en) return std::nullopt;
      if (n.inputs.size() >= 5 && !n.inputs[4].empty()) {
        auto step = ScalarInt64(g, n.inputs[4]);
        if (!step || step->first != 1) return std::nullopt;
      }
      int64_t s = st->first, e = en->first;
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      if (s >= e) return std::nullopt;
      for (int64_t i = s; i < e; ++i) {
        if (consumed[i]) return std::nullopt;
        consumed[i] = true;
      }
      pieces.push_back({s, e - s, c, n.outputs[0], false});
    }
  }
  if (std::find(consumed.begin(), consumed.end(), false) != consumed.end()) return std::nullopt;
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.start < b.start; });
  return std::make_pair(axis, pieces);
}

std::string FreshName(const graph::Graph& g, const std::string& base) {
  std::string name = base;
  for (int i = 1; g.FindValue(name) != nullptr || g.Producer(name) != graph::kNoNode; ++i) {
    name = base + "_" + std::to_string(i);
  }
  return name;
}

}  // namespace

int GatherSliceToSplitFusion::ApplyToGraph(graph::Graph& g) const {
  if (g.opset() < 13) return 0;
  std::vector<std::string> candidates;
  for (const std::string& in : g.inputs()) {
    if (g.Consumers(in).size() > 1) candidates.push_back(in);
  }
  for (graph::NodeId id : graph::OrtTopologicalOrder(g)) {
    const graph::Node& n = g.node(id);
    if (n.removed || n.op_type == "Shape" || n.outputs.size() != 1 || n.outputs[0].empty()) {
      continue;
    }
    int edges = 0;
    for (graph::NodeId c : g.Consumers(n.outputs[0])) {
      for (const std::string& in : g.node(c).inputs) edges += in == n.outputs[0];
    }
    if (edges > 1) candidates.push_back(n.outputs[0]);
  }
  int fused = 0;
  for (const std::string& x : candidates) {
    auto found = Pieces(g, x);
    if (!found) continue;
    const auto& [axis, pieces] = *found;
    const graph::Value xv = *g.FindValue(x);
    std::vector<std::string> split_outputs;
    std::vector<double> sizes;
    std::vector<std::string> sources;
    for (const Piece& p : pieces) {
      const graph::Node piece_node = g.node(p.node);
      sources.insert(sources.end(), piece_node.source_nodes.begin(), piece_node.source_nodes.end());
      g.RemoveNode(p.node);
      sizes.push_back(static_cast<double>(p.size));
      if (!p.squeeze) {
        split_outputs.push_back(p.output);
        continue;
      }
      // The piece keeps the axis (size 1); a Squeeze (fresh node) drops it into the Gather's output.
      graph::Value piece = xv;
      piece.name = FreshName(g, x + "_split_output");
      piece.is_initializer = false;
      piece.constant.reset();
      piece.ort_value.reset();
      if (piece.has_shape && axis < static_cast<int64_t>(piece.shape.size())) piece.shape[axis] = 1;
      if (piece.ort_shape && axis < static_cast<int64_t>(piece.ort_shape->size())) {
        (*piece.ort_shape)[axis] = 1;
      }
      graph::Value axes;
      axes.name = FreshName(g, x + "_squeeze_axes");
      axes.elem_type = 7;
      axes.has_shape = true;
      axes.shape = {1};
      axes.ort_shape = axes.shape;
      axes.is_initializer = true;
      axes.constant = std::vector<double>{static_cast<double>(axis)};
      split_outputs.push_back(piece.name);
      graph::Node sq;
      sq.name = FreshName(g, "Squeeze_" + p.output);
      sq.op_type = "Squeeze";
      sq.inputs = {piece.name, axes.name};
      sq.outputs = {p.output};
      sq.source_nodes = piece_node.source_nodes;
      g.SetValue(std::move(piece));
      g.SetValue(std::move(axes));
      g.AddNode(std::move(sq));
    }
    graph::Value split_sizes;
    split_sizes.name = FreshName(g, x + "_splits");
    split_sizes.elem_type = 7;
    split_sizes.has_shape = true;
    split_sizes.shape = {static_cast<int64_t>(sizes.size())};
    split_sizes.ort_shape = split_sizes.shape;
    split_sizes.is_initializer = true;
    split_sizes.constant = sizes;
    graph::Node split;
    split.name = FreshName(g, "Split_" + x);
    split.op_type = "Split";
    split.inputs = {x, split_sizes.name};
    split.outputs = split_outputs;
    split.attributes["axis"] = graph::Attribute::Int(axis);
    split.source_nodes = sources;
    g.SetValue(std::move(split_sizes));
    g.AddNode(std::move(split));
    ++fused;
  }
  return fused;
}

}  // namespace hase::kernels::rules
