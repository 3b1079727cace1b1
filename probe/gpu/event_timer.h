// Times work on one CUDA stream with CUDA events: what the GPU does, not what the host waits.
#pragma once

#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "hase/base/status.h"

namespace hase::probe::gpu {

// Runs `launch` `warmup` times untimed, then `reps` times, each between two events recorded on
// `stream`; synchronises once at the end and returns the reps' elapsed times in ms (event
// resolution about 0.5 µs). Launches are enqueued back to back, so each rep measures the GPU's
// execution of that launch, not host dispatch. Errors: the first failing launch's Status, or
// Internal for a CUDA failure.
Result<std::vector<double>> TimeOnStream(cudaStream_t stream, int warmup, int reps,
                                         const std::function<Status()>& launch);

}  // namespace hase::probe::gpu
