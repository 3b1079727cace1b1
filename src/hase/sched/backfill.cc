#include "hase/sched/backfill.h"

namespace hase::sched {

bool BackfillAllowed(const GpuState& gpu, const ContentionModel& model, double now_ms,
                     const ExtraTask& candidate) {
  if (!gpu.reservation || gpu.reservation->task_id == candidate.task_id) return true;
  if (!gpu.FitsNow(candidate.memory_mib)) return false;
  // The GPU with the candidate started now.
  GpuState what_if = gpu;
  RunningTask r;
  r.task_id = candidate.task_id;
  r.memory_mib = candidate.memory_mib;
  r.demand = candidate.demand;
  r.started_ms = now_ms;
  r.remaining_ms = candidate.isolated_ms;
  r.as_of_ms = now_ms;
  what_if.running.push_back(r);
  const double start = EarliestFitMs(what_if, model, now_ms, gpu.reservation->memory_mib);
  return start <= gpu.reservation->start_ms + kTimeEpsMs;
}

}  // namespace hase::sched
