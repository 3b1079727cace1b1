#include "hase/sched/queue_plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <optional>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "hase/sched/basic_plugins.h"
#include "hase/sched/timeline.h"
#include "hase/sched/wait_memo.h"

namespace hase::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDoneMs = 1e-6;      // remaining isolated work below this has ended, ms
constexpr double kSameInstantMs = 1e-6;

class Planner {
 public:
  Planner(const ClusterState& live, Policy& policy, const std::vector<Task>& queue, const QueuePlanOptions& options)
      : state_(live), policy_(policy), queue_(queue), options_(options), model_(policy.oracle().contention()),
        version_(live.gpus.size(), 0) {
    memo_.Reset(live.gpus.size());
  }

  Result<QueuePlan> Go();

 private:
  struct End {  // a future completion on a GPU (valid while version matches)
    double t;
    int gpu;
    uint64_t version;
    bool operator>(const End& o) const { return std::tie(t, gpu) > std::tie(o.t, o.gpu); }
  };
  struct Span {  // where and when one task runs in the plan
    int gpu = -1;
    double start = kInf, end = kInf;
  };

  // Advances GPU `g`'s running tasks to `t`, re-rates them under the contention model and
  // files its next completion.
  void Rerate(int g, double t);
  // Ends what finished on `g` at `t`, starts its local queue, re-rates.
  void Advance(int g, double t);
  Status Pass(double t, bool first);
  void Extrapolate(double t);
  void Finish();
  bool OverBudget() const;

