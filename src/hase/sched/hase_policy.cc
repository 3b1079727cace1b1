#include "hase/sched/hase_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
}  // namespace

HasePlugin::Placement HasePlugin::Predict(const Task& task, const GpuState& gpu,
                                          const CycleState& cycle) const {
  const TaskProfile& p = *cycle.profile[gpu.type];
  const ContentionModel& model = oracle_.contention();
  const double now = cycle.now_ms;
  Placement pl;
  if (gpu.Idle()) {  // fast path: nothing to wait for, nobody to slow down
    pl.start_ms = now;
    pl.end_ms = now + p.isolated_ms * model.Slowdown(gpu.background.EffectiveSmActive());
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
  // (b) wait until the GPU has drained and run alone, when that is cheaper (heavy tasks:
  //     with kappa >= 1 two saturating tasks together are slower than one after the other).
  if (options_.consider_exclusive && !base.entries.empty() && std::isfinite(base.finish_ms) &&
      base.finish_ms > pl.start_ms) {
    const Placement alone = evaluate(base.finish_ms);
    const double w = options_.inflicted_weight;
    if (alone.end_ms + w * alone.inflicted_ms < pl.end_ms + w * pl.inflicted_ms) pl = alone;
  }
  return pl;
}

HasePlugin::Placement HasePlugin::Estimate(const Task& task, const GpuState& gpu,
                                           const CycleState& cycle) const {
  if (gpu.Idle()) return Predict(task, gpu, cycle);
  const TaskProfile& p = *cycle.profile[gpu.type];
  const ContentionModel& model = oracle_.contention();
  const double now = cycle.now_ms;
  const double w = options_.inflicted_weight;
  const double bg = gpu.background.EffectiveSmActive();
  // Alone, once the GPU drains.
  Placement best;
  best.start_ms = std::max(now, gpu.projected_finish_ms);
  best.not_before_ms = best.start_ms;
  best.end_ms = best.start_ms + p.isolated_ms * model.Slowdown(bg);
  best.gpu_finish_ms = best.end_ms;
  // Sharing, now.
  if (gpu.claims.empty() && gpu.FitsNow(MemoryNeedMib(task, p))) {
    const double total = gpu.TotalDemand();
    Placement share;
    share.start_ms = now;
    share.not_before_ms = now;
    const double wall = p.isolated_ms * model.Slowdown(total);
    share.end_ms = now + wall;
    double finish = share.end_ms;
    for (const RunningTask& r : gpu.running) {
      const double s_j = model.Slowdown(total - r.demand);
      const double rem = r.RemainingAt(now);
      share.inflicted_ms += model.kappa * p.demand * std::min(rem, wall / s_j);
      finish = std::max(finish, now + rem * s_j);
    }
    share.gpu_finish_ms = std::max(finish + share.inflicted_ms / std::max<size_t>(1, gpu.running.size()),
                                   gpu.projected_finish_ms);
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
  if (gpu.reservation && gpu.reservation->task_id != task.id) {
    ExtraTask cand{task.id, need, p->demand, p->isolated_ms, cycle.now_ms};
    if (!BackfillAllowed(gpu, oracle_.contention(), cycle.now_ms, cand)) {
      return FilterVerdict::Unfit("reserved for another task; backfilling would delay it");
    }
  }
  if (!options_.allow_wait && !gpu.FitsNow(need)) {
    return FilterVerdict::Unfit("no free slot or memory now");
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
    for (const auto& [demand, g] : c.shareable) {
      const double bound = cycle.now_ms + iso * model.Slowdown(demand);
      const double th = theta();
      if (bound > th + 1e-9 * std::abs(th) + 1e-9) break;  // th = inf never stops
      if (state.gpus[g].reservation) continue;
      consider(g);
    }
  }
  if (out.empty()) return false;
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score > b.score : a.gpu < b.gpu;
  });
  cycle.candidates_complete = false;
  return true;
}

void HasePlugin::FitsNowSearch(const Task& task, const ClusterState& state,
                               const CycleState& cycle, const std::vector<Candidate>& candidates,
                               bool* any, int* lowest) const {
  *any = false;
  *lowest = -1;
  auto fits = [&](const GpuState& g) {
    return g.FitsNow(MemoryNeedMib(task, *cycle.profile[g.type]));
  };
  auto take = [&](int id) {  // `id` passed Filter and fits now
    *any = true;
    if (!state.gpus[id].reservation && (*lowest < 0 || id < *lowest)) *lowest = id;
  };
  if (cycle.candidates_complete) {
    for (const Candidate& c : candidates) {
      if (fits(state.gpus[c.gpu])) take(c.gpu);
    }
    return;
  }
  auto passes = [&](int id) { return Filter(task, state.gpus[id], cycle).fits(); };
  for (int g : state.irregular()) {
    if (passes(g) && fits(state.gpus[g])) take(g);
  }
  for (const auto& [task_id, g] : state.reservation_of_task) {
    if (passes(g) && fits(state.gpus[g])) take(g);
  }
  for (const ClusterState::GpuClass& c : state.classes()) {
    if (!ClassCanHost(task, c, cycle)) continue;
    for (int g : c.open) {  // by id: the first unreserved one that fits is the class's lowest
      if (*lowest >= 0 && g > *lowest) break;
      if (state.gpus[g].reservation) continue;  // counted above
      if (fits(state.gpus[g])) {
        take(g);
        break;
      }
    }
  }
}

