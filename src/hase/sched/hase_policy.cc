#include "hase/sched/hase_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "hase/sched/backfill.h"
#include "hase/sched/basic_plugins.h"
#include "hase/sched/policy.h"
#include "hase/sched/timeline.h"

namespace hase::sched {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// "Start the task on `gpu` now, finishing at `end_ms`": clears any wait/claim fields.
Decision BindNow(int gpu, double now, double end_ms) {
  Decision d;
  d.kind = Decision::Kind::kBind;
  d.gpu = gpu;
  d.start_ms = now;
  d.end_ms = end_ms;
  return d;
}

// Whether GPUs of class `c` can ever hold `task`: its type has a profile and enough memory.
bool ClassCanHost(const Task& task, const ClusterState::GpuClass& c, const CycleState& cycle) {
  const Result<TaskProfile>& p = cycle.profile[c.type];
  return p.ok() && MemoryNeedMib(task, *p) <= c.memory_mib;
}
// Whether adding a task of demand `demand` to what runs on `gpu` now raises the GPU's
// throughput in isolated-work ms per ms (Σ_i 1 / s_i under the contention model) by more than
// the fraction `margin`.
bool SharingGains(const GpuState& gpu, double demand, const ContentionModel& model,
                  double margin) {
  const double total = gpu.TotalDemand();
  double without = 0, with = 1.0 / model.Slowdown(demand, total);
  for (const RunningTask& r : gpu.running) {
    without += 1.0 / model.Slowdown(r.demand, total - r.demand);
    with += 1.0 / model.Slowdown(r.demand, total - r.demand + demand);
  }
  return with > without * (1 + margin);
}
}  // namespace

bool HasePlugin::MayBackfill(const Task& task, const GpuState& gpu,
                             const CycleState& cycle) const {
  if (!gpu.reservation || gpu.reservation->task_id == task.id) return true;
  const TaskProfile& p = *cycle.profile[gpu.type];
  const ExtraTask cand{task.id, MemoryNeedMib(task, p), p.demand, p.isolated_ms, cycle.now_ms};
  return BackfillAllowed(gpu, oracle_.contention(), cycle.now_ms, cand);
}

HasePlugin::Placement HasePlugin::Predict(const Task& task, const GpuState& gpu,
                                          const CycleState& cycle) const {
  if (MayBackfill(task, gpu, cycle)) return PredictOn(task, gpu, cycle);
  // Reserved for another task and backfilling would delay it: the task can only follow the
  // reserved one, which starts at its shadow time ahead of everything still to start here.
  GpuState after = gpu;
  const Reservation& r = *gpu.reservation;
  const bool planned = std::any_of(gpu.claims.begin(), gpu.claims.end(),
                                   [&](const QueuedTask& q) { return q.task_id == r.task_id; });
  if (!planned) {
    after.claims.insert(after.claims.begin(),
                        QueuedTask{r.task_id, r.memory_mib, r.demand, r.isolated_ms, r.start_ms});
  }
  after.reservation.reset();
  return PredictOn(task, after, cycle);
}

