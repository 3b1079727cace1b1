// The `hase` policy: two-stage greedy placement with interference-aware predicted completion
// times, reservations and EASY backfilling. Pseudo-code, parameters and defaults:
// docs/scheduler.md.
//
// Stage 1 (Score): on every GPU that can ever host the task, predict its completion time
//   C_g = (start on g) + (runtime under the slowdown co-runners inflict), and the extra time
//   I_g it inflicts on the tasks already there (PredictTimeline with and without it), for two
//   starts — the earliest free slot (sharing) and the moment the GPU drains (alone) — keeping
//   the cheaper C_g + inflicted_weight × I_g, sharing only when it is a predicted gain
//   (colocation_margin). A GPU reserved for another task is priced after that task unless
//   backfilling is allowed. Score = 100 × (now + fastest isolated) / (C_g + w × I_g).
// Stage 2 (Select): among the top_k GPUs by score, the exact timelines (Predict) decide: the
//   GPU with the lowest C_g + inflicted_weight × I_g wins; ties go to the earlier start, then
//   the lower GPU id (only GPUs of one class — interchangeable — can tie exactly). Every
//   outcome is priced this way: there is no fallback by GPU id, by "frees first" or by file
//   order. A choice that starts later than now means "wait for this GPU": the task stays
//   queued and claims the GPU for the rest of the pass (later tasks plan around it).
// Queue order (HaseOptions::objective, objective.h): makespan — longest first with linear
//   aging: the tasks that set the tail choose first; a task waits behind later arrivals only
//   while they are longer by more than aging × the arrival gap; jct — shortest first, aged;
//   balanced (default) — tasks of at least long_task_s longest first, ahead of the others
//   shortest first.
// Reservation (EASY): a task that no GPU can start now reserves the GPU of its best predicted
//   completion from its predicted start there (at most Policy::Options::max_reservations at
//   once). Other tasks use a reserved GPU only through BackfillAllowed (backfill.h). A task
//   whose reservation has come due starts there.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "hase/sched/framework.h"
#include "hase/sched/objective.h"

namespace hase::sched {

struct HaseOptions {
  int top_k = 4;                    // stage-2 candidates (>= 1); 1 = plain greedy
  double inflicted_weight = 1.0;    // weight of the slowdown inflicted on co-runners in C_g
  bool allow_wait = true;           // may choose a busy GPU and wait for it
  // Co-location must be a predicted gain by this margin: sharing must drain the GPU earlier
  // than running after the others by margin × the task's isolated time (Predict), and raise
  // the GPU's isolated-work throughput by this fraction (Estimate). Guards against the
  // interference the model does not predict (pairwise noise, docs/scheduler.md). 0.3: two
  // light tasks (slowdown ~1.06) still share, a long light task is not slowed past the
  // makespan by a stream of saturating newcomers (docs/scheduler.md, "Co-location rule"; 0.1
  // before issue 11).
  double colocation_margin = 0.3;
  // … or (when > 0) cost little for the wait it saves: sharing may delay the GPU's drain by
  // at most this × the time the task would otherwise wait for the GPU (a short task beside a
  // long one). Trades makespan for JCT (docs/scheduler.md, "Co-location rule"); 0 = off.
  double short_wait_share = 0;
  bool consider_exclusive = true;   // stage 1 also prices waiting until the GPU drains and
                                    // running alone; keeps the cheaper of the two
  // What the queue order trades (objective.h; docs/scheduler.md, "Makespan and JCT").
  Objective objective = Objective::kBalanced;
  // balanced: a task whose fastest predicted isolated time is at least this long (s) is
  // "long" and queued longest first ahead of the others (which go shortest first).
  double long_task_s = 20;
  // Queue order: credit, in ms of task length, per ms waited (Policy::Options::queue_order).
  // 0 = pure longest/shortest first; large = arrival order. docs/scheduler.md ("Queue order") gives the
  // measurements behind the default.
  double aging = 0.02;
  // Stage 1 through ClusterState's candidate index (RankPlugin) instead of scoring every GPU.
  // Same top_k as the sweep (tests/sched/hase_index_test.cc compares both on random states);
  // false: the sweep (kept as the reference).
  bool indexed = true;
  // The simulator keeps a waiting task's last decision while StillStands holds, instead of
  // deciding again on every event (Policy::Options::incremental_passes). false: decide every
  // waiting task on every pass (the reference; tests compare both).
  bool incremental = true;
};

class Policy;

// The central-queue order `options.objective` implies (Policy::Options::queue_order).
QueueOrder HaseQueueOrder(const HaseOptions& options);

// Builds the hase policy (called by the registry).
std::unique_ptr<Policy> MakeHasePolicy(std::shared_ptr<const LatencyOracle> oracle,
                                       const HaseOptions& options, int max_reservations);

// The plugin behind it, exposed for tests and the daemon (Filter/Score on live snapshots).
class HasePlugin final : public FilterPlugin,
                         public ScorePlugin,
                         public SelectPlugin,
                         public RankPlugin {
 public:
  // `max_reservations`: Policy::Options::max_reservations (Select skips the search for a GPU
  // to reserve when that many are held).
  HasePlugin(const LatencyOracle& oracle, const HaseOptions& options, int max_reservations = 1)
      : oracle_(oracle), options_(options), max_reservations_(max_reservations) {}
  std::string_view Name() const override { return "Hase"; }

  // UnfitAnywhere: no profile / too little memory. Unfit: only when allow_wait is false and
  // the task cannot start now (busy, or reserved for another task and backfilling not
  // allowed). A GPU reserved for another task is otherwise a candidate, priced after it.
  FilterVerdict Filter(const Task& task, const GpuState& gpu,
                       const CycleState& cycle) const override;
  // Stage 1, 0–100.
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
  // Stage 2, plus the wait / reservation decision.
  Decision Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                  const std::vector<Candidate>& candidates) override;
  size_t SortedCandidatesNeeded() const override;
  // Exact: Predict (Select's pricing); else Estimate (Score's). Score from Estimate.
  std::optional<Price> PriceOn(const Task& task, const GpuState& gpu, const CycleState& cycle,
                               bool exact) const override;
  std::string Objective() const override;
  // A wait still stands when the task holds no reservation, no changed GPU that passes Filter
  // prices it at or below the wait's cost (Predict), and it could not make a reservation or
  // some GPU can still start it now (so it is not newly blocked).
  bool StillStands(const Task& task, const ClusterState& state, const CycleState& cycle,
                   const Decision& last, const std::vector<int>& changed) const override;
  // Stage 1 through the index (HaseOptions::indexed). Per class of interchangeable GPUs
  // (ClusterState::GpuClass) the cost C_g + w·I_g of a GPU is min(alone, sharing): alone is
  // max(now, projected finish) + isolated time, monotone in the projected finish, and sharing
  // costs at least now + isolated × Slowdown(its demand, GPU's total demand). So it evaluates exactly:
  // irregular and reserved GPUs, one idle GPU per class, the top_k earliest-finishing busy
  // GPUs per class, and shareable GPUs in increasing demand while that lower bound does not
  // exceed the top_k-th best cost found (threshold algorithm). Every GPU left out costs more
  // than top_k evaluated ones, so the sorted prefix equals the sweep's. O(classes × top_k ×
  // log n) plus the shareable GPUs under the threshold, instead of O(GPUs).
  bool Rank(const Task& task, const ClusterState& state, CycleState& cycle,
            std::vector<Candidate>& out) override;

