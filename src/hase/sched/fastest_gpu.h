// `fastest-gpu`: waiting tasks start on the GPU of the type with the highest datasheet FP32
// peak (GpuType::peak_fp32_tflops) among those that can start them now; static specs only,
// no latency prediction and no interference. Tasks wait in the central queue when nothing
// fits now.
#pragma once

#include <memory>

#include "hase/sched/policy.h"

namespace hase::sched {

// Score = 100 × peak_fp32_tflops(type) / max over types.
class FastestGpu final : public ScorePlugin {
 public:
  explicit FastestGpu(const Cluster& cluster);
  std::string_view Name() const override { return "FastestGpu"; }
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;

 private:
  std::vector<double> score_by_type_;
};

std::unique_ptr<Policy> MakeFastestGpuPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                             const Cluster& cluster);

}  // namespace hase::sched
