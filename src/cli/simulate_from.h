// `hase simulate --from URL` (or --from-state DIR): a what-if against a running `hase serve` — POST /v1/whatif with
// GPUs added (--add-gpus TYPE:COUNT[@NODE]), nodes or GPUs drained (--drain-node, --drain-gpu)
// and a workload's tasks submitted (--workload FILE), printed as `hase queue` prints the live
// plan (or --format json: the daemon's answer). Nothing changes on the daemon.
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/objective.h"
#include "hase/service/whatif.h"

namespace hase::cli {

struct SimulateFromFlags {
  std::string url;                      // --from
  std::string token_file;               // --token-file
  std::vector<std::string> add_gpus;    // --add-gpus TYPE:COUNT[@NODE], repeatable
  std::vector<std::string> drain_nodes;  // --drain-node N, repeatable
  std::vector<std::string> drain_gpus;  // --drain-gpu ID|NODE/INDEX, repeatable
  std::string workload;                 // --workload FILE: its tasks are submitted
  std::string format = "table";         // --format table|json
  // --from-state DIR (offline, instead of --from): a stopped daemon's --state directory.
  std::string state_dir;
  std::string cluster;    // --config/--cluster: the daemon's cluster file (required with it)
  std::string catalog;    // --catalog ("" = built in)
  std::string models;     // --models
  std::string runtime;    // --runtime
  std::string precision;  // --precision ("" = the runtime's)
  sched::Objective objective = sched::Objective::kBalanced;  // --objective (hase serve's)
  std::string calibration;  // --calibration ("" = the saved one if any, "none", or a file)
  std::string policy = "hase";  // --policy (one name)
};

// "A100-SXM4-40GB:4@new-0" → {type, 4, "new-0"}; COUNT defaults to 1, NODE to "whatif-0".
// Errors: InvalidArgument naming --add-gpus and the value.
Result<service::WhatIfGpus> ParseAddGpus(const std::string& text);

// Runs the what-if and prints it; returns the exit status (Fail's on error).
int RunSimulateFrom(const SimulateFromFlags& f);

// `hase simulate --from-state DIR`: the same what-if offline. DIR/hase.db (with its -wal and
// -shm files) is copied to a temporary directory, where a Daemon with the cluster file, the
// predictor oracle (models, runtime, precision) and the policy is started as a restart would
// start it (journal recovery, one pass: queued tasks that fit now start), with no backend;
// then Daemon::PlanWhatIf plans it. DIR is only read. Errors: NotFound (no DIR/hase.db),
// InvalidArgument (no --config), the daemon's and the what-if's.
int RunSimulateFromState(const SimulateFromFlags& f);

}  // namespace hase::cli
