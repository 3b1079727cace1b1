// MakespanLowerBound: how short any schedule of the workload could be, under the truth model.
//
// The bound is the max of
//   (a) max over tasks of (arrival + its true isolated time on its fastest feasible type) —
//       no task can finish sooner;
//   (b) the LP relaxation of R||Cmax (unrelated machines, Lenstra, Shmoys & Tardos 1990),
//       solved with GLPK: minimise C subject to Σ_k y_tk = 1 for every task t, and for every
//       GPU type k: Σ_t w_tk y_tk <= C × n_k × cap_k, y >= 0, where y_tk is the fraction of t
//       placed on type k (only types that can host it), n_k the number of GPUs of type k, and
//       w_tk = true isolated time × true demand: the GPU capacity the task consumes.
//       cap_k = max(1, m / (1 + kappa (m − 1))) bounds the capacity a GPU delivers with m =
//       max_tasks co-located saturating tasks under the contention model (for kappa >= 1 it is
//       1: co-location cannot beat running alone; docs/scheduler.md derives it). Tasks with
//       A second row per type, Σ_t iso_tk y_tk <= C × n_k × m_k, holds because at most m_k
//       tasks progress at once on a GPU, each at most at isolated speed (with m = 1 this is
//       the classic serial R||Cmax relaxation). Tasks with
//       identical profiles are merged (the LP optimum is unchanged), so 100 000 tasks solve
//       in well under a second.
// When the LP would be too large (more than kMaxLpGroups distinct task profiles after merging)
// or GLPK does not reach an optimum within kLpTimeLimitMs, (b) degrades to the aggregate bound
// of the same two rows, max(Σ_t min_k w_tk / Σ_k n_k cap_k, Σ_t min_k iso_tk / Σ_k n_k m_k)
// (every task on its cheapest type, the cluster's whole capacity; weaker, never wrong), and
// `lp_solved` is false.
// Ignores arrival times in (b) and pairwise noise of the truth model, so it is a bound for the
// contention model, not a guarantee under every truth table.
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/sched/task.h"
#include "hase/sim/truth_model.h"

namespace hase::sim {

inline constexpr int kMaxLpGroups = 50000;
inline constexpr int kLpTimeLimitMs = 30000;

struct LowerBound {
  double longest_task_ms = 0;  // (a)
  double lp_ms = 0;            // (b)
  bool lp_solved = true;       // false: (b) is the aggregate bound (see above)
  std::string lp_status = "optimal";  // GLPK's outcome in words when not solved ("too large:
                                      // N groups", "glp_simplex: …", "status: …")
  int lp_groups = 0;           // distinct task profiles in the LP
  double value_ms() const { return longest_task_ms > lp_ms ? longest_task_ms : lp_ms; }
};

// Tasks no type can host (no truth profile or too little memory, per `memory_mib`: the memory
// need of each task, MiB, indexed by task id) are left out. Errors: Internal when GLPK fails.
Result<LowerBound> MakespanLowerBound(const sched::Cluster& cluster,
                                      const std::vector<sched::Task>& tasks,
                                      const std::vector<double>& memory_mib,
                                      const TruthModel& truth,
                                      int max_lp_groups = kMaxLpGroups);

// Each task's true isolated time on its fastest type that can host it (memory per
// `memory_mib`, as above), ms, indexed by task id; 0 for a task no type can host. The
// denominator of a task's slowdown (report.h) and the (a) term above.
std::vector<double> FastestIsolatedMs(const sched::Cluster& cluster,
                                      const std::vector<sched::Task>& tasks,
                                      const std::vector<double>& memory_mib,
                                      const TruthModel& truth);

}  // namespace hase::sim
