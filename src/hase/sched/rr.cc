#include "hase/sched/rr.h"

#include "hase/sched/basic_plugins.h"

namespace hase::sched {

double RoundRobin::Score(const Task&, const GpuState& gpu, const CycleState&) const {
  const int distance = ((gpu.id - cursor_) % num_gpus_ + num_gpus_) % num_gpus_;
  return 100.0 * (1.0 - static_cast<double>(distance) / num_gpus_);
}

void RoundRobin::Bind(const Task& task, const Decision& decision, const CycleState& cycle,
                      ClusterState& state) {
  DefaultBind().Bind(task, decision, cycle, state);
  cursor_ = (decision.gpu + 1) % num_gpus_;
}

std::unique_ptr<Policy> MakeRoundRobinPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                             int num_gpus) {
  Policy::Options po;
  po.gang = GangRule::kRefuse;  // places each task on one GPU (gang.h)
  po.dispatch_on_arrival = true;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("rr", po, std::move(oracle));
  auto rr = std::make_shared<RoundRobin>(num_gpus);
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  policy->AddScore(rr);
  policy->SetBind(rr);
  return policy;
}

}  // namespace hase::sched
