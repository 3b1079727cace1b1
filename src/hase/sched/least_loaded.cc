#include "hase/sched/least_loaded.h"

#include "hase/sched/basic_plugins.h"

namespace hase::sched {

double LeastLoaded::Score(const Task&, const GpuState& gpu, const CycleState&) const {
  return 100.0 / (1.0 + static_cast<double>(gpu.running.size() + gpu.queued.size()));
}

std::unique_ptr<Policy> MakeLeastLoadedPolicy(std::shared_ptr<const LatencyOracle> oracle) {
  Policy::Options po;
  po.gang = GangRule::kRefuse;  // places each task on one GPU (gang.h)
  po.dispatch_on_arrival = true;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("least-loaded", po, std::move(oracle));
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  policy->AddScore(std::make_shared<LeastLoaded>());
  return policy;
}

}  // namespace hase::sched
