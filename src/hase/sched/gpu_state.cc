#include "hase/sched/gpu_state.h"

namespace hase::sched {

double GpuState::MemoryUsedMib() const {
  double m = 0;
  for (const RunningTask& r : running) m += r.memory_mib;
  return m;
}

std::optional<QueuedTask> GpuState::StartNextQueued(double now_ms) {
  if (queued.empty()) return std::nullopt;
  const QueuedTask q = queued.front();
  if (q.gang > 1) return std::nullopt;
  if (static_cast<int>(running.size()) >= max_tasks ||
      MemoryUsedMib() + q.memory_mib > memory_mib + 1e-9) {
    return std::nullopt;
  }
  queued.erase(queued.begin());
  RunningTask r;
  r.task_id = q.task_id;
  r.memory_mib = q.memory_mib;
  r.demand = q.demand;
  r.started_ms = now_ms;
  r.remaining_ms = q.isolated_ms;
  r.as_of_ms = now_ms;
  running.push_back(r);
  return q;
}

bool GpuState::FitsNow(double need_mib) const {
  if (!queued.empty()) return false;
  if (static_cast<int>(running.size()) >= max_tasks) return false;
  return MemoryUsedMib() + need_mib <= memory_mib + 1e-9;
}

double GpuState::TotalDemand() const {
  double d = background.EffectiveSmActive();
  for (const RunningTask& r : running) d += r.demand;
  return d;
}

}  // namespace hase::sched
