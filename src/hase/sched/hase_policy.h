// The `hase` policy: two-stage greedy placement with interference-aware predicted completion
// times, reservations and EASY backfilling. Pseudo-code, parameters and defaults:
// docs/scheduler.md.
//
// Stage 1 (Score): on every GPU that can ever host the task, predict its completion time
//   C_g = (start on g) + (runtime under the slowdown co-runners inflict), and the extra time
//   I_g it inflicts on the tasks already there (PredictTimeline with and without it), for two
//   starts — the earliest free slot (sharing) and the moment the GPU drains (alone) — keeping
//   the cheaper C_g + inflicted_weight × I_g. Score = 100 × (now + fastest isolated time) / (C_g + inflicted_weight × I_g).
// Stage 2 (Select): among the top_k GPUs by score, pick the one minimising the projected
//   makespan max(GPU g's new finish, every other GPU's projected finish); ties (within
//   makespan_tolerance) go to the lower C_g + inflicted_weight × I_g (the sum of completion
//   times), then the lower GPU id. A choice that starts later than now means "wait for this
//   faster GPU"; the task stays queued.
// Reservation: a waiting task that cannot start anywhere now, or that has waited longer than
//   max(wait_bound_factor × its fastest isolated time, wait_bound_min_ms), reserves the GPU
//   that can start it earliest (EASY: at most Policy::Options::max_reservations at once).
//   Other tasks use a reserved GPU only through BackfillAllowed (backfill.h).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "hase/sched/framework.h"

namespace hase::sched {

struct HaseOptions {
  int top_k = 4;                    // stage-2 candidates (>= 1); 1 = plain greedy
  double inflicted_weight = 1.0;    // weight of the slowdown inflicted on co-runners in C_g
  bool allow_wait = true;           // may choose a busy GPU and wait for it
  bool consider_exclusive = true;   // stage 1 also prices waiting until the GPU drains and
                                    // running alone; keeps the cheaper of the two
  double wait_bound_factor = 2.0;   // reservation after waiting this × fastest isolated time
  double wait_bound_min_ms = 1000;  // … but never before this much waiting, ms
  double makespan_tolerance = 1e-9; // relative: makespans this close count as a tie
};

class Policy;

// Builds the hase policy (called by the registry).
std::unique_ptr<Policy> MakeHasePolicy(std::shared_ptr<const LatencyOracle> oracle,
                                       const HaseOptions& options, int max_reservations);

// The plugin behind it, exposed for tests and the daemon (Filter/Score on live snapshots).
class HasePlugin final : public FilterPlugin, public ScorePlugin, public SelectPlugin {
 public:
  HasePlugin(const LatencyOracle& oracle, const HaseOptions& options)
      : oracle_(oracle), options_(options) {}
  std::string_view Name() const override { return "Hase"; }

  // UnfitAnywhere: no profile / too little memory. Unfit: reserved for another task and
  // backfilling not allowed, or busy now while allow_wait is false.
  FilterVerdict Filter(const Task& task, const GpuState& gpu,
                       const CycleState& cycle) const override;
  // Stage 1, 0–100.
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
  // Stage 2, plus the wait / reservation decision.
  Decision Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                  const std::vector<Candidate>& candidates) override;

  // Stage-1 prediction on one GPU.
  struct Placement {
    double start_ms = 0;       // predicted start
    double end_ms = 0;         // predicted completion C_g
    double inflicted_ms = 0;   // Σ extra time of the tasks already there, I_g
    double gpu_finish_ms = 0;  // the GPU's projected finish with the task
    double not_before_ms = 0;  // the start it waits for (now, or when the GPU drains)
  };
  // Exact: PredictTimeline with and without the task (Select, for the top_k).
  Placement Predict(const Task& task, const GpuState& gpu, const CycleState& cycle) const;
  // O(running tasks), no allocation (Score, for every GPU): sharing now at the current
  // slowdown (when a slot and memory are free), or alone from GpuState::projected_finish_ms;
  // the inflicted time of sharing is Σ_j kappa·demand·min(r_j, W / s_j) for co-runner j with
  // r_j isolated ms left at slowdown s_j and the task's wall time W.
  Placement Estimate(const Task& task, const GpuState& gpu, const CycleState& cycle) const;

 private:
  const LatencyOracle& oracle_;
  const HaseOptions options_;
};

}  // namespace hase::sched
