// Load readings from NVML (and NVML GPM on Hopper and later) expressed as DCGM fields.
//
// NVML is what every NVIDIA driver ships; DCGM is what a cluster scrapes (dcgm-exporter). The
// probe reads NVML and writes the DCGM field each reading corresponds to, in DCGM's own units,
// so that probe data and live telemetry line up (../shared/REFERENCE.md, DCGM field IDs):
//   NVML GPM GRAPHICS_UTIL   (%)  → DCGM_FI_PROF_GR_ENGINE_ACTIVE   (ratio 0–1)
//   NVML GPM SM_UTIL         (%)  → DCGM_FI_PROF_SM_ACTIVE          (ratio 0–1)
//   NVML GPM SM_OCCUPANCY    (%)  → DCGM_FI_PROF_SM_OCCUPANCY       (ratio 0–1)
//   NVML GPM ANY_TENSOR_UTIL (%)  → DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (ratio 0–1)
//   NVML GPM DRAM_BW_UTIL    (%)  → DCGM_FI_PROF_DRAM_ACTIVE        (ratio 0–1)
//   nvmlDeviceGetUtilizationRates .gpu / .memory (%) → DCGM_FI_DEV_GPU_UTIL /
//                                                     DCGM_FI_DEV_MEM_COPY_UTIL (%)
//   nvmlDeviceGetMemoryInfo used / free (bytes)      → DCGM_FI_DEV_FB_USED / _FREE (MiB)
//   nvmlDeviceGetClockInfo(NVML_CLOCK_SM) (MHz)      → DCGM_FI_DEV_SM_CLOCK (MHz)
// GPM (GPU performance monitoring) exists on Hopper and later only; before it the DCGM_FI_PROF_*
// fields stay empty (std::nullopt), never 0.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hase/telemetry/load_snapshot.h"

namespace hase::probe {

// NVML readings at one instant; the GPM values cover the interval since the previous sample.
struct NvmlReading {
  double t_s = 0;  // seconds since the sampler started
  std::optional<double> gpu_util_pct;       // 0–100
  std::optional<double> mem_copy_util_pct;  // 0–100
  std::optional<double> fb_used_bytes;
  std::optional<double> fb_free_bytes;
  std::optional<double> sm_clock_mhz;
  std::optional<double> gpm_graphics_util_pct;    // 0–100
  std::optional<double> gpm_sm_util_pct;          // 0–100
  std::optional<double> gpm_sm_occupancy_pct;     // 0–100
  std::optional<double> gpm_any_tensor_util_pct;  // 0–100
  std::optional<double> gpm_dram_bw_util_pct;     // 0–100
};

// The reading as hase's LoadSnapshot (fractions 0–1, MiB, MHz; see load_snapshot.h).
LoadSnapshot ToLoadSnapshot(const NvmlReading& r);

// Field-wise mean over `readings` of every field at least one reading has; a field no reading
// has stays empty. t_s is the mean time. An empty span gives an empty reading.
NvmlReading AverageReadings(std::span<const NvmlReading> readings);

// DCGM field names, in the column order DcgmValues() uses.
const std::vector<std::string>& DcgmFieldNames();

// The reading's values under DcgmFieldNames(), in DCGM units (PROF ratios 0–1, UTIL %, MiB,
// MHz); std::nullopt where NVML gave nothing.
std::vector<std::optional<double>> DcgmValues(const NvmlReading& r);

}  // namespace hase::probe
