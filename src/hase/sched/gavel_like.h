// `gavel-like`: Gavel's heterogeneity awareness (Narayanan et al., OSDI 2020) without its
// time-sliced allocation: a static throughput matrix — the task's isolated throughput on each
// GPU type (1 / TaskProfile::isolated_ms), normalised by its best type — and no live load or
// interference. Waiting tasks start on the GPU with the highest normalised throughput among
// those that can start them now; otherwise they wait in the central queue.
#pragma once

#include <memory>

#include "hase/sched/policy.h"

namespace hase::sched {

// Score = 100 × best isolated time / isolated time on this GPU's type.
class GavelThroughput final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "GavelThroughput"; }
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
};

std::unique_ptr<Policy> MakeGavelLikePolicy(std::shared_ptr<const LatencyOracle> oracle);

}  // namespace hase::sched
