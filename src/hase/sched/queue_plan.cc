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
#include "hase/sched/team_queue.h"
#include "hase/sched/team_reclaim.h"
#include "hase/sched/timeline.h"
#include "hase/sched/wait_memo.h"

namespace hase::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDoneMs = 1e-6;      // remaining isolated work below this has ended, ms
constexpr double kSameInstantMs = 1e-6;

// Remaining isolated work at or below this has ended at time `t`: kDoneMs, or what the rounding
// of the time base leaves (ulp(t) ~ 2.2e-16 t; 1e-12 t keeps a margin). Without the second
// term a task ending at t ~ 1e15 ms (1e12 batches) keeps a remainder of a fraction of an ulp,
// files its end again at the same t and the plan never leaves that instant.
double DoneBelowMs(double t) { return std::max(kDoneMs, std::abs(t) * 1e-12); }

class Planner {
 public:
  Planner(const ClusterState& live, Policy& policy, const std::vector<Task>& queue, const QueuePlanOptions& options,
          const QueuePlanTeams& teams)
      : state_(live), policy_(policy), queue_(queue), options_(options), teams_(teams),
        model_(policy.oracle().contention()), version_(live.gpus.size(), 0) {
    memo_.Reset(live.gpus.size());
    if (teams.config && teams.config->enabled()) {
      ledger_.emplace(*teams.config);
      fair_.emplace(teams.ended ? *teams.ended : FairShare(*teams.config));
    }
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
  // Offers queue_[*it] to the policy and applies the decision; `*left` = it left the queue.
  Status Offer(std::list<size_t>::iterator it, double t, bool first, bool* left);
  // Teams (QueuePlanTeams): a pass in TeamQueue order; at now, also records quota holds.
  Status TeamPass(double t, bool first);
  int TeamOf(int task_id) const {
    auto it = team_of_.find(task_id);
    return it == team_of_.end() ? -2 : it->second;
  }
  void TeamStarted(int task_id, double t_ms);  // its fair-share segment opens
  void TeamEnded(int task_id, double t_ms);    // charged; its team's GPU released
  void Extrapolate(double t);
  void Finish();
  bool OverBudget() const;

  ClusterState state_;
  Policy& policy_;
  const std::vector<Task>& queue_;
  const QueuePlanOptions options_;
  const QueuePlanTeams& teams_;
  const ContentionModel& model_;
  // Teams (empty optionals without): GPUs held, usage, and per task its team, its open run
  // segment and, bound but not started, its speed for when it starts.
  std::optional<QuotaLedger> ledger_;
  std::optional<FairShare> fair_;
  std::unordered_map<int, int> team_of_;
  std::unordered_map<int, FairShare::Open> open_;
  std::unordered_map<int, double> speed_;
  // Teams: the waiting queue_ indices of each team (slot team + 1; 0 = teams not listed), in
  // order, and each waiting index's place in waiting_ and in its team's list. A pass offers at
  // most max_queue_scan tasks, so it needs only that many of each team: O(teams x scan) per
  // pass, not O(queue).
  std::vector<std::list<size_t>> team_waiting_;
  std::vector<std::list<size_t>::iterator> waiting_pos_, team_pos_;
  // Removes queue_[*it] from the waiting tasks (and its team's list).
  void Leave(std::list<size_t>::iterator it) {
    if (ledger_) team_waiting_[TeamSlot(queue_[*it].id)].erase(team_pos_[*it]);
    waiting_.erase(it);
  }
  size_t TeamSlot(int task_id) const { return static_cast<size_t>(std::max(-1, TeamOf(task_id)) + 1); }
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
    if (it->RemainingAt(t) <= DoneBelowMs(t)) {
      span_[it->task_id].end = t;
      if (ledger_) TeamEnded(it->task_id, t);
      it = running.erase(it);
    } else {
      ++it;
    }
  }
  while (const std::optional<QueuedTask> q = gpu.StartNextQueued(t)) {
    span_[q->task_id].start = t;
    if (ledger_) TeamStarted(q->task_id, t);
  }
  // A k-GPU task heading the queue starts when it heads all its GPUs' queues (gang.h).
  const int head = gpu.queued.empty() ? -1 : gpu.queued.front().task_id;
  const std::vector<int> gang = StartGangIfReady(state_, g, t);
  if (!gang.empty() && ledger_) TeamStarted(head, t);
  for (int h : gang) {
    span_[head].start = t;
    if (h != g) {
      Rerate(h, t);
      MarkChanged(h);
    }
  }
  Rerate(g, t);
  MarkChanged(g);
}