int HasePlugin::EarliestStart(const Task& task, const ClusterState& state,
                              const CycleState& cycle, const std::vector<Candidate>& candidates,
                              double* start) const {
  int earliest = -1;
  double earliest_start = kInf;
  auto visit = [&](int id) {
    const GpuState& g = state.gpus[id];
    if (g.reservation) return;  // one reservation per GPU
    const double s = EarliestFitMs(g, oracle_.contention(), cycle.now_ms,
                                   MemoryNeedMib(task, *cycle.profile[g.type]));
    if (s < earliest_start || (s == earliest_start && id < earliest)) {
      earliest_start = s;
      earliest = id;
    }
  };
  if (cycle.candidates_complete) {
    for (const Candidate& c : candidates) visit(c.gpu);
  } else {
    for (int g : state.irregular()) {
      if (Filter(task, state.gpus[g], cycle).fits()) visit(g);
    }
    for (const ClusterState::GpuClass& c : state.classes()) {
      if (!ClassCanHost(task, c, cycle)) continue;
      for (int g : c.gpus) {
        if (!state.irregular().count(g)) visit(g);  // unreserved regular GPUs pass Filter
      }
    }
  }
  *start = earliest_start;
  return earliest;
}

Decision HasePlugin::Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                            const std::vector<Candidate>& candidates) {
  const double now = cycle.now_ms;
  const size_t k = std::min(candidates.size(), static_cast<size_t>(std::max(1, options_.top_k)));
  int best = -1;
  Placement best_pl;
  double best_makespan = kInf;
  double best_cost = kInf;
  for (size_t i = 0; i < k; ++i) {
    const int g = candidates[i].gpu;
    const Placement pl = Predict(task, state.gpus[g], cycle);
    const double makespan = std::max(pl.gpu_finish_ms, state.MaxProjectedFinishExcluding(g));
    const double cost = pl.end_ms + options_.inflicted_weight * pl.inflicted_ms;
    const double tol = options_.makespan_tolerance * std::max(1.0, std::abs(best_makespan));
    bool better;
    if (best < 0 || makespan < best_makespan - tol) {
      better = true;
    } else if (makespan > best_makespan + tol) {
      better = false;
    } else {
      // Equal cost: start now rather than wait, then the lower GPU id.
      better = cost < best_cost ||
               (cost == best_cost && (pl.start_ms < best_pl.start_ms ||
                                      (pl.start_ms == best_pl.start_ms && g < best)));
    }
    if (better) {
      best = g;
      best_pl = pl;
      best_makespan = makespan;
      best_cost = cost;
    }
  }
  if (best_pl.start_ms <= now + kTimeEpsMs) return BindNow(best, now, best_pl.end_ms);
  // The task's own reservation has come due: take it.
  const int held = state.ReservedGpuOf(task.id);
  if (held >= 0) {
    const GpuState& g = state.gpus[held];
    const Result<TaskProfile>& p = cycle.profile[g.type];
    if (p.ok() && g.FitsNow(MemoryNeedMib(task, *p))) {
      return BindNow(held, now, Predict(task, g, cycle).end_ms);
    }
  }
  Decision d;
  d.kind = Decision::Kind::kWait;
  d.gpu = best;
  d.claim_gpu = best;
  d.claim_not_before_ms = best_pl.not_before_ms;
  d.start_ms = best_pl.start_ms;
  d.end_ms = best_pl.end_ms;
  d.reason = "waiting for a faster GPU to free";
  if (held >= 0) return d;  // keeps its reservation
  // Blocked (nothing can start it now) or waited too long: start it now on the lowest-id GPU
  // that can, else reserve the GPU that can start it earliest.
  bool any_fits = false;
  int fits_gpu = -1;
  FitsNowSearch(task, state, cycle, candidates, &any_fits, &fits_gpu);
  const bool blocked = !any_fits;
  const double bound =
      std::max(options_.wait_bound_factor * cycle.best_isolated_ms, options_.wait_bound_min_ms);
  const bool waited_too_long = now - task.arrival_ms >= bound;
  if (!blocked && !waited_too_long) return d;
  if (fits_gpu >= 0) {  // it can start now: stop waiting, start it
    return BindNow(fits_gpu, now, Predict(task, state.gpus[fits_gpu], cycle).end_ms);
  }
  // A reservation only if one can be held (Policy::Commit's rule): the search is O(GPUs).
  if (static_cast<int>(state.reservation_of_task.size()) >= max_reservations_) return d;
  double earliest_start = kInf;
  const int earliest = EarliestStart(task, state, cycle, candidates, &earliest_start);
  if (earliest < 0 || !std::isfinite(earliest_start)) return d;
  if (earliest_start <= now + kTimeEpsMs) {  // it can start now: stop waiting, start it
    return BindNow(earliest, now, Predict(task, state.gpus[earliest], cycle).end_ms);
  }
  d.gpu = earliest;
  d.start_ms = earliest_start;
  d.reserve = true;
  d.reason = blocked ? "no GPU can start it now: reserved the earliest" : "waited past its bound";
  return d;
}

std::unique_ptr<Policy> MakeHasePolicy(std::shared_ptr<const LatencyOracle> oracle,
                                       const HaseOptions& options, int max_reservations) {
  Policy::Options po;
  po.dispatch_on_arrival = false;
  po.one_idle_gpu_per_type = true;
  po.max_reservations = max_reservations;
  po.claim_on_wait = true;
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
