#include "hase/sched/gavel_like.h"

#include "hase/sched/basic_plugins.h"

namespace hase::sched {

double GavelThroughput::Score(const Task&, const GpuState& gpu, const CycleState& cycle) const {
  const Result<TaskProfile>& p = cycle.profile[gpu.type];
  if (!p.ok() || p->isolated_ms <= 0) return 0;
  return 100.0 * cycle.best_isolated_ms / p->isolated_ms;
}

std::unique_ptr<Policy> MakeGavelLikePolicy(std::shared_ptr<const LatencyOracle> oracle) {
  Policy::Options po;
  po.gang = GangRule::kRefuse;  // places each task on one GPU (gang.h)
  po.dispatch_on_arrival = false;
  po.one_idle_gpu_per_type = true;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("gavel-like", po, std::move(oracle));
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  policy->AddFilter(std::make_shared<FitsNowFilter>());
  policy->AddScore(std::make_shared<GavelThroughput>());
  return policy;
}

}  // namespace hase::sched
