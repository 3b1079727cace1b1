#include "hase/service/mig_telemetry.h"

namespace hase::service {

MigDeclarations DeclaredMigInstances(const sched::Cluster& cluster) {
  MigDeclarations out;
  for (const sched::Gpu& g : cluster.gpus) {
    if (!g.is_mig()) continue;
    std::vector<telemetry::MigInstanceDecl>& list = out[{g.node, g.index}];
    if (static_cast<int>(list.size()) <= g.mig_slot) list.resize(g.mig_slot + 1);
    list[g.mig_slot] = {g.mig_profile, g.mig_gpu_instance};
  }
  return out;
}

std::optional<telemetry::GpuObservation> LiveObservation(const telemetry::GpuLoadTable& table,
                                                         const sched::Cluster& cluster,
                                                         const MigDeclarations& decls, int gpu,
                                                         double now_s) {
  const sched::Gpu& g = cluster.gpus.at(gpu);
  if (!g.is_mig()) {
    // A MIG instance type on an unknown physical GPU (cluster.h): no series is its own.
    if (!cluster.types.at(g.type).mig_profile.empty()) return std::nullopt;
    return table.Get({g.node, g.index}, now_s);
  }
  auto d = decls.find({g.node, g.index});
  if (d == decls.end()) return std::nullopt;
  const std::vector<telemetry::GpuObservation> seen = table.Instances(g.node, g.index, now_s);
  if (seen.empty()) return std::nullopt;
  const telemetry::MigMatch m = telemetry::MatchMigInstances(d->second, seen);
  const int s = m.declared_to_seen.at(g.mig_slot);
  if (s < 0) return std::nullopt;
  return seen[s];
}

}  // namespace hase::service
