#include "hase/telemetry/dcgm_fields.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace hase::telemetry {

bool IsDcgmBlank(double value) {
  if (std::isnan(value)) return true;
  if (value >= kDcgmInt32Blank && value <= kDcgmInt32Max) return true;
  if (value == kUint32Max) return true;
  return value >= kDcgmFp64Blank;
}

int DcgmFieldIndex(std::string_view name) {
  for (size_t i = 0; i < std::size(kDcgmLoadFields); ++i) {
    if (kDcgmLoadFields[i] == name) return static_cast<int>(i);
  }
  return -1;
}

bool SetDcgmField(LoadSnapshot& snap, std::string_view name, double value) {
  if (IsDcgmBlank(value) || std::isinf(value)) return false;
  auto ratio = [&](std::optional<double>& field) {
    if (value < -0.01 || value > 1.01) return false;
    field = std::clamp(value, 0.0, 1.0);
    return true;
  };
  auto non_negative = [&](std::optional<double>& field) {
    if (value < 0 || value >= kDcgmInt32Blank) return false;
    field = value;
    return true;
  };
  if (name == kDcgmSmActive) return ratio(snap.sm_active);
  if (name == kDcgmSmOccupancy) return ratio(snap.sm_occupancy);
  if (name == kDcgmDramActive) return ratio(snap.dram_active);
  if (name == kDcgmPipeTensorActive) return ratio(snap.pipe_tensor_active);
  if (name == kDcgmGrEngineActive) return ratio(snap.gr_engine_active);
  if (name == kDcgmGpuUtil) {
    if (value < 0 || value > 100.5) return false;
    snap.gpu_util = std::min(value / 100.0, 1.0);
    return true;
  }
  if (name == kDcgmFbUsed) return non_negative(snap.fb_used_mib);
  if (name == kDcgmFbFree) return non_negative(snap.fb_free_mib);
  if (name == kDcgmSmClock) return non_negative(snap.sm_clock_mhz);
  return false;
}

}  // namespace hase::telemetry
