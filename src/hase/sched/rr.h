// `rr`: round robin, the HASE paper's baseline. Each arriving task is bound to the next GPU
// in a fixed cycle (GPU id order) that could ever host it, ignoring speed and load; it joins
// that GPU's local queue when the GPU is busy.
#pragma once

#include <memory>

#include "hase/sched/policy.h"

namespace hase::sched {

// Score = 100 for the GPU at the cursor, falling linearly with the cyclic distance from it;
// Bind moves the cursor past the chosen GPU.
class RoundRobin final : public ScorePlugin, public BindPlugin {
 public:
  explicit RoundRobin(int num_gpus) : num_gpus_(num_gpus) {}
  std::string_view Name() const override { return "RoundRobin"; }
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
  void Bind(const Task& task, const Decision& decision, const CycleState& cycle,
            ClusterState& state) override;

 private:
  const int num_gpus_;
  int cursor_ = 0;  // the next GPU id in the cycle
};

std::unique_ptr<Policy> MakeRoundRobinPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                             int num_gpus);

}  // namespace hase::sched