HasePlugin::Placement HasePlugin::PredictOn(const Task& task, const GpuState& gpu,
                                            const CycleState& cycle) const {
  const TaskProfile& p = *cycle.profile[gpu.type];
  const ContentionModel& model = oracle_.contention();
  const double now = cycle.now_ms;
  Placement pl;
  if (gpu.Idle()) {  // fast path: nothing to wait for, nobody to slow down
    pl.start_ms = now;
    pl.end_ms = now + p.isolated_ms * model.Slowdown(p.demand, gpu.background.EffectiveSmActive());
    pl.gpu_finish_ms = pl.end_ms;
    return pl;
  }
  ExtraTask extra;
  extra.task_id = task.id;
  extra.memory_mib = MemoryNeedMib(task, p);
  extra.demand = p.demand;
  extra.isolated_ms = p.isolated_ms;
  extra.not_before_ms = now;
  const Timeline base = PredictTimeline(gpu, model, now);
  auto evaluate = [&](double not_before) {
    extra.not_before_ms = not_before;
    const Timeline with = PredictTimeline(gpu, model, now, extra);
    Placement p;
    p.start_ms = with.extra->start_ms;
    p.end_ms = with.extra->end_ms;
    p.gpu_finish_ms = with.finish_ms;
    p.not_before_ms = not_before;
    for (size_t i = 0; i + 1 < with.entries.size(); ++i) {
      const double delta = with.entries[i].end_ms - base.entries[i].end_ms;
      if (std::isfinite(delta) && delta > 0) p.inflicted_ms += delta;
    }
    return p;
  };
  // (a) start as soon as a slot and memory are free, sharing the GPU;
  pl = evaluate(now);
  // (b) wait until the GPU has drained and run alone. Sharing is kept only when it is cheaper
  //     and either a predicted gain — the GPU drains earlier than when the task runs after
  //     the others, by colocation_margin × its isolated time (with kappa >= 1 two saturating
  //     tasks together are slower than one after the other: sharing would only shift the
  //     cost to the makespan) — or a small loss for a long wait: the drain is delayed by at
  //     most short_wait_share × the wait it saves (a short task beside a long one).
  if (options_.consider_exclusive && !base.entries.empty() && std::isfinite(base.finish_ms) &&
      base.finish_ms > pl.start_ms) {
    const Placement alone = evaluate(base.finish_ms);
    const double w = options_.inflicted_weight;
    const double loss = pl.gpu_finish_ms - alone.gpu_finish_ms;
    const bool gain = loss + options_.colocation_margin * p.isolated_ms <= kTimeEpsMs;
    const bool small_loss =
        options_.short_wait_share > 0 &&
        loss <= options_.short_wait_share * (alone.start_ms - pl.start_ms) + kTimeEpsMs;
    if (!(gain || small_loss) ||
        alone.end_ms + w * alone.inflicted_ms < pl.end_ms + w * pl.inflicted_ms) {
      pl = alone;
    }
  }
  return pl;
}

HasePlugin::Placement HasePlugin::Estimate(const Task& task, const GpuState& gpu,
                                           const CycleState& cycle) const {
  if (gpu.Idle() || gpu.reservation) return Predict(task, gpu, cycle);  // reserved: rare, exact
  const TaskProfile& p = *cycle.profile[gpu.type];
  const ContentionModel& model = oracle_.contention();
  const double now = cycle.now_ms;
  const double w = options_.inflicted_weight;
  const double bg = gpu.background.EffectiveSmActive();
  // Alone, once the GPU drains.
  Placement best;
  best.start_ms = std::max(now, gpu.projected_finish_ms);
  best.not_before_ms = best.start_ms;
  best.end_ms = best.start_ms + p.isolated_ms * model.Slowdown(p.demand, bg);
  // Sharing, now, when it is a predicted gain (the GPU's isolated-work throughput, Σ over its
  // tasks of 1 / slowdown, rises by colocation_margin) or, with short_wait_share, a short
  // task beside a long wait (what it suffers, iso × (slowdown − 1), bounds what it costs the
  // GPU). Predict's exact test compares drain times.
  const bool small_loss = options_.short_wait_share > 0 &&
                          p.isolated_ms * (model.Slowdown(p.demand, gpu.TotalDemand()) - 1) <=
                              options_.short_wait_share * (best.start_ms - now);
  if (gpu.claims.empty() && gpu.FitsNow(MemoryNeedMib(task, p)) &&
      (small_loss || SharingGains(gpu, p.demand, model, options_.colocation_margin))) {
    const double total = gpu.TotalDemand();
    Placement share;
    share.start_ms = now;
    share.not_before_ms = now;
    const double wall = p.isolated_ms * model.Slowdown(p.demand, total);
    share.end_ms = now + wall;
    for (const RunningTask& r : gpu.running) {
      const double s_j = model.Slowdown(r.demand, total - r.demand);
      const double s_j_with = model.Slowdown(r.demand, total - r.demand + p.demand);
      share.inflicted_ms += (s_j_with - s_j) / s_j * std::min(r.RemainingAt(now) * s_j, wall);
    }
    if (share.end_ms + w * share.inflicted_ms < best.end_ms + w * best.inflicted_ms) best = share;
  }
  return best;
}