void Planner::TeamStarted(int task_id, double t_ms) {
  auto sp = speed_.find(task_id);
  const double speed = sp == speed_.end() ? 1.0 : sp->second;
  open_[task_id] = FairShare::Open{TeamOf(task_id), t_ms / 1000.0, speed};
}

void Planner::TeamEnded(int task_id, double t_ms) {
  auto it = open_.find(task_id);
  if (it != open_.end()) {
    fair_->Charge(it->second.team, it->second.start_s, t_ms / 1000.0, it->second.speed);
    open_.erase(it);
  }
  ledger_->Release(TeamOf(task_id));
}

Status Planner::Pass(double t, bool first) {
  state_.now_ms = t;
  policy_.BeginPass(state_);
  if (ledger_) return TeamPass(t, first);
  int scanned = 0;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (scanned >= policy_.options().max_queue_scan || policy_.PassSettled(state_, gang_)) break;
    ++scanned;
    bool left = false;
    auto next = std::next(it);
    HASE_RETURN_IF_ERROR(Offer(it, t, first, &left));
    it = left ? next : std::next(it);
  }
  ++plan_.passes;
  return Status::OK();
}

Status Planner::TeamPass(double t, bool first) {
  // The first max_queue_scan waiting tasks of each team, in queue order: all a pass can offer.
  const size_t scan = static_cast<size_t>(std::max(0, policy_.options().max_queue_scan));
  std::vector<size_t> ks;
  for (const std::list<size_t>& team : team_waiting_) {
    size_t n = 0;
    for (auto it = team.begin(); it != team.end() && n < scan; ++it, ++n) ks.push_back(*it);
  }
  std::sort(ks.begin(), ks.end());
  std::vector<std::list<size_t>::iterator> order;
  std::vector<TeamQueue::Item> items;
  std::vector<int> ids;
  order.reserve(ks.size());
  items.reserve(ks.size());
  ids.reserve(ks.size());
  for (size_t k : ks) {
    const Task& task = queue_[k];
    order.push_back(waiting_pos_[k]);
    items.push_back({TeamOf(task.id), task.priority});
    ids.push_back(task.id);
  }
  // Reservation holders beyond those prefixes still have their reservation judged.
  std::vector<TeamQueue::Item> yield_items = items;
  std::vector<int> yield_ids = ids;
  for (const auto& [holder, gpu] : state_.reservation_of_task) {
    auto at = index_.find(holder);
    if (at == index_.end() || plan_.tasks[at->second].outcome != PlannedTask::Outcome::kStuck ||
        std::binary_search(ks.begin(), ks.end(), at->second)) {
      continue;  // not waiting, or already among the items
    }
    yield_items.push_back({TeamOf(holder), queue_[at->second].priority});
    yield_ids.push_back(holder);
  }
  std::vector<FairShare::Open> open;
  open.reserve(open_.size());
  for (const auto& [id, o] : open_) open.push_back(o);
  std::vector<double> factors;
  for (const TeamUsage& u : fair_->Snapshot(t / 1000.0, open)) factors.push_back(u.factor);
  for (const auto& [id, gpu] : YieldReservationsToTeamOrder(state_, policy_, *ledger_, factors, yield_items, yield_ids)) {
    MarkChanged(gpu);
  }
  TeamQueue tq(*ledger_, std::move(factors), items);
  int scanned = 0;
  for (int i; scanned < policy_.options().max_queue_scan && (i = tq.Next()) >= 0; ++scanned) {
    if (policy_.PassSettled(state_, gang_)) break;
    bool left = false;
    const int task_id = queue_[*order[i]].id;
    HASE_RETURN_IF_ERROR(Offer(order[i], t, first, &left));
    if (!left || plan_.tasks[index_.at(task_id)].outcome != PlannedTask::Outcome::kPlanned) continue;
    // Bound: the heads of other teams queued before it wait for their team's turn.
    const int team = items[i].team;
    for (int q = -1; q < static_cast<int>(teams_.config->teams.size()); ++q) {
      if (q == team) continue;
      const int h = tq.Head(q);
      if (h < 0 || h > i) continue;
      PlannedTask& p = plan_.tasks[*order[h]];
      if (p.overtaken_by < 0) p.overtaken_by = task_id;
    }
  }
  if (first) {
    for (size_t k : waiting_) plan_.tasks[k].first_hold = ledger_->Check(TeamOf(queue_[k].id));
  }
  ++plan_.passes;
  return Status::OK();
}

