// The daemon's live plan (live_plan.h): made after every pass from a copy of the state, and the
// reasons of memory waits. Part of Daemon (daemon.h).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hase/sched/basic_plugins.h"
#include "hase/service/daemon.h"
#include "hase/service/daemon_internal.h"

namespace hase::service {

namespace {

// FNV-1a over the numbers a plan reads.
struct Signature {
  uint64_t h = 1469598103934665603ull;
  void Add(double v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i) h = (h ^ ((bits >> (8 * i)) & 0xff)) * 1099511628211ull;
  }
};

}  // namespace

void Daemon::PlanLocked(std::unique_lock<std::mutex>& lock, bool wait) {
  if (options_.plan_budget_ms <= 0) return;
  Signature sig;
  // A changed calibration factor re-prices what runs and waits (calibration.h) without
  // changing which tasks are where: the plan must be made again for it.
  sig.Add(static_cast<double>(calibration_->generation()));
  for (const QueueKey& k : queue_) sig.Add(static_cast<double>(std::get<3>(k)));
  sig.Add(-1);
  for (const sched::GpuState& g : state_.gpus) {
    for (const sched::RunningTask& rt : g.running) sig.Add(rt.task_id);
    sig.Add(-2);
    for (const sched::QueuedTask& q : g.queued) sig.Add(q.task_id);
    sig.Add(g.reservation ? g.reservation->task_id : -3);
    sig.Add(g.memory_mib);
    sig.Add(g.background.EffectiveSmActive());
  }
  const double now = Now();
  if (plan_made_s_ > -1e300 && sig.h == plan_signature_ && now - plan_made_s_ < options_.plan_refresh_s) {
    if (wait) {  // the plan of this state may still be on its way
      lock.unlock();
      planner_.WaitIdle();
      lock.lock();
    }
    return;
  }
  plan_signature_ = sig.h;
  plan_made_s_ = now;
  LivePlanInput in = PlanInputLocked();
  std::shared_ptr<spdlog::logger> log = options_.logger;
  planner_.Request(std::move(in), [log](const Status& s) { log->warn("plan failed: {}", s.ToString()); });
  if (wait) {
    lock.unlock();
    planner_.WaitIdle();
    lock.lock();
  }
}

LivePlanInput Daemon::PlanInputLocked() const {
  LivePlanInput in;
  in.state = std::make_unique<sched::ClusterState>(state_);
  in.queue.reserve(queue_.size());
  for (const QueueKey& k : queue_) in.queue.push_back(tasks_.at(std::get<3>(k)).ToSchedTask());
  for (const sched::GpuState& g : state_.gpus) {
    for (const sched::RunningTask& rt : g.running) in.placed_state[rt.task_id] = "running";
    for (const sched::QueuedTask& q : g.queued) in.placed_state[q.task_id] = "bound";
  }
  for (const LiveGpu& l : live_) in.foreign_mib.push_back(l.foreign_mib);
  for (const auto& [g, mem] : failed_gpus_) in.failed_gpus.insert(g);
  for (const sched::Gpu& g : cluster_.gpus) in.catalog_mib.push_back(g.memory_mib);
  in.epoch_s = epoch_s_;
  in.policy = options_.policy;
  in.objective = options_.objective;
  in.oracle = oracle_;
  in.options.budget_ms = options_.plan_budget_ms > 0 ? options_.plan_budget_ms : sched::QueuePlanOptions{}.budget_ms;
  TeamPlanInputLocked(in);
  return in;
}

std::shared_ptr<const LiveQueuePlan> Daemon::Plan() const { return planner_.Latest(); }

std::string Daemon::MemoryWaitReasonLocked(const sched::Task& t, const sched::CycleState& cycle) const {
  // The GPU it fits by catalog memory whose live free memory comes closest to its need.
  int best = -1;
  double best_gap = -internal::kInf, best_need = 0, best_free = 0;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (failed_gpus_.count(g.id) || g.type >= static_cast<int>(cycle.profile.size())) continue;
    const auto& p = cycle.profile[g.type];
    if (!p.ok()) continue;
    const double need = sched::MemoryNeedMib(t, *p);
    if (need > g.memory_mib) continue;
    const sched::GpuState& s = state_.gpus[g.id];
    const double free = std::max(0.0, s.memory_mib - s.MemoryUsedMib());
    if (best < 0 || free - need > best_gap) {
      best = g.id;
      best_gap = free - need;
      best_need = need;
      best_free = free;
    }
  }
  if (best < 0) return "waits for GPU memory";
  const sched::Gpu& g = cluster_.gpus[best];
  return fmt::format(
      "waits for GPU memory: needs {:.0f} MiB; GPU {}/{} ({}) comes closest with {:.0f} MiB free of {:.0f} MiB "
      "({:.0f} MiB in use outside hase per DCGM, {:.0f} MiB by hase's tasks)",
      best_need, g.node, g.index, cluster_.types[g.type].name, best_free, g.memory_mib, live_[best].foreign_mib,
      state_.gpus[best].MemoryUsedMib());
}

}  // namespace hase::service
