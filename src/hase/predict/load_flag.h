// ParseLoadFlag: the `--load` flag of `hase predict` (and any other command-line load).
//
//   "sm_active=0.6,dram_active=0.4"  →  LoadSnapshot{sm_active=0.6, dram_active=0.4}
//
// Keys are LoadSnapshot's field names (DCGM terms): sm_active, sm_occupancy, dram_active,
// pipe_tensor_active, gr_engine_active, gpu_util (fractions 0–1), fb_used_mib, fb_free_mib,
// sm_clock_mhz (≥ 0), age_s (≥ 0). Unnamed fields stay unset (std::nullopt), so the documented
// fallbacks apply (LoadSnapshot::EffectiveSmActive). "idle" or "" = LoadSnapshot::Idle().
#pragma once

#include <string_view>

#include "hase/base/status.h"
#include "hase/telemetry/load_snapshot.h"

namespace hase {

// Errors: InvalidArgument naming the bad item and the accepted keys (unknown key, missing '=',
// not a number, fraction outside 0–1, negative value, key given twice).
Result<LoadSnapshot> ParseLoadFlag(std::string_view text);

}  // namespace hase
