#include "hase/sched/fastest_gpu.h"

#include <algorithm>

#include "hase/sched/basic_plugins.h"

namespace hase::sched {

FastestGpu::FastestGpu(const Cluster& cluster) {
  double top = 0;
  for (const GpuType& t : cluster.types) top = std::max(top, t.peak_fp32_tflops);
  for (const GpuType& t : cluster.types) {
    score_by_type_.push_back(top > 0 ? 100.0 * t.peak_fp32_tflops / top : 100.0);
  }
}

double FastestGpu::Score(const Task&, const GpuState& gpu, const CycleState&) const {
  return score_by_type_.at(gpu.type);
}

std::unique_ptr<Policy> MakeFastestGpuPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                             const Cluster& cluster) {
  Policy::Options po;
  po.gang = GangRule::kFastest;  // k-GPU tasks: the fastest type with k GPUs on a node
  po.dispatch_on_arrival = false;
  po.one_idle_gpu_per_type = true;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("fastest-gpu", po, std::move(oracle));
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  policy->AddFilter(std::make_shared<FitsNowFilter>());
  policy->AddScore(std::make_shared<FastestGpu>(cluster));
  return policy;
}

}  // namespace hase::sched
