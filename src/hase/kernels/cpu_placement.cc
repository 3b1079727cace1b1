#include "hase/kernels/cpu_placement.h"

#include <map>
#include <queue>
#include <set>
#include <unordered_set>

#include "hase/graph/topological_order.h"

namespace hase::kernels {
namespace {

// ORT fallback_cpu_capability.cc: kSmallInitializerThreshold.
constexpr int64_t kSmallInitializerElements = 100;

// Inputs the CUDA kernels of these ops take in host memory (InputMemoryType(OrtMemTypeCPUInput)
// in onnxruntime/core/providers/cuda: reshape.cc, unsqueeze.cc, squeeze.cc, slice.cc, expand.cc,
// constant_of_shape.cc, tile.cc, resize.cc, upsample.cc, range.cc, topk.cc, pad.cc).
bool IsHostInput(const graph::Node& n, size_t i) {
  static const std::map<std::string, std::set<size_t>> kHostInputs = {
      {"Reshape", {1}},         {"Unsqueeze", {1}}, {"Squeeze", {1}},    {"Slice", {1, 2, 3, 4}},
      {"Expand", {1}},          {"Tile", {1}},      {"Resize", {1, 2, 3}}, {"Upsample", {1}},
      {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}}, {"TopK", {1}},     {"Pad", {1, 2}},
  };
  auto it = kHostInputs.find(n.op_type);
  return it != kHostInputs.end() && it->second.count(i) > 0;
}

}  // namespace

std::vector<bool> CpuPlacedNodes(const graph::Graph& g) {
  std::vector<bool> cpu(g.nodes().size(), false);
  const std::vector<graph::NodeId> order = graph::OrtTopologicalOrder(g);
  std::vector<size_t> position(g.nodes().size(), 0);
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  auto later = [&](graph::NodeId a, graph::NodeId b) { return position[a] > position[b]; };
  std::priority_queue<graph::NodeId, std::vector<graph::NodeId>, decltype(later)> candidates(later);

  std::unordered_set<std::string> host_values;
  auto to_host = [&](graph::NodeId id) {
    for (const std::string& o : g.node(id).outputs) {
      if (o.empty()) continue;
      host_values.insert(o);
      for (graph::NodeId c : g.Consumers(o)) candidates.push(c);
    }
  };
  for (graph::NodeId id : order) {
    const graph::Node& n = g.node(id);
    if (n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size")) {
      cpu[id] = true;
      to_host(id);
    }
  }
  const std::unordered_set<std::string> graph_inputs(g.inputs().begin(), g.inputs().end());
  std::unordered_set<graph::NodeId> visited;
  while (!candidates.empty()) {
    const graph::NodeId id = candidates.top();
    candidates.pop();
    if (!visited.insert(id).second || cpu[id]) continue;
    const graph::Node& n = g.node(id);
    bool place = true;
    for (size_t i = 0; i < n.inputs.size() && place; ++i) {
      const std::string& in = n.inputs[i];
      if (in.empty()) continue;
      const graph::Value* v = g.FindValue(in);
      if (v != nullptr && (v->elem_type == 10 || v->elem_type == 16)) {
        place = false;  // float16 / bfloat16
      } else if ((g.IsConstant(in) && v != nullptr && v->shape_known() &&
                  v->elements() <= kSmallInitializerElements) ||
                 graph_inputs.count(in)) {
        continue;
      } else if (!host_values.count(in) || IsHostInput(n, i)) {
        place = false;
      }
    }
    if (place) {
      cpu[id] = true;
      to_host(id);
    }
  }
  return cpu;
}

}  // namespace hase::kernels
