#include "dcgm_fields.h"

namespace hase::probe {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::optional<double> Scale(const std::optional<double>& v, double factor) {
  if (!v) return std::nullopt;
  return *v * factor;
}

// Every optional field of NvmlReading, for averaging.
std::vector<std::optional<double> NvmlReading::*> Fields() {
  return {&NvmlReading::gpu_util_pct,          &NvmlReading::mem_copy_util_pct,
          &NvmlReading::fb_used_bytes,         &NvmlReading::fb_free_bytes,
          &NvmlReading::sm_clock_mhz,          &NvmlReading::gpm_graphics_util_pct,
          &NvmlReading::gpm_sm_util_pct,       &NvmlReading::gpm_sm_occupancy_pct,
          &NvmlReading::gpm_any_tensor_util_pct, &NvmlReading::gpm_dram_bw_util_pct};
}

}  // namespace

LoadSnapshot ToLoadSnapshot(const NvmlReading& r) {
  LoadSnapshot s;
  s.sm_active = Scale(r.gpm_sm_util_pct, 0.01);
  s.sm_occupancy = Scale(r.gpm_sm_occupancy_pct, 0.01);
  s.dram_active = Scale(r.gpm_dram_bw_util_pct, 0.01);
  s.pipe_tensor_active = Scale(r.gpm_any_tensor_util_pct, 0.01);
  s.gr_engine_active = Scale(r.gpm_graphics_util_pct, 0.01);
  s.gpu_util = Scale(r.gpu_util_pct, 0.01);
  s.fb_used_mib = Scale(r.fb_used_bytes, 1.0 / kMiB);
  s.fb_free_mib = Scale(r.fb_free_bytes, 1.0 / kMiB);
  s.sm_clock_mhz = r.sm_clock_mhz;
  return s;
}

NvmlReading AverageReadings(std::span<const NvmlReading> readings) {
  NvmlReading avg;
  if (readings.empty()) return avg;
  double t = 0;
  for (const auto& r : readings) t += r.t_s;
  avg.t_s = t / static_cast<double>(readings.size());
  for (auto field : Fields()) {
    double sum = 0;
    int n = 0;
    for (const auto& r : readings) {
      if (r.*field) {
        sum += *(r.*field);
        ++n;
      }
    }
    if (n > 0) avg.*field = sum / n;
  }
  return avg;
}

const std::vector<std::string>& DcgmFieldNames() {
  static const std::vector<std::string> kNames = {
      "DCGM_FI_PROF_SM_ACTIVE",         "DCGM_FI_PROF_SM_OCCUPANCY",
      "DCGM_FI_PROF_DRAM_ACTIVE",       "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE",  "DCGM_FI_DEV_GPU_UTIL",
      "DCGM_FI_DEV_MEM_COPY_UTIL",      "DCGM_FI_DEV_FB_USED",
      "DCGM_FI_DEV_FB_FREE",            "DCGM_FI_DEV_SM_CLOCK"};
  return kNames;
}

std::vector<std::optional<double>> DcgmValues(const NvmlReading& r) {
  return {Scale(r.gpm_sm_util_pct, 0.01),        Scale(r.gpm_sm_occupancy_pct, 0.01),
          Scale(r.gpm_dram_bw_util_pct, 0.01),   Scale(r.gpm_any_tensor_util_pct, 0.01),
          Scale(r.gpm_graphics_util_pct, 0.01),  r.gpu_util_pct,
          r.mem_copy_util_pct,                   Scale(r.fb_used_bytes, 1.0 / kMiB),
          Scale(r.fb_free_bytes, 1.0 / kMiB),    r.sm_clock_mhz};
}

}  // namespace hase::probe