  ClusterState state_;
  Policy& policy_;
  const std::vector<Task>& queue_;
  const QueuePlanOptions options_;
  const ContentionModel& model_;
  std::vector<uint64_t> version_;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
  std::unordered_map<int, Span> span_;       // every task placed or planned
  std::unordered_map<int, size_t> index_;    // queued task id → index in queue_
  std::list<size_t> waiting_;                // queue_ indices not bound yet, in order
  bool gang_ = false;                        // some queued task needs k > 1 GPUs (gang.h)
  std::vector<CycleState> cycles_;           // per queued task (PreFilter once)
  // Incremental passes by the simulator's rule (wait_memo.h).
  void MarkChanged(int gpu);
  std::optional<Decision> Kept(size_t k, CycleState& cycle);
  void Remember(size_t k, const Result<Decision>& d, bool reused);
  WaitMemo memo_{policy_};
  QueuePlan plan_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

bool Planner::OverBudget() const {
  if (plan_.decisions >= options_.max_decisions) return true;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count() >
         options_.budget_ms;
}

void Planner::Rerate(int g, double t) {
  GpuState& gpu = state_.gpus[g];
  double total = gpu.background.EffectiveSmActive();
  for (RunningTask& rt : gpu.running) {
    rt.remaining_ms = rt.RemainingAt(t);
    rt.as_of_ms = t;
    total += rt.demand;
  }
  double next = kInf;
  for (RunningTask& rt : gpu.running) {
    const double slow = model_.Slowdown(rt.demand, total - rt.demand);
    rt.progress_rate = 1.0 / slow;
    next = std::min(next, t + rt.remaining_ms * slow);
  }
  ++version_[g];
  if (std::isfinite(next)) ends_.push({next, g, version_[g]});
  policy_.OnGpuChanged(state_, g);
}

void Planner::MarkChanged(int gpu) { memo_.MarkChanged(gpu); }

std::optional<Decision> Planner::Kept(size_t k, CycleState& cycle) {
  return memo_.Kept(static_cast<int64_t>(k), queue_[k], state_, cycle);
}

void Planner::Remember(size_t k, const Result<Decision>& d, bool reused) {
  memo_.Remember(static_cast<int64_t>(k), d, reused);
}

void Planner::Advance(int g, double t) {
  GpuState& gpu = state_.gpus[g];
  auto& running = gpu.running;
  for (auto it = running.begin(); it != running.end();) {
    if (it->RemainingAt(t) <= kDoneMs) {
      span_[it->task_id].end = t;
      it = running.erase(it);
    } else {
      ++it;
    }
  }
  while (const std::optional<QueuedTask> q = gpu.StartNextQueued(t)) span_[q->task_id].start = t;
  // A k-GPU task heading the queue starts when it heads all its GPUs' queues (gang.h).
  const int head = gpu.queued.empty() ? -1 : gpu.queued.front().task_id;
  for (int h : StartGangIfReady(state_, g, t)) {
    span_[head].start = t;
    if (h != g) {
      Rerate(h, t);
      MarkChanged(h);
    }
  }
  Rerate(g, t);
  MarkChanged(g);
}

Status Planner::Pass(double t, bool first) {
  state_.now_ms = t;
  policy_.BeginPass(state_);
  int scanned = 0;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (scanned >= policy_.options().max_queue_scan || policy_.PassSettled(state_, gang_)) break;
    ++scanned;
    const size_t k = *it;
    const Task& task = queue_[k];
    PlannedTask& p = plan_.tasks[k];
    CycleState& cycle = cycles_[k];
    std::optional<Decision> kept = first ? std::nullopt : Kept(k, cycle);
    const bool reused = kept.has_value();
    if (!reused) ++plan_.decisions;
    const Result<Decision> d = reused ? Result<Decision>(*kept) : policy_.Schedule(task, state_, cycle);
    Remember(k, d, reused);
    if (!d.ok()) {
      if (d.status().IsInternal()) return d.status();
      p.outcome = PlannedTask::Outcome::kRejected;
      if (first) {
        p.offered_now = true;
        p.first_kind = Decision::Kind::kReject;
      }
      p.first_reason = d.status().ToString();
      it = waiting_.erase(it);
      continue;
    }
    if (first) {
      p.offered_now = true;
      p.first_kind = d->kind;
      p.first_reason = d->reason;
      p.first_gpu = d->gpu;
      p.first_reserve = d->reserve;
    }
    switch (d->kind) {
      case Decision::Kind::kReject:
        policy_.Commit(task, *d, cycle, state_);
        p.outcome = PlannedTask::Outcome::kRejected;
        if (!first) p.first_reason = d->reason;
        it = waiting_.erase(it);
        break;
      case Decision::Kind::kWait:
        policy_.Commit(task, *d, cycle, state_);
        ++it;
        break;
      case Decision::Kind::kBind: {
        const int held = state_.ReservedGpuOf(task.id);
        policy_.Commit(task, *d, cycle, state_);
        p.outcome = PlannedTask::Outcome::kPlanned;
        p.gpu = d->gpu;
        p.bound_ms = t;
        Span& s = span_[task.id];
        s.gpu = d->gpu;
        for (const RunningTask& rt : state_.gpus[d->gpu].running) {
          if (rt.task_id == task.id) s.start = t;
        }
        Rerate(d->gpu, t);
        MarkChanged(d->gpu);
        for (int h : d->gpus) {  // a k-GPU task: all k GPUs changed
          if (h == d->gpu) continue;
          Rerate(h, t);
          MarkChanged(h);
        }
        if (held >= 0 && held != d->gpu) {
          policy_.OnGpuChanged(state_, held);
          MarkChanged(held);
        }
        it = waiting_.erase(it);
        break;
      }
    }
  }
  ++plan_.passes;
  return Status::OK();
}

