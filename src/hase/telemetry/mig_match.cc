#include "hase/telemetry/mig_match.h"

#include <algorithm>
#include <numeric>

#include "hase/hw/mig_profile.h"

namespace hase::telemetry {

MigMatch MatchMigInstances(std::span<const MigInstanceDecl> declared,
                           std::span<const GpuObservation> seen) {
  MigMatch m;
  m.declared_to_seen.assign(declared.size(), -1);
  std::vector<int> order(seen.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return seen[a].key.gpu_instance < seen[b].key.gpu_instance;
  });
  std::vector<bool> taken(seen.size(), false);
  for (size_t d = 0; d < declared.size(); ++d) {
    if (declared[d].gpu_instance < 0) continue;
    for (int s : order) {
      if (!taken[s] && seen[s].key.gpu_instance == declared[d].gpu_instance &&
          CanonicalMigProfileName(seen[s].mig_profile) ==
              CanonicalMigProfileName(declared[d].profile)) {
        m.declared_to_seen[d] = s;
        taken[s] = true;
        break;
      }
    }
  }
  for (size_t d = 0; d < declared.size(); ++d) {
    if (declared[d].gpu_instance >= 0) continue;
    const std::string want = CanonicalMigProfileName(declared[d].profile);
    for (int s : order) {
      if (!taken[s] && CanonicalMigProfileName(seen[s].mig_profile) == want) {
        m.declared_to_seen[d] = s;
        taken[s] = true;
        break;
      }
    }
  }
  for (int s : order) {
    if (!taken[s]) m.undeclared.push_back(s);
  }
  return m;
}

}  // namespace hase::telemetry
