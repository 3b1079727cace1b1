#include "hase/service/slurm_cluster.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace hase::service {
namespace {

// A YAML scalar that reads back as exactly `s` (JSON strings are YAML flow scalars).
std::string Quote(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

Result<SlurmInventory> SlurmInventoryFromNodes(const std::vector<SlurmNode>& nodes, const std::string& partition,
                                               const std::map<std::string, std::string>& overrides,
                                               const GpuTypeResolver& resolve) {
  SlurmInventory inv;
  std::string yaml = "name: slurm\nmax_tasks_per_gpu: 1  # Slurm GPU GRES are exclusive\nnodes:\n";
  int gpu_nodes = 0;
  for (const SlurmNode& n : nodes) {
    if (!partition.empty() &&
        std::find(n.partitions.begin(), n.partitions.end(), partition) == n.partitions.end()) {
      inv.skipped.push_back(n.name + ": not in partition " + partition);
      continue;
    }
    std::string gpus;
    for (const SlurmGres& g : n.gres) {
      if (g.name != "gpu" || g.count <= 0) continue;
      if (g.type.empty()) {
        return Status::InvalidArgument("node " + n.name + " has untyped GPU GRES (gpu:" + std::to_string(g.count) + ")",
                                       "Slurm node " + n.name,
                                       "give its GPUs a Type= in gres.conf, or describe the cluster with --config");
      }
      auto o = overrides.find(g.type);
      const std::string spelling = o != overrides.end() ? o->second : g.type;
      std::optional<std::string> id = resolve(spelling);
      if (!id) {
        return Status::NotFound("GRES type '" + g.type + "' of node " + n.name + " is not a catalog GPU type" +
                                    (o != overrides.end() ? " (mapped to '" + spelling + "')" : ""),
                                "Slurm node " + n.name,
                                "map it: --slurm-gres-type " + g.type + "=<catalog type> (hase gpus lists them)");
      }
      auto [it, fresh] = inv.gres.emplace(std::make_pair(n.name, *id), g.type);
      if (!fresh && it->second != g.type) {
        return Status::InvalidArgument("node " + n.name + " has GRES types '" + it->second + "' and '" + g.type +
                                           "' that both map to " + *id,
                                       "Slurm node " + n.name, "map one of them elsewhere with --slurm-gres-type");
      }
      gpus += "      - {type: " + Quote(*id) + ", count: " + std::to_string(g.count) + "}\n";
    }
    if (gpus.empty()) {
      inv.skipped.push_back(n.name + ": no GPU GRES");
      continue;
    }
    ++gpu_nodes;
    yaml += "  - name: " + Quote(n.name) + "\n    gpus:\n" + gpus;
  }
  if (gpu_nodes == 0) {
    return Status::InvalidArgument("Slurm reports no node with GPU GRES" +
                                       (partition.empty() ? std::string() : " in partition " + partition),
                                   "scontrol show node", "check GresTypes=gpu and the nodes' Gres= in slurm.conf");
  }
  inv.cluster_yaml = std::move(yaml);
  return inv;
}

Result<SlurmGresMap> MatchClusterToSlurm(const sched::Cluster& cluster, const SlurmInventory& slurm) {
  SlurmGresMap out;
  for (const sched::Gpu& g : cluster.gpus) {
    const std::string& type = cluster.types[g.type].name;
    auto it = slurm.gres.find({g.node, type});
    if (it == slurm.gres.end()) {
      std::string offered;
      for (const auto& [key, gres] : slurm.gres) {
        if (key.first == g.node) offered += (offered.empty() ? "" : ", ") + key.second + " (gpu:" + gres + ")";
      }
      return Status::NotFound("cluster file GPU " + cluster.GpuLabel(g.id) + " (" + type + ") is not offered by Slurm",
                              "node " + g.node,
                              offered.empty() ? "Slurm has no GPU node of that name (scontrol show node)"
                                              : "Slurm offers " + offered);
    }
    out[it->first] = it->second;
  }
  return out;
}

}  // namespace hase::service
