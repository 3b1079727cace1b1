#include "hase/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "hase/base/check.h"
#include "hase/sched/gang.h"
#include "hase/sched/team_reclaim.h"
#include "hase/sched/wait_memo.h"
#include "hase/sim/team_run.h"

namespace hase::sim {
namespace {

using sched::ClusterState;
using sched::CycleState;
using sched::Decision;
using sched::GpuState;
using sched::Task;

constexpr double kSameInstantMs = 1e-9;

struct Event {
  double time_ms;
  uint64_t seq;
  enum Kind { kArrival = 0, kCompletion = 1, kPreempt = 2 } kind;
  int task;
  uint64_t version;  // completion: valid only if equal to the task's current version
  bool operator>(const Event& o) const {
    return time_ms != o.time_ms ? time_ms > o.time_ms : seq > o.seq;
  }
};

struct Run {  // truth state of one running task
  int gpu = -1;
  double iso_true = 0;
  double demand_true = 1;
  double pred_iso = 0;       // the policy's isolated prediction on this GPU
  double remaining_true = 0; // true isolated ms left at last_ms
  double slowdown = 1;
  double last_ms = 0;
  double started_ms = 0;     // its last start (a resumed task: the resume)
  uint64_t version = 0;
  std::vector<int> gang;     // a k-GPU task: its other GPUs (truth runs on `gpu`, the first)
};

class Sim {
 public:
  Sim(const sched::Cluster& cluster, const std::vector<Task>& tasks, sched::Policy& policy,
      const TruthModel& truth, const SimOptions& options)
      : cluster_(cluster), tasks_(tasks), policy_(policy), truth_(truth), options_(options),
        state_(cluster, policy.options().max_tasks_per_gpu), runs_(tasks.size()), on_gpu_(cluster.gpus.size()),
        busy_since_(cluster.gpus.size(), -1) {}

  Result<SimResult> Go();

 private:
  // Priority first, then the policy's key (Policy::QueueKey, larger first), arrival, id.
  struct QueueOrder {
    const std::vector<Task>* tasks;
    const std::vector<double>* key;
    bool operator()(int a, int b) const {
      const Task& x = (*tasks)[a];
      const Task& y = (*tasks)[b];
      if (x.priority != y.priority) return x.priority > y.priority;
      if ((*key)[a] != (*key)[b]) return (*key)[a] > (*key)[b];
      if (x.arrival_ms != y.arrival_ms) return x.arrival_ms < y.arrival_ms;
      return a < b;
    }
  };

  void Push(double t, Event::Kind k, int task, uint64_t version = 0) {
    events_.push({t, seq_++, k, task, version});
  }
  Status Arrive(int task);
  // Takes `task` off `gpu` now: its pending completion event is void, the GPU's busy time
  // closes when it empties, the team run hears of it (completion and preemption).
  void Detach(int task, int gpu);
  void Complete(int task);
  Status Pass();       // offers the central queue to the policy, in queue order
  Status BatchPass();  // min-min / max-min (Policy::Options::PassOrder)
  Status TeamPass();   // teams: the order of sched::TeamQueue, teams at their maximum held
  // Teams with preemption: stops running tasks at their next batch boundary for waiting tasks
  // entitled to them (sched/preemption.h), when no GPU has a free slot.
  void MaybePreempt();
  void Preempt(int task);  // the boundary came: stop `task`, re-queue its remaining batches
  // Applies one decision of a pass. Returns whether the task left the queue (bound or
  // rejected); errors are the policy's Internal errors.
  Result<bool> Apply(int task, const Result<Decision>& d, CycleState& cycle);
  // Incremental passes (Policy::Options::incremental_passes): every change to a GPU's state
  // that a waiting task's decision may depend on is logged; a task's last wait is kept when
  // the GPU it waits for did not change since and the policy says it still stands given the
  // GPUs that did.
  void MarkChanged(int gpu);
  // The plan behind a bind (TaskOutcome's predicted start/end and runner-up).
  void RecordPlan(int task, const Decision& d);
  // The decision kept from `task`'s last pass, or nullopt when it must decide again.
  std::optional<Decision> Kept(int task, CycleState& cycle);
  void Remember(int task, const Result<Decision>& d, bool reused);
  // Runs the policy's cycle for `task`, timing it.
  Result<Decision> Decide(const Task& task, CycleState& cycle);
  // After Commit(kBind): starts truth for whatever became running on `gpu`.
  void AfterBind(int task, int gpu, double predicted_end);
  void StartTruth(int task, int gpu);
  void Reprice(int gpu);  // advances and re-rates the GPU's running tasks, reschedules ends
  void StartQueued(int gpu);
  void Reject(int task, const std::string& why);
  void Progress();
  // A k-GPU task (gang.h) started on all its GPUs: truth on the first, the others held.
  void StartGangTruth(int task, const std::vector<int>& gpus);
  // Central queue: k-GPU tasks waiting in it (Policy::PassSettled's gang_waiting).
  bool GangWaiting() const { return gangs_queued_ > 0; }
  void Enqueue(int task) {
    if (queue_.insert(task).second && tasks_[task].gpus > 1) ++gangs_queued_;
  }
  using QueueIt = std::set<int, QueueOrder>::iterator;
  QueueIt Dequeue(QueueIt it) {
    if (tasks_[*it].gpus > 1) --gangs_queued_;
    return queue_.erase(it);
  }
  void Dequeue(int task) {
    auto it = queue_.find(task);
    if (it != queue_.end()) Dequeue(it);
  }

