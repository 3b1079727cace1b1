// The cluster as Slurm knows it: nodes with typed GPU GRES → a hase cluster file, and the
// Slurm GRES type to request for each (node, catalog GPU type) hase places on.
//
// GRES type → catalog GPU type: the GRES type is looked up in the GPU catalog like any other
// spelling (catalog aliases: a100 → A100-SXM4-40GB, h100 → H100-SXM5-80GB, t4 → T4, l4 → L4,
// see data/gpus.yaml), unless `overrides` names it (`--slurm-gres-type a100=A100-SXM4-80GB`).
// A `--config` cluster file overrides the whole inventory instead (types, memory, max_tasks);
// each of its (node, type) must then exist in Slurm (MatchClusterToSlurm).
//
// GPU GRES are exclusive in Slurm (one job per GPU unless sharding/MPS is configured), so the
// discovered cluster has max_tasks_per_gpu 1: hase keeps further tasks in its own queues.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/service/slurm_text.h"

namespace hase::service {

// Catalog id of a GPU type spelling ("a100" → "A100-SXM4-40GB"), nullopt when unknown.
using GpuTypeResolver = std::function<std::optional<std::string>(std::string_view)>;
// (node, catalog GPU type) → Slurm GRES type ("a100").
using SlurmGresMap = std::map<std::pair<std::string, std::string>, std::string>;

struct SlurmInventory {
  std::string cluster_yaml;          // a cluster file (sched/cluster_file.h schema)
  SlurmGresMap gres;                 // for sbatch --gres=gpu:TYPE:1
  std::vector<std::string> skipped;  // "node: why" for nodes left out (no GPU, other partition)
};

// Builds the inventory from `scontrol show node -o` nodes. `partition` "" = every node.
// Errors: NotFound (a GRES type neither in `overrides` nor in the catalog; hint: the flag),
// InvalidArgument (an untyped gpu GRES: hase needs the type; no GPU node at all).
Result<SlurmInventory> SlurmInventoryFromNodes(const std::vector<SlurmNode>& nodes, const std::string& partition,
                                               const std::map<std::string, std::string>& overrides,
                                               const GpuTypeResolver& resolve);

// The GRES map for a cluster from a --config file: each GPU's (node, type) must be offered by
// that Slurm node (after the same type resolution). Errors: NotFound naming the node and what
// Slurm has there.
Result<SlurmGresMap> MatchClusterToSlurm(const sched::Cluster& cluster, const SlurmInventory& slurm);

}  // namespace hase::service
