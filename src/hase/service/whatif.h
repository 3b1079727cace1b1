// WhatIf: a hypothetical change to a running daemon — GPUs added, nodes or GPUs drained, tasks
// submitted — and the plan of the whole queue the daemon's own policy would make with it
// (POST /v1/whatif, `hase simulate --from URL`).
//
// Daemon::PlanWhatIf (daemon_whatif.cc) copies the live state under its lock (running tasks with
// their remaining predicted work, bound tasks, reservations, live memory and background load,
// failed and drained GPUs), applies the change to the copy and plans it with BuildLivePlan —
// the code path of the live plan (GET /v1/queue), with the daemon's oracle and policy. Nothing
// is journalled and nothing live changes. The same snapshot is planned without the change too
// (the baseline), so the ETA difference is the change's alone, not time that passed.
//
// Request body (every field optional; {} plans the live state as it is):
//   {"add_gpus":[{"type":"A100-SXM4-40GB","count":4,"node":"new-0","max_tasks":4}],
//    "drain_nodes":["n3"], "drain_gpus":[3, "n2/1"],
//    "submit":[{"model":"resnet50","num_batches":100}, ...]}   (task bodies as POST /v1/tasks)
// add_gpus: `type` is a GPU type of the cluster or of the daemon's GPU catalog (any spelling
// the catalog accepts); `count` 1..kMaxWhatIfGpus (default 1); `node` a node of the cluster
// (the GPUs get the next indices there) or a new one (indices from 0; default "whatif-0");
// `max_tasks` the co-location limit (default: that of the cluster's GPUs of the type, else of
// GPU 0). A drain is the daemon's (DrainGpu without requeue): what runs there finishes, tasks
// bound to its local queue go back to the queue, nothing new starts there.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"
#include "hase/service/live_plan.h"
#include "hase/service/task_record.h"

namespace hase::service {

// Limits of one request (a clear 400 instead of a what-if that takes the daemon's memory).
inline constexpr int kMaxWhatIfGpus = 10000;    // GPUs added, in all
inline constexpr int kMaxWhatIfTasks = 100000;  // tasks submitted

struct WhatIfGpus {
  std::string type;           // GPU type name as the request gave it
  int count = 1;              // GPUs to add, >= 1
  std::string node = "whatif-0";
  int max_tasks = 0;          // co-location limit; 0 = the cluster's for the type (see above)
};

struct WhatIf {
  std::vector<WhatIfGpus> add_gpus;
  std::vector<std::string> drain_nodes;
  std::vector<std::string> drain_gpus;  // GPU ids ("3") or labels ("n2/1", Cluster::GpuLabel)
  std::vector<TaskSpec> submit;         // as POST /v1/tasks decodes them
  bool empty() const { return add_gpus.empty() && drain_nodes.empty() && drain_gpus.empty() && submit.empty(); }
};

// Decodes a request body. Errors: InvalidArgument naming the field (not an object, an unknown
// field, a wrong type, count out of range, a limit above exceeded, a bad task body: its index).
Result<WhatIf> WhatIfFromJson(const nlohmann::json& j);
// The inverse (the CLI builds its request with it).
nlohmann::json WhatIfToJson(const WhatIf& w);

// What a what-if answered.
struct WhatIfResult {
  std::shared_ptr<const LiveQueuePlan> plan;      // with the change
  std::shared_ptr<const LiveQueuePlan> baseline;  // the same snapshot without it
  std::vector<PlanGpu> added;      // the GPUs added (their ids in `plan`)
  std::vector<PlanGpu> drained;    // the GPUs drained (already failed or drained ones included)
  std::vector<int64_t> submitted;  // ids the submitted tasks got in `plan` (after the daemon's)
  std::vector<int64_t> requeued;   // bound tasks a drain put back in the queue
  std::map<int64_t, std::string> placed_models;  // running and bound task id → model
};

// POST /v1/whatif's answer: QueuePlanJson(plan) (same fields as GET /v1/queue; a submitted
// task's row has "whatif": true, a re-queued one "requeued": true) plus
// "placed" entries gain "model";
//   "whatif": {"added_gpus":[PlanGpu], "drained_gpus":[PlanGpu], "submitted":[ids],
//              "requeued":[ids], "baseline_eta_s", "baseline_eta", "eta_change_s"}.
nlohmann::json WhatIfJson(const WhatIfResult& r);

}  // namespace hase::service
