// Simulate: a discrete-event simulation of one policy placing a workload on a cluster.
//
// The simulator owns time. Events are task arrivals and completions, ordered by (time,
// sequence number), so a run is deterministic. Tasks run under the TruthModel; the policy
// sees only its own predictions (GpuState) plus observed progress (how much of each running
// task is done, as a real system sees finished batches). Tasks that overrun their prediction
// are not killed. After each instant where a task arrived or ended (not after instants holding
// only stale completion events) the central queue is offered to the policy
// (Policy::Options::max_queue_scan tasks, queue order: priority, arrival, id), stopping early
// once Policy::PassSettled (nothing can start, no reservation can be made); dispatching
// policies are asked once, on arrival. A task no GPU can ever host is rejected with the
// policy's reason; if nothing runs and nothing can start, the waiting tasks are rejected
// ("no GPU could take it") rather than waiting forever.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/sched/policy.h"
#include "hase/sched/task.h"
#include "hase/sched/fair_share.h"
#include "hase/sched/team_config.h"
#include "hase/sim/decision_times.h"
#include "hase/sim/truth_model.h"

namespace hase::sim {

struct SimOptions {
  bool show_progress = false;      // a progress bar on stderr (long runs)
  bool measure_decisions = true;   // wall-clock time of every Policy::Schedule call
  // Called after every instant where a task arrived or ended (after its pass) with the policy's
  // view of the GPUs (observed progress included) and the ids of the tasks still waiting in the
  // central queue, in queue order: for plans made during a run (bench/plan_accuracy). Must not
  // keep references. Null: none.
  std::function<void(const sched::ClusterState&, const std::vector<int>&)> after_instant;
  // Teams sharing the cluster (docs/teams.md; null or disabled: one anonymous queue). Quotas
  // order and hold the central queue (sim/team_run.h), usage is charged per team, and with
  // preemption.enabled a waiting task may stop a running one at its next batch boundary when
  // no GPU has a free slot. Must outlive the run; every task's team must be listed.
  const sched::TeamConfig* teams = nullptr;
  // Reference-equivalent seconds per second of a task on a cluster type index (fair share);
  // null: 1 (plain GPU-seconds).
  std::function<double(const sched::Task&, int type)> equivalent_speed;
};

struct TaskOutcome {
  int task_id = 0;
  int gpu = -1;             // where it ran; -1 when rejected (a k-GPU task: the first)
  std::vector<int> gpus;    // a k-GPU task (Task::gpus > 1): all its GPUs, ascending; else empty
  std::vector<int64_t> parts;  // a split task (Task::split): batches run on each of `gpus`
  double arrival_ms = 0;
  double start_ms = -1;
  double end_ms = -1;
  bool rejected = false;
  std::string reason;       // why it was rejected
  bool backfilled = false;  // started on a GPU reserved for another task
  // The plan behind it (what the policy predicted and why; -1 where not applicable):
  double decided_ms = -1;          // when the policy bound it
  double predicted_start_ms = -1;  // the policy's predicted start and end at that moment, ms
  double predicted_end_ms = -1;
  int runner_up_gpu = -1;          // the best other GPU it priced, and its predicted end, ms
  double runner_up_end_ms = -1;
  double runner_up_inflicted_ms = 0;  // … and the delay it would have inflicted there, ms
  int waited_for_gpu = -1;         // the last GPU it chose to wait for (kWait), -1 if it never
  int wait_targets = 0;            // how many times the GPU it waited for changed (incl. first)
  int reserved_gpu = -1;           // the GPU it held a reservation on, -1 if none
  std::vector<int> co_located;     // tasks running on its GPU when it started
  // Teams (SimOptions::teams): the truth's isolated time of the whole task on the fastest GPU
  // type, ms (slowdown = JCT / this); 0 without teams. start_ms stays the first start.
  double isolated_best_ms = 0;
  int preemptions = 0;             // times it was stopped at a batch boundary and re-queued
  std::vector<std::string> preempted;  // why and where, one line per preemption
};

// One reservation a policy made, and what became of it.
struct ReservationRecord {
  int task_id = 0;
  int gpu = 0;
  double made_ms = 0;
  double promised_start_ms = 0;  // the shadow time when it was made
  double actual_start_ms = -1;   // when the task really started (anywhere)
  int actual_gpu = -1;
};

struct SimResult {
  std::string policy;
  std::vector<TaskOutcome> tasks;           // indexed by task id
  std::vector<double> gpu_busy_ms;          // per GPU: time with >= 1 task running
  std::vector<ReservationRecord> reservations;
  int backfills = 0;
  DecisionTimes decisions;                  // every Schedule call, wall clock µs (not
                                            // deterministic: kept out of byte-stable reports)
  double makespan_ms = 0;                   // last completion (time 0 = workload start)
  // Teams: each team's usage at the makespan (indexed like SimOptions::teams->teams).
  std::vector<sched::TeamUsage> team_usage;
  int preemptions = 0;
};

// Runs `policy` (fresh: policies keep state) on `tasks` (ids 0..n-1, sorted by arrival).
// Errors: InvalidArgument when task ids are not dense; a policy Internal error.
Result<SimResult> Simulate(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                           sched::Policy& policy, const TruthModel& truth,
                           const SimOptions& options);

}  // namespace hase::sim
