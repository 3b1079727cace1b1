// WaitMemo: incremental passes (Policy::Options::incremental_passes). Every change to a GPU's
// state that a waiting task's decision may depend on is logged (MarkChanged); a task's last
// kWait is kept when the GPUs it waits for did not change since and the policy says it still
// stands given the GPUs that did (Policy::StillStands). Used by the simulator's passes
// (sim/simulator.cc) and the queue plan's forward run (queue_plan.h), so both reuse waits by
// the same rule.
//
// Bounds: a memo older than 1024 logged changes, or with more than 48 GPUs changed since, is
// decided again (looking through more costs as much as deciding); the log forgets changes
// beyond 2^20 (older memos then decide again). A reservation (Decision::reserve) is never kept.
//
// Not thread-safe; one per run.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster_state.h"
#include "hase/sched/framework.h"
#include "hase/sched/policy.h"
#include "hase/sched/task.h"

namespace hase::sched {

class WaitMemo {
 public:
  // `policy` must outlive the memo; nothing is kept unless it sets incremental_passes.
  explicit WaitMemo(const Policy& policy) : policy_(policy) {}

  // Starts over for a cluster of `num_gpus` GPUs.
  void Reset(size_t num_gpus);
  // Forgets every kept wait (every task decides afresh at its next offer).
  void Clear() { memo_.clear(); }

  // Logs a change of GPU `gpu`'s state (a bind, an end, a reservation made or released).
  void MarkChanged(int gpu);
  // The wait kept for `key` (task `task`), or nullopt when it must decide again.
  std::optional<Decision> Kept(int64_t key, const Task& task, const ClusterState& state, CycleState& cycle);
  // Records the outcome of `key`'s offer: a new or different wait is kept and marks the GPUs it
  // claims or reserves as changed (later tasks see them); anything else drops its memo.
  // `reused`: `d` is the memo Kept returned.
  void Remember(int64_t key, const Result<Decision>& d, bool reused);

 private:
  struct Memo {
    Decision decision;
    uint64_t seq = 0;  // change_seq_ when it was made
  };
  const Policy& policy_;
  std::unordered_map<int64_t, Memo> memo_;  // per waiting task: its last kWait
  uint64_t change_seq_ = 0;                 // changes logged so far
  uint64_t log_base_ = 0;                   // change_log_[i] is change number base + i + 1
  std::vector<int> change_log_;             // GPU of each change
  std::vector<uint64_t> gpu_changed_;       // per GPU: number of its last change
  std::vector<uint64_t> seen_stamp_;        // Kept(): dedup of changed GPUs
  uint64_t stamp_ = 0;
  std::vector<int> changed_;                // Kept(): scratch
};

}  // namespace hase::sched
