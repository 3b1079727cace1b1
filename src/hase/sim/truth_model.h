// TruthModel: what the simulator believes really happens when a task runs.
//
// Kept apart from the policies' LatencyOracle so that prediction error shows in the results.
// A task i on a GPU of type g with co-runners S progresses at 1 / s_i of its true isolated
// speed, where
//     s_i = Slowdown(i, u_i, {(j, u_j) : j ∈ S}, background, g)
// whose default is the ContentionModel's s(u_i, background + Σ_j u_j) (contention_model.h). Implementations:
// AnalyticTruth (analytic_truth.h: the oracle's prediction perturbed by a seeded error) and
// TableTruth (table_truth.h: measured latencies and pairwise slowdowns from a CSV file).
#pragma once

#include <utility>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/sched/contention_model.h"
#include "hase/sched/task.h"

namespace hase::sim {

struct TrueProfile {
  double isolated_ms = 0;  // true runtime of the whole task alone on the type, ms, > 0
  double demand = 1.0;     // true fraction 0–1 of the GPU it keeps busy alone
};

// Thread-safety: const calls must be safe concurrently.
class TruthModel {
 public:
  virtual ~TruthModel() = default;
  // "analytic", "table:FILE".
  virtual std::string Name() const = 0;
  // Errors: NotFound when the model has no value for (task, type).
  virtual Result<TrueProfile> Profile(const sched::Task& task, const sched::GpuType& type) const = 0;
  // Co-runners of a task: each with its true demand (0–1).
  using CoRunners = std::vector<std::pair<const sched::Task*, double>>;
  // The slowdown factor (>= 1) of `victim` (true demand `victim_demand`) beside `others` and a
  // background of SM activity `background` (0–1) on `type`.
  virtual double Slowdown(const sched::Task& victim, double victim_demand,
                          const CoRunners& others, double background,
                          const sched::GpuType& type) const = 0;
  virtual const sched::ContentionModel& contention() const = 0;
};

}  // namespace hase::sim
