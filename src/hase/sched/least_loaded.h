// `least-loaded`: each arriving task goes to the GPU with the fewest running + queued tasks
// (ties: lower GPU id) among those that could ever host it. Load-aware, speed-blind.
#pragma once

#include <memory>

#include "hase/sched/policy.h"

namespace hase::sched {

// Score = 100 / (1 + running + queued).
class LeastLoaded final : public ScorePlugin {
 public:
  std::string_view Name() const override { return "LeastLoaded"; }
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
};

std::unique_ptr<Policy> MakeLeastLoadedPolicy(std::shared_ptr<const LatencyOracle> oracle);

}  // namespace hase::sched
