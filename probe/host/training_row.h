// Training-set rows: one timed kernel as a row of hase's canonical kernel training-data CSV
// (docs/training-data.md, schema "hase-kernels 1", source = "probe").
//
// Shape columns come from the KernelPlan (what was launched); flops and bytes from the Kernel's
// cost model; load columns from the NVML/GPM readings averaged over the timing window (empty
// when NVML gave nothing). Extra columns the schema allows (readers ignore unknown columns):
// model, batch, kernel_index, kernel_type, impl, load_level, repeats, p10_ms, p90_ms, stddev_ms.
// Rows whose launch only approximates the op carry the flag `probe_approx` (excluded from
// training by default, docs/training-data.md).
#pragma once

#include <string>
#include <vector>

#include "dcgm_fields.h"
#include "kernel_plan.h"
#include "stats.h"

namespace hase::probe {

// The first line of a probe training CSV ("# schema: hase-kernels 1").
inline constexpr char kTrainingSchemaComment[] = "# schema: hase-kernels 1";

struct TimedKernel {
  std::string model;       // model the kernel came from (KernelList::model)
  int64_t batch = 1;       // KernelList::batch
  std::string gpu;         // GPU name as CUDA reports it ("NVIDIA H200"); the catalog resolves it
  std::string load_level;  // StressLevel::Name() of the background load ("idle", "sm=0.5")
  const Kernel* kernel = nullptr;
  const KernelPlan* plan = nullptr;
  Summary latency_ms;      // over the timed repetitions
  NvmlReading load;        // background load, averaged over the timing window
};

// Column names in output order.
const std::vector<std::string>& TrainingHeader();

// The row for `t`, aligned with TrainingHeader(). REQUIRES: t.kernel and t.plan set.
std::vector<std::string> TrainingRow(const TimedKernel& t);

}  // namespace hase::probe
