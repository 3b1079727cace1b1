#include "hase/telemetry/node_map.h"

#include <fmt/format.h>

namespace hase::telemetry {

std::vector<std::string> ResolveNodes(std::vector<GpuObservation>& gpus, const NodeMap& map,
                                      std::string_view target_node, std::string_view source) {
  std::vector<std::string> unresolved;
  for (GpuObservation& g : gpus) {
    if (g.host_label.empty()) g.host_label = g.key.host;
    if (!g.uuid.empty()) {
      if (auto it = map.uuid_to_node.find(g.uuid); it != map.uuid_to_node.end()) {
        g.key.host = it->second;
        continue;
      }
    }
    if (map.nodes.empty() || map.nodes.count(g.host_label)) {
      g.key.host = g.host_label;
      continue;
    }
    if (!target_node.empty() && map.nodes.count(std::string(target_node))) {
      g.key.host = std::string(target_node);
      continue;
    }
    if (g.key.gpu_instance >= 0) continue;  // its GPU's line says it
    unresolved.push_back(fmt::format(
        "telemetry: Hostname '{}' (gpu {}{}{}) from {} matches no cluster node: its load is not "
        "used; name the node with --dcgm URL=NODE or --gpu-node UUID=NODE",
        g.host_label, g.key.index, g.uuid.empty() ? "" : ", ", g.uuid, source));
  }
  return unresolved;
}

Result<std::pair<std::string, std::string>> ParseUuidNode(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not UUID=NODE", "--gpu-node",
                                   "e.g. --gpu-node GPU-5fd4a4f2-0b6c-4c6e-9c0e-2a1b3c4d5e6f=node-a");
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

}  // namespace hase::telemetry
