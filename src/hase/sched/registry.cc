#include "hase/sched/registry.h"

#include <fmt/format.h>

#include "hase/sched/eft.h"
#include "hase/sched/eft_share.h"
#include "hase/sched/fastest_gpu.h"
#include "hase/sched/gavel_like.h"
#include "hase/sched/least_loaded.h"
#include "hase/sched/min_min.h"
#include "hase/sched/random_policy.h"
#include "hase/sched/rr.h"

namespace hase::sched {

std::map<std::string, PolicyFactory> PolicyRegistry() {
  using R = Result<std::unique_ptr<Policy>>;
  return {
      {"rr", [](const PolicyConfig& c) -> R {
         return MakeRoundRobinPolicy(c.oracle, static_cast<int>(c.cluster->gpus.size()));
       }},
      {"random", [](const PolicyConfig& c) -> R { return MakeRandomPolicy(c.oracle, c.seed); }},
      {"least-loaded", [](const PolicyConfig& c) -> R { return MakeLeastLoadedPolicy(c.oracle); }},
      {"fastest-gpu",
       [](const PolicyConfig& c) -> R { return MakeFastestGpuPolicy(c.oracle, *c.cluster); }},
      {"gavel-like", [](const PolicyConfig& c) -> R { return MakeGavelLikePolicy(c.oracle); }},
      {"eft", [](const PolicyConfig& c) -> R { return MakeEftPolicy(c.oracle); }},
      {"eft-share", [](const PolicyConfig& c) -> R { return MakeEftSharePolicy(c.oracle); }},
      {"min-min", [](const PolicyConfig& c) -> R { return MakeMinMinPolicy(c.oracle, false); }},
      {"max-min", [](const PolicyConfig& c) -> R { return MakeMinMinPolicy(c.oracle, true); }},
      {"hase",
       [](const PolicyConfig& c) -> R {
         return MakeHasePolicy(c.oracle, c.hase, c.max_reservations);
       }},
  };
}

std::vector<std::string> PolicyNames() {
  return {"rr",  "random",  "least-loaded", "fastest-gpu", "gavel-like",
          "eft", "eft-share", "min-min", "max-min", "hase"};
}

Result<std::unique_ptr<Policy>> MakePolicy(const std::string& name, const PolicyConfig& config) {
  if (!config.oracle || !config.cluster) {
    return Status::InvalidArgument("policy config needs an oracle and a cluster", name);
  }
  const auto registry = PolicyRegistry();
  auto it = registry.find(name);
  if (it == registry.end()) {
    return Status::NotFound(fmt::format("unknown policy '{}'", name), "--policy",
                            fmt::format("use one of: {}", fmt::join(PolicyNames(), ", ")));
  }
  return it->second(config);
}

}  // namespace hase::sched
