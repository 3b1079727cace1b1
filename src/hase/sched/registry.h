// The policy registry: one function maps a policy name to the factory that builds its plugin
// list (after kube-scheduler's plugins/registry.go). Nothing self-registers.
//
//   rr            round robin over GPUs that can host the task (the paper's baseline)
//   random        a uniformly random GPU that can host the task (seeded)
//   least-loaded  the GPU with the fewest running + queued tasks
//   fastest-gpu   the GPU of the highest-peak-FLOP/s type that can start the task now
//   gavel-like    Gavel's throughput matrix: best isolated throughput share, no live load
//   eft           online earliest finish: on arrival, the GPU of the earliest predicted end
//   min-min       batch mode: the task with the smallest minimum completion time first
//   max-min       batch mode: the task with the largest minimum completion time first
//   hase          two-stage greedy + reservations + EASY backfilling (docs/scheduler.md)
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/hase_policy.h"
#include "hase/sched/policy.h"

namespace hase::sched {

struct PolicyConfig {
  std::shared_ptr<const LatencyOracle> oracle;  // required
  const Cluster* cluster = nullptr;              // required; must outlive the policy
  int max_reservations = 1;                      // for `hase` (1 = EASY)
  uint64_t seed = 1;                             // for `random`
  HaseOptions hase;                              // for `hase`
};

using PolicyFactory = std::function<Result<std::unique_ptr<Policy>>(const PolicyConfig&)>;

// name → factory, in the order above.
std::map<std::string, PolicyFactory> PolicyRegistry();
// The names, in the order listed above ("rr" first: improvements are reported against it).
std::vector<std::string> PolicyNames();
// Builds the policy `name`. NotFound (listing the valid names) for an unknown name;
// InvalidArgument when config.oracle or config.cluster is null.
Result<std::unique_ptr<Policy>> MakePolicy(const std::string& name, const PolicyConfig& config);

}  // namespace hase::sched
