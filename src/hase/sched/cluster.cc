#include "hase/sched/cluster.h"

#include <algorithm>

#include <fmt/format.h>

namespace hase::sched {

std::string Cluster::GpuLabel(int gpu) const {
  const Gpu& g = gpus.at(gpu);
  if (g.is_mig()) return fmt::format("{}/{}/mig{}-{}", g.node, g.index, g.mig_slot, g.mig_profile);
  return fmt::format("{}/{}", g.node, g.index);
}

std::vector<int> Cluster::CountByType() const {
  std::vector<int> n(types.size(), 0);
  for (const Gpu& g : gpus) ++n[g.type];
  return n;
}

int Cluster::TypeIndex(const std::string& type_name) const {
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i].name == type_name) return static_cast<int>(i);
  }
  return -1;
}

double Cluster::MaxGpuMemoryMib() const {
  double m = 0;
  for (const Gpu& g : gpus) m = std::max(m, g.memory_mib);
  return m;
}

Status Cluster::Validate() const {
  if (gpus.empty()) {
    return Status::InvalidArgument("the cluster has no GPUs", name,
                                   "list at least one node with gpus");
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    const Gpu& g = gpus[i];
    const std::string where = fmt::format("GPU {} ({}/{})", i, g.node, g.index);
    if (g.id != static_cast<int>(i)) return Status::Internal("GPU ids are not dense", where);
    if (g.type < 0 || g.type >= static_cast<int>(types.size())) {
      return Status::InvalidArgument("GPU type index out of range", where);
    }
    if (!(g.memory_mib > 0)) {
      return Status::InvalidArgument("GPU memory must be > 0 MiB", where,
                                     "set memory_mib or use a catalog type with memory");
    }
    if (g.max_tasks < 1) {
      return Status::InvalidArgument("max_tasks must be >= 1", where);
    }
  }
  return Status::OK();
}

}  // namespace hase::sched
