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

#include <cstdint>
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
  // Stage 1 through ClusterState's candidate index (RankPlugin) instead of scoring every GPU.
  // Same top_k as the sweep (tests/sched/hase_index_test.cc compares both on random states);
  // false: the sweep (kept as the reference).
  bool indexed = true;
};

class Policy;

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

  // UnfitAnywhere: no profile / too little memory. Unfit: reserved for another task and
  // backfilling not allowed, or busy now while allow_wait is false.
  FilterVerdict Filter(const Task& task, const GpuState& gpu,
                       const CycleState& cycle) const override;
  // Stage 1, 0–100.
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
  // Stage 2, plus the wait / reservation decision.
  Decision Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                  const std::vector<Candidate>& candidates) override;
  size_t SortedCandidatesNeeded() const override;
  // Stage 1 through the index (HaseOptions::indexed). Per class of interchangeable GPUs
  // (ClusterState::GpuClass) the cost C_g + w·I_g of a GPU is min(alone, sharing): alone is
  // max(now, projected finish) + isolated time, monotone in the projected finish, and sharing
  // costs at least now + isolated × Slowdown(GPU's total demand). So it evaluates exactly:
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
  // Score of a stage-1 cost (what Score returns for it).
  double ScoreOfCost(double cost, const CycleState& cycle) const;
  // Over the GPUs that pass Filter: whether any can start `task` now (*any), and the
  // lowest-id unreserved one that can (-1 if none). Uses `candidates` when they are complete,
  // else the index.
  void FitsNowSearch(const Task& task, const ClusterState& state, const CycleState& cycle,
                     const std::vector<Candidate>& candidates, bool* any, int* lowest) const;
  // The unreserved GPU passing Filter where `task` could start earliest (EarliestFitMs), ties
  // to the lower id; -1 if none. O(GPUs) timelines: only called when a reservation can be made.
  int EarliestStart(const Task& task, const ClusterState& state, const CycleState& cycle,
                    const std::vector<Candidate>& candidates, double* start) const;

  const LatencyOracle& oracle_;
  const HaseOptions options_;
  const int max_reservations_;
  std::vector<uint64_t> seen_;  // Rank: epoch stamp per GPU (no allocation per call)
  uint64_t epoch_ = 0;
  std::vector<double> heap_;    // Rank: the top_k smallest costs so far (max-heap)
};

}  // namespace hase::sched
