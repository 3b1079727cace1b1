#include "hase/telemetry/mig_match.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace hase::telemetry {
namespace {

std::string Canonical(std::string_view name) {
  std::string s(name);
  if (s.size() > 4 && (s.rfind("MIG ", 0) == 0 || s.rfind("mig ", 0) == 0)) s = s.substr(4);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

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
          Canonical(seen[s].mig_profile) == Canonical(declared[d].profile)) {
        m.declared_to_seen[d] = s;
        taken[s] = true;
        break;
      }
    }
  }
  for (size_t d = 0; d < declared.size(); ++d) {
    if (declared[d].gpu_instance >= 0) continue;
    const std::string want = Canonical(declared[d].profile);
    for (int s : order) {
      if (!taken[s] && Canonical(seen[s].mig_profile) == want) {
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