void Planner::Extrapolate(double t) {
  plan_.complete = false;
  state_.ClearClaims();
  // What is placed ends as each GPU's timeline predicts; that is when each GPU is free.
  std::vector<double> free_at(state_.gpus.size(), t);
  for (size_t g = 0; g < state_.gpus.size(); ++g) {
    const GpuState& gpu = state_.gpus[g];
    if (gpu.running.empty() && gpu.queued.empty()) continue;
    const Timeline tl = PredictTimeline(gpu, model_, t);
    for (const Timeline::Entry& e : tl.entries) {
      Span& s = span_[e.task_id];
      if (!std::isfinite(s.start)) s.start = e.start_ms;
      s.end = e.end_ms;
    }
    free_at[g] = std::isfinite(tl.finish_ms) ? tl.finish_ms : kInf;
  }
  // The rest, in order, each on the GPU of its earliest completion (per type, the GPU free
  // first), alone on it.
  const Cluster& c = state_.cluster;
  using Slot = std::pair<double, int>;  // (free at, gpu)
  std::vector<std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>>> by_type(c.types.size());
  for (size_t g = 0; g < state_.gpus.size(); ++g) {
    if (state_.gpus[g].memory_mib > 0 && std::isfinite(free_at[g])) by_type[c.gpus[g].type].push({free_at[g], static_cast<int>(g)});
  }
  for (size_t k : waiting_) {
    const Task& task = queue_[k];
    CycleState& cycle = cycles_[k];
    if (cycle.profiled_task != task.id) {
      cycle.profile.clear();
      for (const GpuType& type : c.types) cycle.profile.push_back(policy_.oracle().Profile(task, type));
    }
    int best_type = -1;
    double best_end = kInf, best_start = kInf;
    for (size_t ty = 0; ty < c.types.size() && ty < cycle.profile.size(); ++ty) {
      if (by_type[ty].empty() || !cycle.profile[ty].ok()) continue;
      const TaskProfile& p = *cycle.profile[ty];
      const auto [free, g] = by_type[ty].top();
      if (MemoryNeedMib(task, p) > state_.gpus[g].memory_mib) continue;
      const double start = std::max(free, t);
      const double end =
          start + p.isolated_ms * model_.Slowdown(p.demand, state_.gpus[g].background.EffectiveSmActive());
      if (end < best_end) best_end = end, best_start = start, best_type = static_cast<int>(ty);
    }
    PlannedTask& pt = plan_.tasks[k];
    if (best_type < 0) continue;  // stays kStuck
    const int g = by_type[best_type].top().second;
    by_type[best_type].pop();
    by_type[best_type].push({best_end, g});
    pt.outcome = PlannedTask::Outcome::kExtrapolated;
    pt.gpu = g;
    span_[task.id] = {g, best_start, best_end};
  }
  waiting_.clear();
}

void Planner::Finish() {
  // Per GPU, every span on it: for behind_task and the critical path.
  std::unordered_map<int, std::vector<std::pair<int, Span>>> on_gpu;
  for (const auto& [id, s] : span_) {
    if (s.gpu >= 0) on_gpu[s.gpu].push_back({id, s});
  }
  for (auto& [g, v] : on_gpu) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return std::tie(a.second.end, a.first) < std::tie(b.second.end, b.first);
    });
  }
  auto ended_at = [&](int gpu, double t, int self) {
    auto it = on_gpu.find(gpu);
    if (it == on_gpu.end()) return -1;
    int found = -1;
    for (const auto& [id, s] : it->second) {
      if (id != self && std::abs(s.end - t) <= kSameInstantMs) found = id;
    }
    return found;
  };
  plan_.eta_ms = plan_.now_ms;
  int last = -1;
  for (const auto& [id, s] : span_) {
    if (s.gpu < 0 || !std::isfinite(s.end)) continue;
    if (last < 0 || s.end > plan_.eta_ms || (s.end == plan_.eta_ms && id < last)) {
      plan_.eta_ms = std::max(plan_.eta_ms, s.end);
      last = id;
    }
  }
  for (PlannedTask& p : plan_.tasks) {
    auto it = span_.find(p.task_id);
    if (it == span_.end() || p.gpu < 0) continue;
    p.start_ms = it->second.start;
    p.end_ms = it->second.end;
    if (std::isfinite(p.start_ms) && p.start_ms > plan_.now_ms + kSameInstantMs) {
      p.behind_task = ended_at(p.gpu, p.start_ms, p.task_id);
    }
  }
  if (last >= 0) {
    plan_.critical_gpu = span_[last].gpu;
    std::vector<int> chain{last};
    for (int cur = last;;) {
      const Span& s = span_[cur];
      if (s.start <= plan_.now_ms + kSameInstantMs) break;
      const int prev = ended_at(s.gpu, s.start, cur);
      if (prev < 0 || std::find(chain.begin(), chain.end(), prev) != chain.end()) break;
      chain.push_back(prev);
      cur = prev;
    }
    plan_.critical_path.assign(chain.rbegin(), chain.rend());
  }
}

