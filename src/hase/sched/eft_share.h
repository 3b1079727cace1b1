// `eft-share`: online earliest finish with co-location. On arrival a task is sent to the GPU
// where the oracle predicts it finishes earliest *counting sharing*: its completion on each GPU
// is read off PredictTimeline (timeline.h) with the task added now — it starts beside what runs
// there when a slot and memory are free, slowed by the ContentionModel, else behind the GPU's
// queue. No reservations, no backfilling, no look at the harm done to co-runners. The simplest
// rule that co-locates with hase's own predictions: on workloads where sharing pays (light,
// host-bound inference) hase must beat it, as it must beat `eft` where it does not.
#pragma once

#include <memory>

#include "hase/sched/policy.h"

namespace hase::sched {

// Score = 100 × (now + fastest isolated time) / predicted completion with the task added.
// O(tasks on the GPU²) per GPU (one PredictTimeline).
class EarliestFinishSharing final : public ScorePlugin {
 public:
  explicit EarliestFinishSharing(const LatencyOracle& oracle) : oracle_(oracle) {}
  std::string_view Name() const override { return "EarliestFinishSharing"; }
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
  // Predicted (start, completion) of `task` added to `gpu` now, ms.
  std::pair<double, double> StartEndMs(const Task& task, const GpuState& gpu,
                                       const CycleState& cycle) const;

 private:
  const LatencyOracle& oracle_;
};

std::unique_ptr<Policy> MakeEftSharePolicy(std::shared_ptr<const LatencyOracle> oracle);

}  // namespace hase::sched