FilterVerdict HasePlugin::Filter(const Task& task, const GpuState& gpu,
                                 const CycleState& cycle) const {
  const Result<TaskProfile>& p = cycle.profile[gpu.type];
  if (!p.ok()) return FilterVerdict::UnfitAnywhere("no latency profile for this GPU type");
  const double need = MemoryNeedMib(task, *p);
  if (!gpu.CanEverHost(need)) {
    return FilterVerdict::UnfitAnywhere("memory need exceeds the GPU's memory");
  }
  // A GPU reserved for another task stays a candidate: Predict prices the task after the
  // reserved one unless backfilling is allowed (then it may start now).
  if (!options_.allow_wait && (!gpu.FitsNow(need) || !MayBackfill(task, gpu, cycle))) {
    return FilterVerdict::Unfit("no free slot or memory now, or reserved for another task");
  }
  return FilterVerdict::Fits();
}

double HasePlugin::ScoreOfCost(double cost, const CycleState& cycle) const {
  const double lb = cycle.now_ms + cycle.best_isolated_ms;
  if (!std::isfinite(cost) || cost <= 0) return 0;
  return std::clamp(100.0 * lb / cost, 0.0, 100.0);
}

double HasePlugin::Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const {
  const Placement pl = Estimate(task, gpu, cycle);
  return ScoreOfCost(pl.end_ms + options_.inflicted_weight * pl.inflicted_ms, cycle);
}

size_t HasePlugin::SortedCandidatesNeeded() const {
  return static_cast<size_t>(std::max(1, options_.top_k));
}

std::optional<Price> HasePlugin::PriceOn(const Task& task, const GpuState& gpu, const CycleState& cycle,
                                         bool exact) const {
  const double w = options_.inflicted_weight;
  const Placement estimate = Estimate(task, gpu, cycle);
  const Placement pl = exact ? Predict(task, gpu, cycle) : estimate;
  Price p;
  p.start_ms = pl.start_ms;
  p.end_ms = pl.end_ms;
  p.inflicted_ms = pl.inflicted_ms;
  p.cost_ms = pl.end_ms + w * pl.inflicted_ms;
  p.score = ScoreOfCost(estimate.end_ms + w * estimate.inflicted_ms, cycle);
  return p;
}

std::string HasePlugin::Objective() const {
  return fmt::format(
      "cost = predicted end + {:g} x the delay predicted for the tasks already on the GPU (inflicted); "
      "the {} GPUs of highest score (an O(1) estimate of the cost) are priced exactly and the lowest cost wins, "
      "ties to the earlier start, then the lower GPU id (docs/scheduler.md)",
      options_.inflicted_weight, SortedCandidatesNeeded());
}

bool HasePlugin::Rank(const Task& task, const ClusterState& state, CycleState& cycle,
                      std::vector<Candidate>& out) {
  if (!options_.indexed || !options_.allow_wait) return false;
  const size_t k = SortedCandidatesNeeded();
  const ContentionModel& model = oracle_.contention();
  const double w = options_.inflicted_weight;
  out.clear();
  heap_.clear();
  if (seen_.size() != state.gpus.size()) seen_.assign(state.gpus.size(), 0);
  ++epoch_;
  auto theta = [&] { return heap_.size() < k ? kInf : heap_.front(); };
  auto consider = [&](int g) {
    if (seen_[g] == epoch_) return;
    seen_[g] = epoch_;
    const GpuState& gpu = state.gpus[g];
    if (!Filter(task, gpu, cycle).fits()) return;
    const Placement pl = Estimate(task, gpu, cycle);
    const double cost = pl.end_ms + w * pl.inflicted_ms;
    out.push_back({g, ScoreOfCost(cost, cycle)});
    heap_.push_back(cost);
    std::push_heap(heap_.begin(), heap_.end());
    if (heap_.size() > k) {
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.pop_back();
    }
  };
  for (int g : state.irregular()) consider(g);
  for (const auto& [task_id, g] : state.reservation_of_task) consider(g);
  for (const auto& [task_id, gs] : state.gang_of_task) {  // a k-GPU task's other reserved GPUs
    for (int g : gs) consider(g);
  }
  const auto& classes = state.classes();
  for (const ClusterState::GpuClass& c : classes) {
    if (!ClassCanHost(task, c, cycle)) continue;
    for (int g : c.idle) {  // idle GPUs of a class are interchangeable: the lowest id
      if (state.gpus[g].reservation) continue;
      consider(g);
      break;
    }
    size_t n = 0;
    for (const auto& [finish, g] : c.by_finish) {
      if (n >= k) break;
      if (state.gpus[g].reservation) continue;
      consider(g);
      ++n;
    }
  }
  for (const ClusterState::GpuClass& c : classes) {
    if (!ClassCanHost(task, c, cycle)) continue;
    const double iso = cycle.profile[c.type]->isolated_ms;
    const double own = cycle.profile[c.type]->demand;
    for (const auto& [demand, g] : c.shareable) {
      const double bound = cycle.now_ms + iso * model.Slowdown(own, demand);
      const double th = theta();
      if (bound > th + 1e-9 * std::abs(th) + 1e-9) break;  // th = inf never stops
      if (state.gpus[g].reservation) continue;
      consider(g);
    }
  }
  if (out.empty()) return false;
  // Select reads only the sorted top_k (SortedCandidatesNeeded); the rest stay unordered.
  const auto better = [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score > b.score : a.gpu < b.gpu;
  };
  if (out.size() > k) {
    std::partial_sort(out.begin(), out.begin() + static_cast<long>(k), out.end(), better);
  } else {
    std::sort(out.begin(), out.end(), better);
  }
  cycle.candidates_complete = false;
  return true;
}

