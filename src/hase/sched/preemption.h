// Preemption: which running task a waiting one may preempt, and why (docs/teams.md).
//
// A waiting task W may preempt a running task V when
//   - W has a higher priority than V, or
//   - teams share the cluster, W's team is below its guarantee and V's team is above its own
//     (reclaim: V's team borrowed the GPU W's team is owed),
// and V may still be preempted: fewer than PreemptionOptions::max_per_task preemptions so far,
// running for at least min_run_s since its last start, its GPU has the memory W needs. Among
// those the victim is the lowest priority, then the team furthest above its guarantee, then
// the latest start, then the highest id. The driver stops V at the end of the batch it is
// running (no work is lost beyond it) and re-queues it with its remaining batches.
#pragma once

#include <string>
#include <vector>

#include "hase/sched/quota.h"

namespace hase::sched {

struct PreemptWaiting {
  int task = 0;
  std::string name;
  int team = -1;          // TeamConfig index, -1 without teams
  int priority = 0;
  double memory_mib = 0;  // what it needs, MiB
};

struct PreemptRunning {
  int task = 0;
  std::string name;
  int team = -1;
  int priority = 0;
  int gpu = 0;
  double gpu_memory_mib = 0;  // the GPU's capacity, MiB
  double run_s = 0;           // since its last start, s
  double start_s = 0;         // its last start, s
  int preemptions = 0;        // so far
};

struct PreemptChoice {
  int victim = -1;  // index into the running list; -1 = none
  std::string why;  // for the victim's record: who preempted it and on what grounds
};

// `pending[team]`: GPUs of each team already being given back (preemptions decided, not yet
// at their batch boundary); counted as released. `ledger` may have a disabled config (no
// teams: priority only). Pure: changes nothing.
PreemptChoice ChooseVictim(const PreemptWaiting& waiting, const std::vector<PreemptRunning>& running,
                           const QuotaLedger& ledger, const std::vector<int>& pending,
                           const PreemptionOptions& options);

}  // namespace hase::sched
