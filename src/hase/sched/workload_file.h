// Workload files: the queue of inference tasks, as YAML or CSV (schema in docs/scheduler.md,
// example in examples/workload.yaml).
//
// YAML:
//   tasks:
//     - name: t0                # optional, default "t<index>"
//       model: resnet50         # zoo name or ONNX path (required)
//       batch_size: 32          # default 1
//       input_size: 224         # square input side, default 224 (640 for yolo*)
//       num_batches: 200        # or samples: N (batches = ceil(N / batch_size)); default 1
//       arrival_s: 1.5          # seconds from the start, default 0
//       priority: 0             # higher first, default 0
//       memory_mib: 2048        # optional; derived from the model when absent
//       team: vision            # optional; the team it belongs to (team_config.h)
// CSV: a header row naming any of these columns (model required), one task per row.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/task.h"

namespace hase::sched {

// Parses YAML text. Task ids are their index; tasks are sorted by (arrival, index) then
// renumbered so that ids follow arrival order. Errors: Parse (FILE:LINE), InvalidArgument
// (missing model, batch_size/num_batches < 1, negative arrival; FILE:LINE).
Result<std::vector<Task>> ParseWorkloadYaml(std::string_view text, const std::string& where);
// Parses CSV text with a header. Errors: Parse / InvalidArgument with FILE:LINE.
Result<std::vector<Task>> ParseWorkloadCsv(std::string_view text, const std::string& where);
// Reads FILE and parses it as CSV when it ends in ".csv", else YAML.
Result<std::vector<Task>> LoadWorkloadFile(const std::string& path);

}  // namespace hase::sched
