#include "hase/graph/topological_order.h"

#include <algorithm>
#include <utility>

namespace hase::graph {

std::vector<NodeId> OrtTopologicalOrder(const Graph& g) {
  const auto& nodes = g.nodes();
  std::vector<NodeId> live;
  for (NodeId id = 0; id < static_cast<NodeId>(nodes.size()); ++id) {
    if (!nodes[id].removed) live.push_back(id);
  }
  auto by_key = [&](NodeId a, NodeId b) { return nodes[a].order_key < nodes[b].order_key; };
  std::sort(live.begin(), live.end(), by_key);

  // Producers of each node (distinct), and leaves (no live consumer).
  auto producers = [&](NodeId id) {
    std::vector<NodeId> p;
    for (const std::string& in : nodes[id].inputs) {
      if (in.empty()) continue;
      const NodeId q = g.Producer(in);
      if (q != kNoNode && std::find(p.begin(), p.end(), q) == p.end()) p.push_back(q);
    }
    std::sort(p.begin(), p.end(), by_key);
    return p;
  };
  std::vector<std::pair<NodeId, bool>> stack;  // (node, leaving)
  for (NodeId id : live) {
    bool has_consumer = false;
    for (const std::string& out : nodes[id].outputs) {
      if (!out.empty() && !g.Consumers(out).empty()) has_consumer = true;
    }
    if (!has_consumer) stack.emplace_back(id, false);
  }
  std::vector<bool> visited(nodes.size(), false);
  std::vector<NodeId> order;
  order.reserve(live.size());
  while (!stack.empty()) {
    const auto [id, leaving] = stack.back();
    stack.pop_back();
    if (leaving) {
      order.push_back(id);
      continue;
    }
    if (visited[id]) continue;
    visited[id] = true;
    stack.emplace_back(id, true);
    for (NodeId p : producers(id)) stack.emplace_back(p, false);
  }
  return order;
}

}  // namespace hase::graph