Result<QueuePlan> Planner::Go() {
  plan_.now_ms = state_.now_ms;
  const double now = state_.now_ms;
  plan_.tasks.resize(queue_.size());
  cycles_.resize(queue_.size());
  for (size_t k = 0; k < queue_.size(); ++k) {
    if (!index_.emplace(queue_[k].id, k).second) {
      return Status::InvalidArgument("task id " + std::to_string(queue_[k].id) + " is twice in the queue");
    }
    plan_.tasks[k].task_id = queue_[k].id;
    waiting_.push_back(k);
    gang_ = gang_ || queue_[k].gpus > 1;
  }
  // What is on the GPUs now.
  for (size_t g = 0; g < state_.gpus.size(); ++g) {
    for (const RunningTask& rt : state_.gpus[g].running) span_[rt.task_id] = {static_cast<int>(g), rt.started_ms, kInf};
    for (const QueuedTask& q : state_.gpus[g].queued) span_[q.task_id] = {static_cast<int>(g), kInf, kInf};
  }
  std::vector<int> placed_ids;
  for (const auto& [id, s] : span_) placed_ids.push_back(id);
  for (size_t g = 0; g < state_.gpus.size(); ++g) Rerate(static_cast<int>(g), now);
  HASE_RETURN_IF_ERROR(Pass(now, /*first=*/true));
  bool stopped = false;
  while (true) {
    if (OverBudget()) {
      stopped = true;
      break;
    }
    if (ends_.empty()) {
      if (waiting_.empty()) break;
      // Nothing left running: one more chance, every task deciding afresh (as the simulator
      // gives); what still cannot start is stuck (memory held outside hase, failed GPUs).
      memo_.Clear();
      HASE_RETURN_IF_ERROR(Pass(state_.now_ms, /*first=*/false));
      if (ends_.empty()) break;
      continue;
    }
    const double t = ends_.top().t;
    bool happened = false;
    while (!ends_.empty() && ends_.top().t <= t + kSameInstantMs) {
      const End e = ends_.top();
      ends_.pop();
      if (e.version != version_[e.gpu]) continue;
      state_.now_ms = std::max(state_.now_ms, e.t);
      Advance(e.gpu, std::max(t, e.t));
      happened = true;
    }
    if (happened && !waiting_.empty()) HASE_RETURN_IF_ERROR(Pass(t, /*first=*/false));
  }
  if (stopped) Extrapolate(state_.now_ms);
  std::sort(placed_ids.begin(), placed_ids.end());
  for (int id : placed_ids) {
    const Span& s = span_[id];
    plan_.placed.push_back({id, s.gpu, s.start, s.end});
  }
  Finish();
  for (PlannedPlaced& p : plan_.placed) {
    const Span& s = span_[p.task_id];
    p.start_ms = s.start;
    p.end_ms = s.end;
  }
  plan_.compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  return std::move(plan_);
}

}  // namespace

Result<QueuePlan> PlanQueue(const ClusterState& live, Policy& policy, const std::vector<Task>& queue,
                            const QueuePlanOptions& options) {
  Planner p(live, policy, queue, options);
  return p.Go();
}

}  // namespace hase::sched