  // Stage-1 prediction on one GPU.
  struct Placement {
    double start_ms = 0;       // predicted start
    double end_ms = 0;         // predicted completion C_g
    double inflicted_ms = 0;   // Σ extra time of the tasks already there, I_g
    double gpu_finish_ms = 0;  // the GPU's projected finish with the task (Predict only)
    double not_before_ms = 0;  // the start it waits for (now, or when the GPU drains)
  };
  // Exact: PredictTimeline with and without the task (Select, for the top_k). On a GPU
  // reserved for another task where backfilling is not allowed, the reserved task is planned
  // first, from its shadow time, and this one after it.
  Placement Predict(const Task& task, const GpuState& gpu, const CycleState& cycle) const;
  // Whether `task` may start on `gpu` before its reservation (none, its own, or
  // BackfillAllowed).
  bool MayBackfill(const Task& task, const GpuState& gpu, const CycleState& cycle) const;
  // O(running tasks), no allocation (Score, for every GPU): sharing now at the current
  // slowdown (when a slot and memory are free), or alone from GpuState::projected_finish_ms;
  // the inflicted time of sharing is Σ_j (s'_j − s_j) / s_j · min(r_j · s_j, W) for co-runner j
  // with r_j isolated ms left, slowdown s_j without the task and s'_j with it, and the task's
  // wall time W (the progress j loses while they overlap).
  Placement Estimate(const Task& task, const GpuState& gpu, const CycleState& cycle) const;

 private:
  // Predict on `gpu` as it stands, reservations aside.
  Placement PredictOn(const Task& task, const GpuState& gpu, const CycleState& cycle) const;
  // Score of a stage-1 cost (what Score returns for it).
  double ScoreOfCost(double cost, const CycleState& cycle) const;
  // Whether any GPU passing Filter can start `task` now. Uses `candidates` when they are
  // complete, else the index (free-slot sets).
  // `use_index`: ignore `candidates` and search the index (they are not exhaustive).
  bool AnyFitsNow(const Task& task, const ClusterState& state, const CycleState& cycle,
                  const std::vector<Candidate>& candidates, bool use_index) const;

  const LatencyOracle& oracle_;
  const HaseOptions options_;
  const int max_reservations_;
  std::vector<uint64_t> seen_;  // Rank: epoch stamp per GPU (no allocation per call)
  uint64_t epoch_ = 0;
  std::vector<double> heap_;    // Rank: the top_k smallest costs so far (max-heap)
};

}  // namespace hase::sched