bool HasePlugin::AnyFitsNow(const Task& task, const ClusterState& state, const CycleState& cycle,
                            const std::vector<Candidate>& candidates, bool use_index) const {
  auto fits = [&](int id) {  // could start there now (backfilling allowed if reserved)
    const GpuState& g = state.gpus[id];
    return g.FitsNow(MemoryNeedMib(task, *cycle.profile[g.type])) && MayBackfill(task, g, cycle);
  };
  if (!use_index) {
    for (const Candidate& c : candidates) {
      if (fits(c.gpu)) return true;
    }
    return false;
  }
  auto passes = [&](int id) { return Filter(task, state.gpus[id], cycle).fits(); };
  for (int g : state.irregular()) {
    if (passes(g) && fits(g)) return true;
  }
  for (const auto& [task_id, g] : state.reservation_of_task) {
    if (passes(g) && fits(g)) return true;
  }
  for (const auto& [task_id, gs] : state.gang_of_task) {
    for (int g : gs) {
      if (passes(g) && fits(g)) return true;
    }
  }
  for (const ClusterState::GpuClass& c : state.classes()) {
    if (!ClassCanHost(task, c, cycle)) continue;
    for (int g : c.open) {
      if (!state.gpus[g].reservation && fits(g)) return true;
    }
  }
  return false;
}