Status Planner::Offer(std::list<size_t>::iterator it, double t, bool first, bool* left) {
  {
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
      Leave(it);
      *left = true;
      return Status::OK();
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
        Leave(it);
        *left = true;
        break;
      case Decision::Kind::kWait:
        policy_.Commit(task, *d, cycle, state_);
        break;
      case Decision::Kind::kBind: {
        const int held = state_.ReservedGpuOf(task.id);
        policy_.Commit(task, *d, cycle, state_);
        p.outcome = PlannedTask::Outcome::kPlanned;
        p.gpu = d->gpu;
        p.bound_ms = t;
        Span& s = span_[task.id];
        s.gpu = d->gpu;
        if (ledger_) {
          ledger_->Hold(TeamOf(task.id));
          const size_t types = state_.cluster.types.size();
          const int type = state_.cluster.gpus[d->gpu].type;
          speed_[task.id] = teams_.queued_speed.size() == queue_.size() * types ? teams_.queued_speed[k * types + type]
                            : teams_.speed                                    ? teams_.speed(task, type)
                                                                              : 1.0;
        }
        for (const RunningTask& rt : state_.gpus[d->gpu].running) {
          if (rt.task_id != task.id) continue;
          s.start = t;
          if (ledger_) TeamStarted(task.id, t);
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
        Leave(it);
        *left = true;
        break;
      }
    }
  }
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
  waiting_pos_.reserve(queue_.size());
  if (ledger_) {
    team_waiting_.resize(teams_.config->teams.size() + 1);
    team_pos_.reserve(queue_.size());
  }
  for (size_t k = 0; k < queue_.size(); ++k) {
    if (!index_.emplace(queue_[k].id, k).second) {
      return Status::InvalidArgument("task id " + std::to_string(queue_[k].id) + " is twice in the queue");
    }
    plan_.tasks[k].task_id = queue_[k].id;
    waiting_.push_back(k);
    waiting_pos_.push_back(std::prev(waiting_.end()));
    if (ledger_) {
      team_of_[queue_[k].id] = teams_.config->TeamOf(queue_[k]);
      std::list<size_t>& team = team_waiting_[TeamSlot(queue_[k].id)];
      team.push_back(k);
      team_pos_.push_back(std::prev(team.end()));
    }
    gang_ = gang_ || queue_[k].gpus > 1;
  }
  // What is on the GPUs now.
  for (size_t g = 0; g < state_.gpus.size(); ++g) {
    for (const RunningTask& rt : state_.gpus[g].running) span_[rt.task_id] = {static_cast<int>(g), rt.started_ms, kInf};
    for (const QueuedTask& q : state_.gpus[g].queued) span_[q.task_id] = {static_cast<int>(g), kInf, kInf};
  }
  std::vector<int> placed_ids;
  for (const auto& [id, s] : span_) placed_ids.push_back(id);
  if (ledger_) {
    std::vector<FairShare::Open> open;
    for (int id : placed_ids) {
      auto it = teams_.placed.find(id);
      const QueuePlanTeams::Placed p = it == teams_.placed.end() ? QueuePlanTeams::Placed{} : it->second;
      team_of_[id] = p.team;
      ledger_->Hold(p.team);
      speed_[id] = p.speed;
      if (!std::isnan(p.started_s)) {
        open_[id] = FairShare::Open{p.team, p.started_s, p.speed};
        open.push_back(open_[id]);
      }
    }
    plan_.team_usage = fair_->Snapshot(now / 1000.0, open);
    for (size_t i = 0; i < teams_.config->teams.size(); ++i) plan_.team_gpus.push_back(ledger_->used(static_cast<int>(i)));
  }
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
    while (!ends_.empty() && ends_.top().t <= t + kSameInstantMs && !OverBudget()) {
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
                            const QueuePlanOptions& options, const QueuePlanTeams& teams) {
  Planner p(live, policy, queue, options, teams);
  return p.Go();
}

}  // namespace hase::sched
