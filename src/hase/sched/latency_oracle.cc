#include "hase/sched/latency_oracle.h"

#include <fmt/format.h>

namespace hase::sched {

void TableOracle::Set(const std::string& key, const std::string& type_name, double per_batch_ms,
                      double demand, double memory_mib) {
  table_[{key, type_name}] = TaskProfile{per_batch_ms, demand, memory_mib};
}

Result<TaskProfile> TableOracle::Profile(const Task& task, const GpuType& type) const {
  auto it = table_.find({ProfileKey(task), type.name});
  if (it == table_.end()) it = table_.find({task.model, type.name});
  if (it == table_.end()) {
    return Status::NotFound(
        fmt::format("no latency entry for model '{}' on GPU type '{}'", task.model, type.name),
        ProfileKey(task), "add a row for this model and GPU type to the latency table");
  }
  TaskProfile p = it->second;
  p.isolated_ms *= static_cast<double>(task.num_batches);
  if (task.memory_mib > 0) p.memory_mib = task.memory_mib;
  return p;
}

}  // namespace hase::sched
