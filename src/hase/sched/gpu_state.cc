#include "hase/sched/gpu_state.h"

namespace hase::sched {

double GpuState::MemoryUsedMib() const {
  double m = 0;
  for (const RunningTask& r : running) m += r.memory_mib;
  return m;
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
