#include "hase/hw/l2_residency.h"

#include <algorithm>

namespace hase {

double L2HitFraction(double l2_mib, double working_set_bytes) {
  if (l2_mib <= 0) return 0.0;
  if (working_set_bytes <= 0) return 1.0;
  const double usable_bytes = kL2UsableFraction * l2_mib * 1048576.0;
  return std::clamp(usable_bytes / working_set_bytes, 0.0, 1.0);
}

double MemoryTimeMs(const MicrobenchmarkProfile& profile, double l2_mib, double reread_bytes,
                    double dram_bytes, double efficiency) {
  const double dram = profile.dram_bandwidth_gbps * efficiency * 1e6;  // B/ms
  if (dram <= 0) return 0.0;
  const double l2 = std::max(profile.l2_bandwidth_gbps * efficiency * 1e6, dram);
  reread_bytes = std::max(reread_bytes, 0.0);
  dram_bytes = std::max(dram_bytes, 0.0);
  const double hit = L2HitFraction(l2_mib, reread_bytes + dram_bytes);
  return reread_bytes * (hit / l2 + (1.0 - hit) / dram) + dram_bytes / dram;
}

}  // namespace hase
