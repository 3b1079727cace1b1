// LatencyTable: a sched::TableOracle read from a CSV of measured or hand-set numbers, for
// `hase serve --latency-table FILE` (operators with their own measurements; tests).
//
//   # model,gpu_type,per_batch_ms,demand,memory_mib      ('#' lines and blank lines skipped)
//   resnet50,A100-SXM4-40GB,10.5,0.8,2000
//   resnet50|8|224,T4,41,0.9,2400                          (model|batch|input: one shape only)
//
// A header row is allowed: this one (`model,gpu_type,...`) or that of `hase simulate`'s
// profiles.csv (model,batch_size,input_size,gpu_type,latency_ms,demand,memory_mib,runtime),
// whose rows are then read as model|batch_size|input_size keys.
// gpu_type is resolved by `resolve` (the hw catalog's name resolution) so "a100" or "Tesla T4"
// work; per_batch_ms > 0, demand in (0, 1], memory_mib >= 0.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hase/base/status.h"
#include "hase/sched/latency_oracle.h"

namespace hase::service {

// Errors: IO (unreadable), Parse (a malformed line; where = "FILE:LINE"), NotFound (an unknown
// GPU type; where = "FILE:LINE").
Result<std::shared_ptr<const sched::LatencyOracle>> LoadLatencyTable(
    const std::string& path, const std::function<std::optional<std::string>(std::string_view)>& resolve);

}  // namespace hase::service
