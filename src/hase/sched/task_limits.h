// The range of every numeric task field, one rule set for workload files (workload_file.h)
// and the REST API (service/task_json.h). Bounds are far beyond any real inference task and
// keep every product the cost model and the simulator form (batch × dims × bytes, batches ×
// latency, samples + batch) inside int64 / double precision: a value outside is an
// InvalidArgument naming the field, never a wrapped number journalled for later.
#pragma once

#include <cstdint>
#include <string>

#include "hase/base/status.h"

namespace hase::sched {

struct TaskFieldRange {
  const char* field;  // name as in workload files and the REST API
  double min, max;    // inclusive
  const char* unit;   // for the message
};

inline constexpr TaskFieldRange kTaskFieldRanges[] = {
    {"batch_size", 1, 1 << 20, "samples"},                   // 1 M samples per batch
    {"input_size", 1, 1 << 16, "pixels"},                    // 65 536 px per side
    {"num_batches", 1, 1e12, "batches"},
    {"samples", 1, 1e15, "samples"},
    {"priority", -1e6, 1e6, ""},
    {"memory_mib", 0, 1 << 24, "MiB"},                       // 16 TiB
    {"arrival_s", 0, 1e9, "s"},                              // ~31 years
    {"gpus", 1, 1024, "GPUs"},
    {"parallel_efficiency", 0.01, 1, ""},                    // fraction of linear speed-up
};

// OK when `value` is finite and inside the range of `field` (fields without a range: OK).
// Errors: InvalidArgument "<field> must be between MIN and MAX UNIT" at `where`.
Status CheckTaskField(const std::string& field, double value, const std::string& where);

}  // namespace hase::sched
