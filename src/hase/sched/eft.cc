#include "hase/sched/eft.h"

#include <algorithm>

#include "hase/sched/backfill.h"
#include "hase/sched/basic_plugins.h"

namespace hase::sched {

double EarliestFinish::StartMs(const Task& task, const GpuState& gpu, const CycleState& cycle) const {
  const double start = gpu.Idle() ? cycle.now_ms : std::max(cycle.now_ms, gpu.projected_finish_ms);
  // Reserved for another task (a k-GPU task's reservation, gang.h): EASY backfilling, the task
  // goes first only if it ends by the shadow time, else after the reserved task.
  if (gpu.reservation && gpu.reservation->task_id != task.id) {
    const Reservation& r = *gpu.reservation;
    if (start + RunMs(gpu, cycle) > r.start_ms + kTimeEpsMs) return std::max(start, r.start_ms + r.isolated_ms);
  }
  return start;
}

double EarliestFinish::RunMs(const GpuState& gpu, const CycleState& cycle) const {
  const TaskProfile& p = *cycle.profile[gpu.type];
  return p.isolated_ms * oracle_.contention().Slowdown(p.demand, gpu.background.EffectiveSmActive());
}

double EarliestFinish::CompletionMs(const Task& task, const GpuState& gpu,
                                    const CycleState& cycle) const {
  return StartMs(task, gpu, cycle) + RunMs(gpu, cycle);
}

double EarliestFinish::Score(const Task& task, const GpuState& gpu,
                             const CycleState& cycle) const {
  const double end = CompletionMs(task, gpu, cycle);
  if (end <= 0) return 100;
  return std::clamp(100.0 * (cycle.now_ms + cycle.best_isolated_ms) / end, 0.0, 100.0);
}

Decision EarliestFinishSelect::Select(const Task& task, const ClusterState& state,
                             const CycleState& cycle, const std::vector<Candidate>& candidates) {
  const GpuState& gpu = state.gpus[candidates.front().gpu];
  Decision d;
  d.gpu = gpu.id;
  d.start_ms = eft_->StartMs(task, gpu, cycle);
  d.end_ms = eft_->CompletionMs(task, gpu, cycle);
  if (candidates.size() > 1) {
    const GpuState& second = state.gpus[candidates[1].gpu];
    d.runner_up_gpu = second.id;
    d.runner_up_end_ms = eft_->CompletionMs(task, second, cycle);
  }
  if (!claim_when_busy_ || (d.start_ms <= cycle.now_ms + kTimeEpsMs &&
                            gpu.FitsNow(MemoryNeedMib(task, *cycle.profile[gpu.type])))) {
    d.kind = Decision::Kind::kBind;
    return d;
  }
  d.kind = Decision::Kind::kWait;
  d.claim_gpu = gpu.id;
  d.claim_not_before_ms = d.start_ms;
  d.reason = "mapped to the GPU of its minimum completion time, which is busy";
  return d;
}

std::unique_ptr<Policy> MakeEftPolicy(std::shared_ptr<const LatencyOracle> oracle) {
  Policy::Options po;
  po.dispatch_on_arrival = true;
  po.one_idle_gpu_per_type = true;
  po.max_tasks_per_gpu = 1;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("eft", po, std::move(oracle));
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  auto eft = std::make_shared<EarliestFinish>(o);
  policy->AddScore(eft);
  policy->SetSelect(std::make_shared<EarliestFinishSelect>(eft, false));
  return policy;
}

}  // namespace hase::sched