Decision HasePlugin::Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                            const std::vector<Candidate>& candidates) {
  const double now = cycle.now_ms;
  const double w = options_.inflicted_weight;
  const size_t k = std::min(candidates.size(), static_cast<size_t>(std::max(1, options_.top_k)));
  // The two cheapest of the top_k by exact timelines: (cost, start, id) lexicographic.
  struct Priced {
    int gpu = -1;
    Placement pl;
    double cost = kInf;
  };
  auto cheaper = [](const Priced& a, const Priced& b) {
    if (a.gpu < 0) return false;
    if (b.gpu < 0) return true;
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.pl.start_ms != b.pl.start_ms) return a.pl.start_ms < b.pl.start_ms;
    return a.gpu < b.gpu;
  };
  Priced best, second;
  for (size_t i = 0; i < k; ++i) {
    Priced p;
    p.gpu = candidates[i].gpu;
    p.pl = Predict(task, state.gpus[p.gpu], cycle);
    p.cost = p.pl.end_ms + w * p.pl.inflicted_ms;
    if (cheaper(p, best)) {
      second = best;
      best = p;
    } else if (cheaper(p, second)) {
      second = p;
    }
  }
  auto explain = [&](Decision d) {
    d.cost_ms = best.cost;
    if (second.gpu >= 0) {
      d.runner_up_gpu = second.gpu;
      d.runner_up_end_ms = second.pl.end_ms;
      d.runner_up_inflicted_ms = second.pl.inflicted_ms;
    }
    return d;
  };
  if (best.pl.start_ms <= now + kTimeEpsMs) return explain(BindNow(best.gpu, now, best.pl.end_ms));
  // The task's own reservation has come due: take it.
  const int held = state.ReservedGpuOf(task.id);
  if (held >= 0) {
    const GpuState& g = state.gpus[held];
    const Result<TaskProfile>& p = cycle.profile[g.type];
    if (p.ok() && g.FitsNow(MemoryNeedMib(task, *p))) {
      // Priced as it starts: now, beside what runs. This pass's claims on the GPU were planned
      // behind the reservation (Predict puts the holder first for them), so none goes ahead of
      // it; pricing it behind them (FIFO) doubled its predicted run, and the calibration then
      // learned from that wrong prediction.
      GpuState due = g;
      due.claims.clear();
      return explain(BindNow(held, now, Predict(task, due, cycle).end_ms));
    }
  }
  // Wait for the GPU of the best predicted completion, claiming it for this pass.
  Decision d;
  d.kind = Decision::Kind::kWait;
  d.gpu = best.gpu;
  d.claim_gpu = best.gpu;
  d.claim_not_before_ms = best.pl.not_before_ms;
  d.start_ms = best.pl.start_ms;
  d.end_ms = best.pl.end_ms;
  d.reason = "waiting for the GPU of its earliest predicted completion";
  if (held >= 0) return explain(d);  // keeps its reservation
  // EASY: a task no GPU can start now reserves that GPU (the search is skipped when no
  // reservation can be held: Policy::Commit's rule).
  if (static_cast<int>(state.reservation_of_task.size()) >= max_reservations_ ||
      state.gpus[best.gpu].reservation ||
      AnyFitsNow(task, state, cycle, candidates, !cycle.candidates_complete)) {
    return explain(d);
  }
  d.reserve = true;
  d.reason = "no GPU can start it now: reserved the GPU of its earliest predicted completion";
  return explain(d);
}

bool HasePlugin::StillStands(const Task& task, const ClusterState& state,
                             const CycleState& cycle, const Decision& last,
                             const std::vector<int>& changed) const {
  // A reservation holder decides every time: its reservation may come due on any pass.
  if (last.reserve || state.ReservedGpuOf(task.id) >= 0) return false;
  const double w = options_.inflicted_weight;
  const double tol = kTimeEpsMs + 1e-9 * std::abs(last.cost_ms);
  for (int g : changed) {
    const GpuState& gpu = state.gpus[g];
    if (!Filter(task, gpu, cycle).fits()) continue;
    const Placement pl = Predict(task, gpu, cycle);
    if (pl.end_ms + w * pl.inflicted_ms <= last.cost_ms + tol) return false;  // as good or better
  }
  if (static_cast<int>(state.reservation_of_task.size()) >= max_reservations_) return true;
  static const std::vector<Candidate> kNone;
  return AnyFitsNow(task, state, cycle, kNone, true);  // else newly blocked: decide (reserve)
}

QueueOrder HaseQueueOrder(const HaseOptions& options) {
  QueueOrder q;
  q.aging = options.aging;
  switch (options.objective) {
    case Objective::kMakespan:
      q.kind = QueueOrder::Kind::kLongestFirst;
      break;
    case Objective::kJct:
      q.kind = QueueOrder::Kind::kShortestFirst;
      break;
    case Objective::kBalanced:
      q.kind = QueueOrder::Kind::kSplit;
      q.long_task_ms = options.long_task_s * 1000.0;
      break;
  }
  return q;
}

std::unique_ptr<Policy> MakeHasePolicy(std::shared_ptr<const LatencyOracle> oracle,
                                       const HaseOptions& options, int max_reservations) {
  Policy::Options po;
  po.dispatch_on_arrival = false;
  po.one_idle_gpu_per_type = true;
  po.max_reservations = max_reservations;
  po.split_batches = true;  // Task::split: batches over idle GPUs when that ends earlier (gang.h)
  po.claim_on_wait = true;
  po.queue_order = HaseQueueOrder(options);
  po.incremental_passes = options.incremental;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("hase", po, std::move(oracle));
  auto plugin = std::make_shared<HasePlugin>(o, options, max_reservations);
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(plugin);
  policy->AddScore(plugin);
  policy->SetSelect(plugin);
  policy->SetRank(plugin);
  policy->SetReserve(std::make_shared<DefaultReserve>());
  return policy;
}

}  // namespace hase::sched
