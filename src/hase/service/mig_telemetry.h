// MIG instances between the cluster file and telemetry: which DCGM series a cluster GPU that
// is a MIG instance reads (docs/scheduler.md "MIG"; matching rule in telemetry/mig_match.h).
//
// Thread-safety: pure functions; LiveObservation reads the table under its own lock.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hase/sched/cluster.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/mig_match.h"

namespace hase::service {

// (node, GPU index) → the MIG instances declared there, in file order (slot order).
using MigDeclarations = std::map<std::pair<std::string, int>, std::vector<telemetry::MigInstanceDecl>>;

// Every MIG-partitioned GPU of `cluster` with its declared instances; whole GPUs are absent.
// What telemetry::NodeMap::mig takes.
MigDeclarations DeclaredMigInstances(const sched::Cluster& cluster);

// The live observation for cluster GPU `gpu`: the whole GPU's {node, index} for a whole GPU;
// for a MIG instance, the instance series MatchMigInstances pairs with its slot. std::nullopt
// when none is seen, and for a MIG instance type outside a `mig:` list (its physical GPU is
// unknown, sched/cluster.h). `decls` = DeclaredMigInstances(cluster).
std::optional<telemetry::GpuObservation> LiveObservation(const telemetry::GpuLoadTable& table,
                                                         const sched::Cluster& cluster,
                                                         const MigDeclarations& decls, int gpu,
                                                         double now_s);

}  // namespace hase::service
