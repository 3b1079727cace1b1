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

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster_state.h"
#include "hase/sched/fair_share.h"
#include "hase/sched/framework.h"
#include "hase/sched/policy.h"
#include "hase/sched/quota.h"
#include "hase/sched/task.h"
#include "hase/sched/team_config.h"

namespace hase::sched {

struct QueuePlanOptions {
  // Affects performance (and how much of the plan is exact).
  double budget_ms = 250;       // wall-clock time the forward run may take, ms
  int64_t max_decisions = 1 << 20;  // Policy::Schedule calls at most
};

// Teams (docs/teams.md): with a config, every pass of the plan is a team pass as in the
// simulator and the daemon: tasks are offered in TeamQueue order (team_queue.h) with each
// team's fair-share factor at that instant (fair_share.h: usage so far plus what the plan runs),
// tasks of a team at its max_gpus are held (quota.h), and borrowers' reservations yield to a
// team below its guarantee (team_reclaim.h). Times in seconds on the state's clock
// (ClusterState::now_ms / 1000).
struct QueuePlanTeams {
  const TeamConfig* config = nullptr;  // null or disabled: one queue, as before teams
  // Usage of runs already ended (FairShare::Charge). Copied; null = none.
  const FairShare* ended = nullptr;
  // Each running or bound task at the start: its team (TeamConfig index, -1 none), its
  // equivalent speed on its GPU (EquivalentSpeed) and, when running, its start (s).
  struct Placed {
    int team = -1;
    double speed = 1;
    double started_s = std::numeric_limits<double>::quiet_NaN();  // NaN: bound, not started
  };
  std::unordered_map<int, Placed> placed;
  // Equivalent speed of a queued task on a GPU type (EquivalentSpeed): `queued_speed[k * T +
  // type]` for the k-th task of the queue and T cluster types when its size is queue × T, else
  // `speed` (null = 1).
  std::vector<double> queued_speed;
  std::function<double(const Task&, int type)> speed;
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
  // Teams: its team's quota held it at the state's now (the first pass ended with its team at
  // max_gpus): the hold then.
  std::optional<QuotaHold> first_hold;
  // Teams: the first task of another team, queued after it, that the team order placed before
  // it (bound earlier in the plan): it waits for its team's share. -1 none.
  int overtaken_by = -1;
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
  // Teams: each team's usage and fair-share factor, and the GPUs it held, at the state's now
  // (indexed like TeamConfig::teams; empty without teams).
  std::vector<TeamUsage> team_usage;
  std::vector<int> team_gpus;
};

// Plans `queue` (waiting tasks, in the policy's queue order, ids unique and distinct from the
// tasks on the GPUs) on a copy of `live`. `live` must be current (Policy::OnGpuChanged called
// for every changed GPU). Errors: the policy's Internal errors; InvalidArgument for a duplicate
// task id.
// `teams`: see QueuePlanTeams (default: no teams).
Result<QueuePlan> PlanQueue(const ClusterState& live, Policy& policy, const std::vector<Task>& queue,
                            const QueuePlanOptions& options = {}, const QueuePlanTeams& teams = {});

}  // namespace hase::sched
