// BestKnownSchedule: a good feasible offline schedule of the workload, as a reference beside
// the lower bound — how far each online policy is from what perfect knowledge achieves.
//
// Perfect knowledge: the truth model's isolated runtimes (the oracle's where the truth has no
// entry, as in the simulator) and every arrival in advance. One task at a time per GPU (no
// co-location), a task only on GPUs with enough memory; each GPU runs its tasks in arrival
// order (optimal for a fixed set on one machine with release dates, 1|r_j|C_max: Lawler
// 1973), so a schedule is an assignment of tasks to GPUs. Built by
//   1. list scheduling, two orders, the better kept: (a) by arrival, each task on the GPU of
//      its earliest completion (EFT / MCT; O(n × classes × log G)); (b) longest first (LPT,
//      Graham 1969: fastest isolated time descending), each task inserted where the GPU's
//      resulting completion is lowest — only when n × G ≤ kMaxInsertionWork;
//   2. local search on the critical GPU (the one whose completion is the makespan): the best
//      move of one of its tasks to another GPU, else the best swap with a task of another GPU,
//      whenever it lowers the larger of the two completions below the makespan; repeated
//      until no move or swap helps or `budget` task-steps of evaluation are spent;
//   3. iterated local search (Lourenço, Martin & Stützle 2003) with ruin-and-recreate kicks
//      (Schrimpf et al. 2000): one task of the critical GPU and three random others are taken
//      out and reinserted longest first where their GPU's completion ends lowest, then step 2;
//      the best schedule is kept, until 200 kicks in a row bring nothing or the budget is
//      spent. Seeded (std::mt19937_64).
// Deterministic (a step budget, not a wall-clock limit; ties by GPU id). Co-location can in
// principle beat it (light tasks gain from sharing under the contention model), so a policy
// may come out below 1.0 of it; the lower bound is the hard floor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/sched/latency_oracle.h"
#include "hase/sched/task.h"
#include "hase/sim/truth_model.h"

namespace hase::sim {

inline constexpr int64_t kBestKnownBudget = 50'000'000;     // task-steps of local search
inline constexpr int64_t kMaxInsertionWork = 20'000'000;    // n × G for LPT insertion

struct BestKnown {
  double makespan_ms = 0;        // 0 when no task can be placed
  std::vector<int> gpu_of_task;  // indexed by task id; -1 when no GPU can host it
  std::vector<double> start_ms;  // indexed by task id; -1 when unplaced
  std::string construction;      // "eft-arrival" or "lpt-insertion": the better start
  int moves = 0;                 // improving moves + swaps the local search made
  int kicks = 0;                 // iterated-local-search kicks that led to a better schedule
  bool budget_exhausted = false; // true: stopped by `budget`, not at a local optimum
};

// `memory_mib`: each task's GPU memory need, MiB (indexed by task id). `fallback`: profiles
// for (task, type) pairs the truth has no entry for (may be null: such pairs are infeasible).
// Errors: InvalidArgument when task ids are not 0..n-1.
Result<BestKnown> BestKnownSchedule(const sched::Cluster& cluster,
                                    const std::vector<sched::Task>& tasks,
                                    const std::vector<double>& memory_mib, const TruthModel& truth,
                                    const sched::LatencyOracle* fallback,
                                    int64_t budget = kBestKnownBudget);

}  // namespace hase::sim