  const sched::Cluster& cluster_;
  std::vector<Task> tasks_;  // a copy: a preempted task resumes with fewer num_batches
  sched::Policy& policy_;
  const TruthModel& truth_;
  const SimOptions options_;
  ClusterState state_;
  std::vector<Run> runs_;
  std::vector<std::vector<int>> on_gpu_;  // running task ids per GPU (truth)
  std::vector<double> busy_since_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  std::vector<double> key_;  // Policy::QueueKey per task
  std::unordered_map<int, CycleState> cycles_;  // per waiting task (Pass)
  sched::WaitMemo memo_{policy_};                // incremental passes (wait_memo.h)
  std::set<int, QueueOrder> queue_{QueueOrder{&tasks_, &key_}};
  int gangs_queued_ = 0;  // tasks with gpus > 1 in queue_
  std::unordered_map<int, std::vector<int64_t>> split_parts_;  // split tasks bound, not started: batches per GPU
  SimResult result_;
  size_t finished_ = 0;
  int last_percent_ = -1;
  std::vector<int> reservation_index_;  // task → index into result_.reservations or -1
  std::unique_ptr<TeamRun> teams_;      // null without teams
  struct Pending {                      // a preemption decided, waiting for its batch boundary
    int claimant = -1;
    std::string why;
  };
  std::unordered_map<int, Pending> preempting_;  // victim → claimant
  // Waiting tasks that have had a preemption: each causes at most one, so a claimant the
  // policy then places elsewhere (or keeps waiting for a faster GPU) cannot empty GPU after GPU.
  std::set<int> claimed_;
};

Result<Decision> Sim::Decide(const Task& task, CycleState& cycle) {
  if (!options_.measure_decisions) return policy_.Schedule(task, state_, cycle);
  const auto t0 = std::chrono::steady_clock::now();
  Result<Decision> d = policy_.Schedule(task, state_, cycle);
  const auto t1 = std::chrono::steady_clock::now();
  result_.decisions.Add(std::chrono::duration<double, std::micro>(t1 - t0).count());
  return d;
}

void Sim::Reject(int task, const std::string& why) {
  TaskOutcome& o = result_.tasks[task];
  o.rejected = true;
  o.reason = why;
  ++finished_;
  Progress();
}

void Sim::Progress() {
  if (!options_.show_progress || tasks_.empty()) return;
  const int pct = static_cast<int>(100 * finished_ / tasks_.size());
  if (pct == last_percent_) return;
  last_percent_ = pct;
  const int width = 40;
  const int filled = pct * width / 100;
  std::fprintf(stderr, "\r%-12s [%s%s] %3d%% (%zu/%zu tasks)", policy_.name().c_str(),
               std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), pct,
               finished_, tasks_.size());
  if (pct == 100) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

void Sim::Reprice(int gpu) {
  const double now = state_.now_ms;
  const sched::GpuType& type = cluster_.types[cluster_.gpus[gpu].type];
  const double bg = state_.gpus[gpu].background.EffectiveSmActive();
  std::vector<int>& ids = on_gpu_[gpu];
  for (int id : ids) {
    Run& r = runs_[id];
    r.remaining_true = std::max(0.0, r.remaining_true - (now - r.last_ms) / r.slowdown);
    r.last_ms = now;
  }
  TruthModel::CoRunners others;  // reused: one allocation per re-price, not per task
  others.reserve(ids.size());
  for (int id : ids) {
    Run& r = runs_[id];
    others.clear();
    for (int other : ids) {
      if (other != id) others.emplace_back(&tasks_[other], runs_[other].demand_true);
    }
    r.slowdown = truth_.Slowdown(tasks_[id], r.demand_true, others, bg, type);
    ++r.version;
    Push(now + r.remaining_true * r.slowdown, Event::kCompletion, id, r.version);
  }
  // What the policy observes: the fraction done, and the rate it progresses at.
  for (sched::RunningTask& rt : state_.gpus[gpu].running) {
    const Run& r = runs_[rt.task_id];
    const double left = r.iso_true > 0 ? r.remaining_true / r.iso_true : 0;
    rt.remaining_ms = r.pred_iso * left;
    rt.as_of_ms = now;
    rt.progress_rate = r.iso_true > 0 ? (r.pred_iso / r.iso_true) / r.slowdown : 0;
    // A k-GPU or split task: its other GPUs are held as long (gang.h); they see the same.
    for (int h : r.gang) {
      for (sched::RunningTask& x : state_.gpus[h].running) {
        if (x.task_id != rt.task_id) continue;
        x.remaining_ms = rt.remaining_ms;
        x.as_of_ms = rt.as_of_ms;
        x.progress_rate = rt.progress_rate;
      }
      policy_.OnGpuChanged(state_, h);
    }
  }
}

void Sim::StartTruth(int task, int gpu) {
  const sched::GpuType& type = cluster_.types[cluster_.gpus[gpu].type];
  Result<TrueProfile> p = truth_.Profile(tasks_[task], type);
  Run& r = runs_[task];
  r.gpu = gpu;
  // A truth model without an entry falls back to the policy's own prediction (reported as
  // "no truth" would hide the task); the table truth documents this.
  r.iso_true = p.ok() ? sched::GangIsolatedMs(tasks_[task], p->isolated_ms) : 0;
  r.demand_true = p.ok() ? p->demand : 1.0;
  for (const sched::RunningTask& rt : state_.gpus[gpu].running) {
    if (rt.task_id == task) {
      r.pred_iso = rt.remaining_ms;
      if (!p.ok()) {
        r.iso_true = rt.remaining_ms;
        r.demand_true = rt.demand;
      }
    }
  }
  r.remaining_true = r.iso_true;
  r.slowdown = 1;
  r.last_ms = state_.now_ms;
  r.started_ms = state_.now_ms;
  on_gpu_[gpu].push_back(task);
  if (busy_since_[gpu] < 0) busy_since_[gpu] = state_.now_ms;
  TaskOutcome& o = result_.tasks[task];
  o.gpu = gpu;
  if (o.start_ms < 0) o.start_ms = state_.now_ms;  // a resumed task keeps its first start
  if (teams_) teams_->Started(task, tasks_[task], cluster_.gpus[gpu].type, state_.now_ms);
  o.co_located.clear();
  for (int other : on_gpu_[gpu]) {
    if (other != task) o.co_located.push_back(other);
  }
  if (reservation_index_[task] >= 0) {
    ReservationRecord& rr = result_.reservations[reservation_index_[task]];
    rr.actual_start_ms = state_.now_ms;
    rr.actual_gpu = gpu;
  }
}

void Sim::StartGangTruth(int task, const std::vector<int>& gpus) {
  StartTruth(task, gpus.front());
  Run& r = runs_[task];
  if (auto sp = split_parts_.find(task); sp != split_parts_.end()) {
    // A split task: its parts run alone, each at the truth's speed of its GPU's type; it ends
    // with its slowest part (truth), holding every GPU until then.
    const double nb = static_cast<double>(std::max<int64_t>(1, tasks_[task].num_batches));
    double iso = 0;
    for (size_t i = 0; i < gpus.size() && i < sp->second.size(); ++i) {
      const sched::GpuType& type = cluster_.types[cluster_.gpus[gpus[i]].type];
      Result<TrueProfile> p = truth_.Profile(tasks_[task], type);
      const double per = p.ok() ? p->isolated_ms / nb : r.pred_iso / nb;
      iso = std::max(iso, per * static_cast<double>(sp->second[i]));
    }
    r.iso_true = iso;
    r.remaining_true = iso;
    result_.tasks[task].parts = sp->second;
    split_parts_.erase(sp);
  }
  r.gang.assign(gpus.begin() + 1, gpus.end());
  for (int h : r.gang) {
    if (busy_since_[h] < 0) busy_since_[h] = state_.now_ms;
  }
  result_.tasks[task].gpus = gpus;
  Reprice(gpus.front());
  for (int h : gpus) {
    policy_.OnGpuChanged(state_, h);
    MarkChanged(h);
  }
}

void Sim::AfterBind(int task, int gpu, double) {
  const GpuState& g = state_.gpus[gpu];
  if (tasks_[task].gpus > 1 || split_parts_.count(task)) {  // on all its GPUs, or queued on them
    for (const sched::RunningTask& rt : g.running) {
      if (rt.task_id != task) continue;
      std::vector<int> gpus{gpu};
      for (size_t h = 0; h < state_.gpus.size(); ++h) {
        if (static_cast<int>(h) == gpu) continue;
        for (const sched::RunningTask& x : state_.gpus[h].running) {
          if (x.task_id == task) gpus.push_back(static_cast<int>(h));
        }
      }
      std::sort(gpus.begin(), gpus.end());
      StartGangTruth(task, gpus);
      return;
    }
    return;
  }
  for (const sched::RunningTask& rt : g.running) {
    if (rt.task_id == task) {
      StartTruth(task, gpu);
      Reprice(gpu);
      policy_.OnGpuChanged(state_, gpu);
      return;
    }
  }
  // Queued behind others on the GPU: starts in StartQueued.
}

void Sim::StartQueued(int gpu) {
  GpuState& g = state_.gpus[gpu];
  bool started = false;
  while (const std::optional<sched::QueuedTask> q = g.StartNextQueued(state_.now_ms)) {
    StartTruth(q->task_id, gpu);
    started = true;
  }
  if (started) Reprice(gpu);
  // A k-GPU task heading the queue starts when it heads all its GPUs' queues and they are free.
  const int head = g.queued.empty() ? -1 : g.queued.front().task_id;
  const std::vector<int> gang = sched::StartGangIfReady(state_, gpu, state_.now_ms);
  if (!gang.empty()) StartGangTruth(head, gang);
}

Status Sim::Arrive(int task) {
  const Task& t = tasks_[task];
  key_[task] = policy_.QueueKey(t, cluster_);
  if (!policy_.options().dispatch_on_arrival || (teams_ && teams_->Held(task))) {
    Enqueue(task);
    return Status::OK();
  }
  CycleState cycle;
  Result<Decision> d = Decide(t, cycle);
  if (!d.ok()) {
    if (d.status().IsInternal()) return d.status();
    Reject(task, d.status().ToString());
    return Status::OK();
  }
  switch (d->kind) {
    case Decision::Kind::kReject:
      Reject(task, d->reason);
      break;
    case Decision::Kind::kWait:
      Enqueue(task);
      break;
    case Decision::Kind::kBind: {
      RecordPlan(task, *d);
      policy_.Commit(t, *d, cycle, state_);
      if (teams_) teams_->Bound(task);
      if (!d->parts.empty()) split_parts_[task] = d->parts;
      AfterBind(task, d->gpu, d->end_ms);
      MarkChanged(d->gpu);
      for (int h : d->gpus) MarkChanged(h);
      break;
    }
  }
  return Status::OK();
}

void Sim::RecordPlan(int task, const Decision& d) {
  TaskOutcome& o = result_.tasks[task];
  o.decided_ms = state_.now_ms;
  if (d.end_ms > 0) {  // the policy priced it; the default Select (highest score) does not
    o.predicted_start_ms = d.start_ms;
    o.predicted_end_ms = d.end_ms;
  }
  o.runner_up_gpu = d.runner_up_gpu;
  o.runner_up_end_ms = d.runner_up_end_ms;
  o.runner_up_inflicted_ms = d.runner_up_inflicted_ms;
}

void Sim::MarkChanged(int gpu) { memo_.MarkChanged(gpu); }

std::optional<Decision> Sim::Kept(int task, CycleState& cycle) {
  return memo_.Kept(task, tasks_[task], state_, cycle);
}

void Sim::Remember(int task, const Result<Decision>& d, bool reused) { memo_.Remember(task, d, reused); }

void Sim::Detach(int task, int gpu) {
  ++runs_[task].version;
  std::vector<int>& ids = on_gpu_[gpu];
  ids.erase(std::find(ids.begin(), ids.end(), task));
  auto& running = state_.gpus[gpu].running;
  running.erase(std::find_if(running.begin(), running.end(),
                             [&](const sched::RunningTask& x) { return x.task_id == task; }));
  if (ids.empty() && busy_since_[gpu] >= 0) {
    result_.gpu_busy_ms[gpu] += state_.now_ms - busy_since_[gpu];
    busy_since_[gpu] = -1;
  }
  if (teams_) teams_->Stopped(task, state_.now_ms);
}

void Sim::Complete(int task) {
  Run& r = runs_[task];
  const int gpu = r.gpu;
  TaskOutcome& o = result_.tasks[task];
  o.end_ms = state_.now_ms;
  Detach(task, gpu);
  Reprice(gpu);
  const std::vector<int> helpers = std::move(r.gang);
  r.gang.clear();
  for (int h : helpers) {  // a k-GPU task gives back its other GPUs too
    auto& hr = state_.gpus[h].running;
    hr.erase(std::find_if(hr.begin(), hr.end(), [&](const sched::RunningTask& x) { return x.task_id == task; }));
    if (on_gpu_[h].empty() && busy_since_[h] >= 0) {
      result_.gpu_busy_ms[h] += state_.now_ms - busy_since_[h];
      busy_since_[h] = -1;
    }
  }
  StartQueued(gpu);
  policy_.OnGpuChanged(state_, gpu);
  MarkChanged(gpu);
  for (int h : helpers) {
    StartQueued(h);
    policy_.OnGpuChanged(state_, h);
    MarkChanged(h);
  }
  ++finished_;
  Progress();
}

Result<bool> Sim::Apply(int task, const Result<Decision>& d, CycleState& cycle) {
  const Task& t = tasks_[task];
  if (!d.ok()) {
    if (d.status().IsInternal()) return d.status();
    Reject(task, d.status().ToString());
    return true;
  }
  TaskOutcome& o = result_.tasks[task];
  switch (d->kind) {
    case Decision::Kind::kReject:
      policy_.Commit(t, *d, cycle, state_);
      Reject(task, d->reason);
      return true;
    case Decision::Kind::kWait: {
      const bool had = state_.ReservedGpuOf(task) >= 0;
      policy_.Commit(t, *d, cycle, state_);
      const int now_held = state_.ReservedGpuOf(task);
      if (t.gpus > 1) {  // a k-GPU task's reservation covers all its GPUs
        for (int h : d->gpus) MarkChanged(h);
      }
      if (!had && now_held >= 0) {
        reservation_index_[task] = static_cast<int>(result_.reservations.size());
        result_.reservations.push_back({task, now_held, state_.now_ms,
                                        state_.gpus[now_held].reservation->start_ms, -1, -1});
        o.reserved_gpu = now_held;
      }
      if (d->gpu >= 0) {
        if (o.waited_for_gpu != d->gpu) ++o.wait_targets;
        o.waited_for_gpu = d->gpu;
      }
      return false;
    }
    case Decision::Kind::kBind: {
      const GpuState& g = state_.gpus[d->gpu];
      const bool backfill = g.reservation && g.reservation->task_id != task;
      RecordPlan(task, *d);
      const int held = state_.ReservedGpuOf(task);
      policy_.Commit(t, *d, cycle, state_);
      o.backfilled = backfill;
      if (backfill) ++result_.backfills;
      if (teams_) teams_->Bound(task);
      if (!d->parts.empty()) split_parts_[task] = d->parts;
      AfterBind(task, d->gpu, d->end_ms);
      MarkChanged(d->gpu);
      for (int h : d->gpus) MarkChanged(h);
      if (held >= 0 && held != d->gpu) MarkChanged(held);  // its reservation is released
      return true;
    }
  }
  return false;
}

Status Sim::Pass() {
  if (teams_) return TeamPass();
  if (policy_.options().pass_order != sched::Policy::Options::PassOrder::kOrdered) {
    return BatchPass();
  }
  policy_.BeginPass(state_);
  int scanned = 0;
  for (auto it = queue_.begin(); it != queue_.end() && scanned < policy_.options().max_queue_scan;
       ++scanned) {
    // Nothing can start anywhere and no reservation can be made: every remaining decision of
    // this pass would be a wait that changes nothing (Policy::PassSettled).
    if (policy_.PassSettled(state_, GangWaiting())) break;
    const int task = *it;
    CycleState& cycle = cycles_[task];  // kept while the task waits: PreFilter runs once
    std::optional<Decision> kept = Kept(task, cycle);
    const bool reused = kept.has_value();
    const Result<Decision> d = reused ? Result<Decision>(*kept) : Decide(tasks_[task], cycle);
    HASE_ASSIGN_OR_RETURN(const bool left, Apply(task, d, cycle));
    Remember(task, d, reused);
    if (left) cycles_.erase(task);
    it = left ? Dequeue(it) : std::next(it);
  }
  return Status::OK();
}

Status Sim::BatchPass() {
  const bool max_min =
      policy_.options().pass_order == sched::Policy::Options::PassOrder::kMaxMin;
  policy_.BeginPass(state_);
  std::vector<int> batch;
  for (int task : queue_) {
    if (static_cast<int>(batch.size()) >= policy_.options().max_queue_scan) break;
    batch.push_back(task);
  }
  const size_t n = batch.size();
  std::vector<Result<Decision>> decision(n, Status::Internal("not decided"));
  std::vector<CycleState> cycle(n);
  std::vector<char> fresh(n, 0), done(n, 0);
  for (size_t left = n; left > 0; --left) {
    if (policy_.PassSettled(state_, GangWaiting())) break;
    for (size_t i = 0; i < n; ++i) {
      if (!done[i] && !fresh[i]) {
        decision[i] = Decide(tasks_[batch[i]], cycle[i]);
        fresh[i] = 1;
      }
    }
    // Errors and rejects first (queue order), then min-min / max-min by predicted end; ties
    // by queue order.
    size_t pick = n;
    for (size_t i = 0; i < n && pick == n; ++i) {
      if (!done[i] && (!decision[i].ok() || decision[i]->kind == Decision::Kind::kReject)) pick = i;
    }
    if (pick == n) {
      for (size_t i = 0; i < n; ++i) {
        if (done[i] || decision[i]->gpu < 0) continue;
        if (pick == n) {
          pick = i;
          continue;
        }
        const double e = decision[i]->end_ms, b = decision[pick]->end_ms;
        if (max_min ? e > b : e < b) pick = i;
      }
    }
    if (pick == n) break;  // only waits without a GPU ("no GPU can take it now")
    const int changed = decision[pick].ok() ? decision[pick]->gpu : -1;
    // A k-GPU task's commit touches all its GPUs: every choice is decided again.
    const bool gang = decision[pick].ok() && !decision[pick]->gpus.empty();
    HASE_ASSIGN_OR_RETURN(const bool left_queue, Apply(batch[pick], decision[pick], cycle[pick]));
    if (left_queue) Dequeue(batch[pick]);
    done[pick] = 1;
    // Only the GPU the commit touched got later: choices elsewhere stand.
    for (size_t i = 0; i < n; ++i) {
      if (!done[i] && (gang || !decision[i].ok() || decision[i]->gpu == changed ||
                       decision[i]->claim_gpu == changed)) {
        fresh[i] = 0;
      }
    }
  }
  return Status::OK();
}

Status Sim::TeamPass() {
  policy_.BeginPass(state_);
  const std::vector<int> waiting(queue_.begin(), queue_.end());
  teams_->BeginPass(waiting, tasks_, state_.now_ms);
  // The next free GPU goes to the team offered first, not to a reservation made before it
  // waited (sched/team_reclaim.h).
  for (const auto& [task, gpu] : sched::YieldReservationsToTeamOrder(state_, policy_, teams_->ledger(),
                                                                     teams_->pass_factors(), teams_->pass_items(),
                                                                     teams_->pass_ids())) {
    MarkChanged(gpu);
  }
  int scanned = 0;
  for (int task; scanned < policy_.options().max_queue_scan && (task = teams_->Next()) >= 0; ++scanned) {
    if (policy_.PassSettled(state_, GangWaiting())) break;
    CycleState& cycle = cycles_[task];
    std::optional<Decision> kept = Kept(task, cycle);
    const bool reused = kept.has_value();
    const Result<Decision> d = reused ? Result<Decision>(*kept) : Decide(tasks_[task], cycle);
    HASE_ASSIGN_OR_RETURN(const bool left, Apply(task, d, cycle));
    Remember(task, d, reused);
    if (left) {
      cycles_.erase(task);
      Dequeue(task);
    }
  }
  return Status::OK();
}

void Sim::MaybePreempt() {
  if (!teams_->config().preemption.enabled || queue_.empty() || state_.open_gpus() > 0) return;
  const double now = state_.now_ms;
  std::vector<sched::PreemptRunning> running;
  for (size_t g = 0; g < on_gpu_.size(); ++g) {
    for (int id : on_gpu_[g]) {
      if (preempting_.count(id) || tasks_[id].gpus > 1) continue;  // k-GPU tasks are not preempted
      const Run& r = runs_[id];
      // Only a task with a batch left after the one in flight can give its GPU back early.
      const double per = r.iso_true / static_cast<double>(tasks_[id].num_batches);
      const double remaining = std::max(0.0, r.remaining_true - (now - r.last_ms) / r.slowdown);
      if (per <= 0 || remaining <= per * (1 + 1e-9)) continue;
      sched::PreemptRunning v;
      v.task = id;
      v.name = tasks_[id].name;
      v.team = teams_->TeamOf(id);
      v.priority = tasks_[id].priority;
      v.gpu = static_cast<int>(g);
      v.gpu_memory_mib = state_.gpus[g].memory_mib;
      v.run_s = (now - r.started_ms) / 1000.0;
      v.start_s = result_.tasks[id].start_ms / 1000.0;
      v.preemptions = result_.tasks[id].preemptions;
      running.push_back(v);
    }
  }
  if (running.empty()) return;
  const std::vector<int> waiting(queue_.begin(), queue_.end());
  teams_->BeginPass(waiting, tasks_, now);
  constexpr int kMaxClaimants = 16;  // waiting tasks looked at per instant (queue head first)
  int looked = 0;
  for (int w; looked < kMaxClaimants && !running.empty() && (w = teams_->Next()) >= 0; ++looked) {
    if (claimed_.count(w) || tasks_[w].gpus > 1) continue;
    // Only GPUs that could host it: the policy's own profile of it there.
    std::vector<sched::PreemptRunning> fit;
    for (const sched::PreemptRunning& v : running) {
      const sched::GpuType& type = cluster_.types[cluster_.gpus[v.gpu].type];
      Result<sched::TaskProfile> p = policy_.oracle().Profile(tasks_[w], type);
      if (p.ok() && sched::MemoryNeedMib(tasks_[w], *p) <= v.gpu_memory_mib) fit.push_back(v);
    }
    sched::PreemptWaiting pw{w, tasks_[w].name, teams_->TeamOf(w), tasks_[w].priority, 0};
    const sched::PreemptChoice c = teams_->Choose(pw, fit);
    if (c.victim < 0) continue;
    const int victim = fit[c.victim].task;
    Run& r = runs_[victim];
    const double per = r.iso_true / static_cast<double>(tasks_[victim].num_batches);
    const double remaining = std::max(0.0, r.remaining_true - (now - r.last_ms) / r.slowdown);
    const double done = r.iso_true - remaining;
    const double boundary = std::min(r.iso_true, std::ceil(done / per - 1e-9) * per);
    Push(now + (boundary - done) * r.slowdown, Event::kPreempt, victim);
    preempting_[victim] = {w, c.why};
    claimed_.insert(w);
    teams_->PreemptDecided(victim);
    running.erase(std::find_if(running.begin(), running.end(),
                               [&](const sched::PreemptRunning& v) { return v.task == victim; }));
  }
}

void Sim::Preempt(int task) {
  auto it = preempting_.find(task);
  if (it == preempting_.end()) return;
  const Pending p = it->second;
  preempting_.erase(it);
  teams_->PreemptDone(task);
  Run& r = runs_[task];
  TaskOutcome& o = result_.tasks[task];
  // Ended meanwhile, or the task it was for started elsewhere: nothing to give back.
  if (o.end_ms >= 0 || r.gpu < 0 || !queue_.count(p.claimant)) return;
  const int gpu = r.gpu;
  Reprice(gpu);  // remaining_true as of now
  const int64_t nb = tasks_[task].num_batches;
  const double per = r.iso_true / static_cast<double>(nb);
  const int64_t done = std::clamp<int64_t>(
      static_cast<int64_t>(std::floor((r.iso_true - r.remaining_true) / per + 1e-6)), 0, nb);
  if (done >= nb) return;  // its last batch is ending: it completes
  Detach(task, gpu);  // its completion event is void
  ++o.preemptions;
  ++result_.preemptions;
  o.preempted.push_back(fmt::format("{} at {:.3f} s on {} after batch {} of {}", p.why, state_.now_ms / 1000,
                                    cluster_.GpuLabel(gpu), done, nb));
  r.gpu = -1;
  tasks_[task].num_batches = nb - done;  // resumes with what is left, wherever is best then
  Reprice(gpu);
  StartQueued(gpu);
  policy_.OnGpuChanged(state_, gpu);
  MarkChanged(gpu);
  key_[task] = policy_.QueueKey(tasks_[task], cluster_);
  cycles_.erase(task);
  Enqueue(task);
}

Result<SimResult> Sim::Go() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].id != static_cast<int>(i)) {
      return Status::InvalidArgument("task ids must be 0..n-1 in order", tasks_[i].name);
    }
  }
  result_.policy = policy_.name();
  result_.tasks.resize(tasks_.size());
  result_.gpu_busy_ms.assign(cluster_.gpus.size(), 0.0);
  reservation_index_.assign(tasks_.size(), -1);
  key_.assign(tasks_.size(), 0.0);
  memo_.Reset(cluster_.gpus.size());
  if (options_.teams != nullptr && options_.teams->enabled()) {
    HASE_RETURN_IF_ERROR(options_.teams->CheckTasks(tasks_));
    teams_ = std::make_unique<TeamRun>(*options_.teams, tasks_, options_.equivalent_speed);
    for (const Task& t : tasks_) {  // slowdown's denominator: alone on the fastest type, truth
      double best = 0;
      for (const sched::GpuType& type : cluster_.types) {
        Result<TrueProfile> p = truth_.Profile(t, type);
        if (p.ok() && p->isolated_ms > 0 && (best == 0 || p->isolated_ms < best)) best = p->isolated_ms;
      }
      result_.tasks[t.id].isolated_best_ms = best;
    }
  }
  for (const Task& t : tasks_) {
    result_.tasks[t.id].task_id = t.id;
    result_.tasks[t.id].arrival_ms = t.arrival_ms;
    Push(t.arrival_ms, Event::kArrival, t.id);
  }
  for (size_t g = 0; g < cluster_.gpus.size(); ++g) policy_.OnGpuChanged(state_, static_cast<int>(g));
  while (true) {
    if (events_.empty()) {
      if (queue_.empty()) break;
      // Nothing runs and nothing will arrive: give the queue one more chance, then reject
      // what still cannot start (never wait forever). Every task decides afresh.
      memo_.Clear();
      HASE_RETURN_IF_ERROR(Pass());
      if (events_.empty()) {
        for (int task : queue_) Reject(task, "no GPU could take it (nothing left running)");
        queue_.clear();
        gangs_queued_ = 0;
        break;
      }
      continue;
    }
    const double t = events_.top().time_ms;
    state_.now_ms = std::max(state_.now_ms, t);
    bool happened = false;  // false: only stale completion events (superseded by a Reprice)
    while (!events_.empty() && events_.top().time_ms <= t + kSameInstantMs) {
      const Event e = events_.top();
      events_.pop();
      if (e.kind == Event::kArrival) {
        HASE_RETURN_IF_ERROR(Arrive(e.task));
        happened = true;
      } else if (e.kind == Event::kPreempt) {
        Preempt(e.task);
        happened = true;
      } else if (runs_[e.task].version == e.version && result_.tasks[e.task].end_ms < 0) {
        Complete(e.task);
        happened = true;
      }
    }
    // An instant where nothing happened changes no GPU and adds no task: no pass (most
    // completion events go stale, as every start or end on a GPU re-prices its tasks).
    if (happened && !queue_.empty()) HASE_RETURN_IF_ERROR(Pass());
    if (happened && teams_) MaybePreempt();
    if (happened && options_.after_instant) {
      const std::vector<int> waiting(queue_.begin(), queue_.end());
      options_.after_instant(state_, waiting);
    }
  }
  for (size_t g = 0; g < cluster_.gpus.size(); ++g) {
    if (busy_since_[g] >= 0) result_.gpu_busy_ms[g] += state_.now_ms - busy_since_[g];
  }
  for (const TaskOutcome& o : result_.tasks) {
    if (!o.rejected) result_.makespan_ms = std::max(result_.makespan_ms, o.end_ms);
  }
  if (teams_) result_.team_usage = teams_->Usage(result_.makespan_ms);
  return std::move(result_);
}

}  // namespace

Result<SimResult> Simulate(const sched::Cluster& cluster, const std::vector<Task>& tasks,
                           sched::Policy& policy, const TruthModel& truth,
                           const SimOptions& options) {
  Sim sim(cluster, tasks, policy, truth, options);
  return sim.Go();
}

}  // namespace hase::sim
