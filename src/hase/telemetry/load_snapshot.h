// LoadSnapshot: the background load on one GPU, in DCGM field terms.
//
// Filled from dcgm-exporter / Prometheus (service), from a `--load` flag (cli), or by the
// simulator (sim). Activity fields are fractions 0–1 averaged over the sample window, as DCGM
// reports them (DCGM_FI_PROF_* are ratios; GPU_UTIL is a percentage in DCGM and is stored here
// divided by 100). A field DCGM did not report is std::nullopt, never 0: SM_ACTIVE and
// SM_OCCUPANCY are off by default in dcgm-exporter (../shared/REFERENCE.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hase {

struct LoadSnapshot {
  std::optional<double> sm_active;           // DCGM_FI_PROF_SM_ACTIVE, 0–1
  std::optional<double> sm_occupancy;        // DCGM_FI_PROF_SM_OCCUPANCY, 0–1
  std::optional<double> dram_active;         // DCGM_FI_PROF_DRAM_ACTIVE, 0–1
  std::optional<double> pipe_tensor_active;  // DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, 0–1
  std::optional<double> gr_engine_active;    // DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0–1
  std::optional<double> gpu_util;            // DCGM_FI_DEV_GPU_UTIL / 100, 0–1
  std::optional<double> fb_used_mib;         // DCGM_FI_DEV_FB_USED, MiB
  std::optional<double> fb_free_mib;         // DCGM_FI_DEV_FB_FREE, MiB
  std::optional<double> sm_clock_mhz;        // DCGM_FI_DEV_SM_CLOCK, MHz
  double age_s = 0;  // seconds between the sample and the moment it is used

  // An idle GPU: every activity field 0, age 0.
  static LoadSnapshot Idle() {
    LoadSnapshot s;
    s.sm_active = s.sm_occupancy = s.dram_active = s.pipe_tensor_active = 0.0;
    s.gr_engine_active = s.gpu_util = 0.0;
    return s;
  }

  // SM activity with the documented fallbacks when SM_ACTIVE is off: GR_ENGINE_ACTIVE (time
  // the graphics/compute engine was busy, an upper bound of SM_ACTIVE), then GPU_UTIL (same
  // meaning at coarser resolution). 0 when none is known.
  double EffectiveSmActive() const {
    if (sm_active) return *sm_active;
    if (gr_engine_active) return *gr_engine_active;
    if (gpu_util) return *gpu_util;
    return 0.0;
  }
  // SM occupancy, falling back to EffectiveSmActive() × 0.5 (a warp-occupancy guess for
  // inference kernels; documented in docs/predictor.md) when SM_OCCUPANCY is off.
  double EffectiveSmOccupancy() const {
    if (sm_occupancy) return *sm_occupancy;
    return EffectiveSmActive() * 0.5;
  }
  double EffectiveDramActive() const { return dram_active.value_or(0.0); }
};

}  // namespace hase
