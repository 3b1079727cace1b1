// The stressor process body (`hase-probe stress LEVEL`): holds one StressLevel
// (stress_level.h) on a GPU until told to stop.
#pragma once

#include <atomic>

#include "hase/base/status.h"
#include "stress_level.h"

namespace hase::probe::gpu {

// Starts one host thread per pressure (SM spin, DRAM streaming, tensor GEMMs), each with its own
// stream and (for GEMMs) cuBLAS handle, prints "ready" on stdout once every pressure has
// completed one launch, then runs until `stop` becomes true or duration_s (> 0) passes.
// Errors: NotFound (no such device), Internal (CUDA/cuBLAS failure).
Status RunStressor(int device, const StressLevel& level, double duration_s,
                   const std::atomic<bool>& stop);

}  // namespace hase::probe::gpu
