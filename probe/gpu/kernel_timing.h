// `hase-probe kernels`: times every kernel of one or more KernelLists under each background
// load of a schedule and writes training-set rows, whole-model timings and load readings.
//
// For each load level: start the stressor process (unless idle), wait settle_ms, then per
// model: sample NVML every sample_ms while timing each kernel (warm-up, then reps launches, each
// between CUDA events; inputs already on the device) and the whole model twice — all kernels
// back to back on one stream, and as one CUDA graph — then stop the stressor.
#pragma once

#include <string>

#include "hase/base/status.h"
#include "probe_options.h"

namespace hase::probe::gpu {

// `self_exe` is this program's path (the stressor is `self_exe stress LEVEL`).
// Errors: IO (a file), InvalidArgument/Parse (a kernels JSON), NotFound (no GPU), Internal.
Status RunKernelTiming(const ProbeOptions& options, const std::string& self_exe);

}  // namespace hase::probe::gpu
