#include "hase/sched/basic_plugins.h"

#include <algorithm>
#include <limits>

#include "hase/base/check.h"

namespace hase::sched {

Status ProfilePreFilter::PreFilter(const Task& task, const ClusterState& state,
                                   CycleState& cycle) const {
  const auto& types = state.cluster.types;
  cycle.profile.clear();
  cycle.profile.reserve(types.size());
  cycle.best_isolated_ms = std::numeric_limits<double>::infinity();
  bool any = false;
  for (const GpuType& type : types) {
    cycle.profile.push_back(oracle_.Profile(task, type));
    if (cycle.profile.back().ok()) {
      any = true;
      cycle.best_isolated_ms = std::min(cycle.best_isolated_ms, cycle.profile.back()->isolated_ms);
    }
  }
  if (!any && !types.empty()) {
    return cycle.profile.front().status().WithContext("task " + task.name);
  }
  return Status::OK();
}

FilterVerdict CapacityFilter::Filter(const Task& task, const GpuState& gpu,
                                     const CycleState& cycle) const {
  const Result<TaskProfile>& p = cycle.profile[gpu.type];
  if (!p.ok()) return FilterVerdict::UnfitAnywhere("no latency profile for this GPU type");
  if (!gpu.CanEverHost(MemoryNeedMib(task, *p))) {
    return FilterVerdict::UnfitAnywhere("memory need exceeds the GPU's memory");
  }
  return FilterVerdict::Fits();
}

FilterVerdict FitsNowFilter::Filter(const Task& task, const GpuState& gpu,
                                    const CycleState& cycle) const {
  const Result<TaskProfile>& p = cycle.profile[gpu.type];
  if (!p.ok()) return FilterVerdict::UnfitAnywhere("no latency profile for this GPU type");
  if (gpu.reservation && gpu.reservation->task_id != task.id) {
    return FilterVerdict::Unfit("reserved for another task");
  }
  if (!gpu.FitsNow(MemoryNeedMib(task, *p))) {
    return FilterVerdict::Unfit("no free slot or memory now");
  }
  return FilterVerdict::Fits();
}

void DefaultBind::Bind(const Task& task, const Decision& decision, const CycleState& cycle,
                       ClusterState& state) {
  GpuState& gpu = state.gpus.at(decision.gpu);
  const Result<TaskProfile>& p = cycle.profile[gpu.type];
  HASE_CHECK(p.ok());
  const double need = MemoryNeedMib(task, *p);
  if (gpu.FitsNow(need)) {
    RunningTask r;
    r.task_id = task.id;
    r.memory_mib = need;
    r.demand = p->demand;
    r.started_ms = state.now_ms;
    r.remaining_ms = p->isolated_ms;
    r.as_of_ms = state.now_ms;
    gpu.running.push_back(r);
  } else {
    gpu.queued.push_back({task.id, need, p->demand, p->isolated_ms});
  }
}

void DefaultReserve::Reserve(const Task& task, const Decision& decision, const CycleState& cycle,
                             ClusterState& state) const {
  Unreserve(task, state);
  GpuState& gpu = state.gpus.at(decision.gpu);
  if (gpu.reservation) return;  // taken meanwhile: the task simply waits
  const Result<TaskProfile>& p = cycle.profile[gpu.type];
  HASE_CHECK(p.ok());
  Reservation r;
  r.task_id = task.id;
  r.start_ms = decision.start_ms;
  r.memory_mib = MemoryNeedMib(task, *p);
  r.demand = p->demand;
  r.isolated_ms = p->isolated_ms;
  r.made_ms = state.now_ms;
  gpu.reservation = r;
  state.reservation_of_task[task.id] = gpu.id;
}

void DefaultReserve::Unreserve(const Task& task, ClusterState& state) const {
  auto it = state.reservation_of_task.find(task.id);
  if (it == state.reservation_of_task.end()) return;
  GpuState& gpu = state.gpus.at(it->second);
  if (gpu.reservation && gpu.reservation->task_id == task.id) gpu.reservation.reset();
  state.reservation_of_task.erase(it);
}

}  // namespace hase::sched
