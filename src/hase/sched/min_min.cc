#include "hase/sched/min_min.h"

#include "hase/sched/basic_plugins.h"

namespace hase::sched {

std::unique_ptr<Policy> MakeMinMinPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                         bool max_min) {
  Policy::Options po;
  po.dispatch_on_arrival = false;
  po.one_idle_gpu_per_type = true;
  po.max_tasks_per_gpu = 1;
  po.claim_on_wait = true;
  po.max_queue_scan = 64;  // the batch is decided O(batch) times per event
  po.pass_order = max_min ? Policy::Options::PassOrder::kMaxMin : Policy::Options::PassOrder::kMinMin;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>(max_min ? "max-min" : "min-min", po, std::move(oracle));
  auto eft = std::make_shared<EarliestFinish>(o);
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  policy->AddScore(eft);
  policy->SetSelect(std::make_shared<EarliestFinishSelect>(eft, true));
  return policy;
}

}  // namespace hase::sched
