#include "hase/sched/random_policy.h"

#include <algorithm>

#include "hase/sched/basic_plugins.h"

namespace hase::sched {

Decision RandomSelect::Select(const Task&, const ClusterState& state, const CycleState&,
                              const std::vector<Candidate>& candidates) {
  // Candidates arrive sorted by score (all 0 here), i.e. by GPU id: a stable order to draw from.
  Decision d;
  d.kind = Decision::Kind::kBind;
  d.gpu = candidates[rng_() % candidates.size()].gpu;
  d.start_ms = state.now_ms;
  return d;
}

std::unique_ptr<Policy> MakeRandomPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                         uint64_t seed) {
  Policy::Options po;
  po.gang = GangRule::kRefuse;  // places each task on one GPU (gang.h)
  po.dispatch_on_arrival = true;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("random", po, std::move(oracle));
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  policy->SetSelect(std::make_shared<RandomSelect>(seed));
  return policy;
}

}  // namespace hase::sched
