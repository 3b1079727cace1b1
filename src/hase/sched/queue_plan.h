// QueuePlan: the policy's own forecast of a whole queue — on which GPU, from when to when each
// waiting task will run, and when everything placed or waiting is done.
//
// PlanQueue runs the policy forward in *predicted* time on a copy of a ClusterState, with the
// discrete-event loop of `hase simulate` and a truth equal to the prediction: tasks end when
// the contention model says (rates piecewise constant between starts and ends on a GPU, as in
// PredictTimeline); after every instant where a task ended, the waiting tasks are offered to
// the policy in the order given (Policy::Schedule then Commit, up to max_queue_scan per pass,
// stopping at Policy::PassSettled), exactly as the simulator and the daemon's pass offer them.
// So the plan is what the policy would do if every prediction held, not a separate estimate.
//
// Bounded: it stops after `budget_ms` of wall time or `max_decisions` policy cycles; the
// running and bound tasks then end as their GPUs' timelines predict, and the tasks still
// waiting are placed by list scheduling (in order, each on the GPU of its earliest predicted
// completion given what the plan has put there), marked kExtrapolated.
//
// Not thread-safe in `policy` (it runs Schedule/Commit, which may update plugin state): pass a
// policy built for the plan (MakePolicy), not one that drives live decisions.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster_state.h"
#include "hase/sched/framework.h"
#include "hase/sched/policy.h"
#include "hase/sched/task.h"

namespace hase::sched {

struct QueuePlanOptions {
  // Affects performance (and how much of the plan is exact).
  double budget_ms = 250;       // wall-clock time the forward run may take, ms
  int64_t max_decisions = 1 << 20;  // Policy::Schedule calls at most
};

// One waiting task's plan. Times are on the state's clock (ms); +inf where unknown.
struct PlannedTask {
  enum class Outcome {
    kPlanned,       // the policy bound it in the forward run; start/end follow
    kExtrapolated,  // the run stopped (budget) before it was bound: list-scheduled estimate
    kRejected,      // the policy rejected it (can never run here): `first_reason` says why
    kStuck,         // nothing left running and the policy still would not place it
  };
  int task_id = 0;
  Outcome outcome = Outcome::kStuck;
  int gpu = -1;  // the GPU it is planned on (-1: none)
  double start_ms = std::numeric_limits<double>::infinity();
  double end_ms = std::numeric_limits<double>::infinity();
  double bound_ms = std::numeric_limits<double>::infinity();  // when the policy bound it
  // The task (running, bound or planned) that ends on `gpu` at start_ms, freeing it: the one it
  // waits behind. -1 when it starts now or no end on its GPU coincides with its start.
  int behind_task = -1;
  // The policy's first decision about it in the plan (at the state's now), when it was offered
  // then: its kind, reason, GPU (for kWait: the GPU it waits for) and whether it reserved it.
  bool offered_now = false;
  Decision::Kind first_kind = Decision::Kind::kWait;
  std::string first_reason;
  int first_gpu = -1;
  bool first_reserve = false;
};

// A task already running or bound at the start, as the plan predicts it.
struct PlannedPlaced {
  int task_id = 0;
  int gpu = 0;
  double start_ms = 0;  // started (running) or predicted start (bound), ms
  double end_ms = 0;    // predicted end, ms
};

struct QueuePlan {
  double now_ms = 0;                  // the state's clock when planned
  std::vector<PlannedTask> tasks;     // one per queued task, in the order given
  std::vector<PlannedPlaced> placed;  // running and bound tasks at now_ms, by task id
  // Predicted drain time: the last end over every task placed or planned, ms (now_ms when
  // nothing is; +inf when a task can never end, e.g. kStuck or kRejected are not counted).
  double eta_ms = 0;
  // The chain that ends last: tasks on one GPU, each starting when the one before it ends, the
  // last ending at eta_ms (start order). Empty when nothing is placed.
  std::vector<int> critical_path;
  int critical_gpu = -1;
  int64_t decisions = 0;  // Policy::Schedule calls made
  int64_t passes = 0;     // passes over the waiting tasks
  bool complete = true;   // false: budget reached, some tasks extrapolated
  double compute_ms = 0;  // wall time the plan took, ms
};

// Plans `queue` (waiting tasks, in the policy's queue order, ids unique and distinct from the
// tasks on the GPUs) on a copy of `live`. `live` must be current (Policy::OnGpuChanged called
// for every changed GPU). Errors: the policy's Internal errors; InvalidArgument for a duplicate
// task id.
Result<QueuePlan> PlanQueue(const ClusterState& live, Policy& policy, const std::vector<Task>& queue,
                            const QueuePlanOptions& options = {});

}  // namespace hase::sched
