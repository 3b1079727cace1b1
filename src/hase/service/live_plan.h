// LivePlan: the daemon's plan of its whole queue, remade after every pass — for each queued task
// the GPU it is planned on, its predicted start and end, and a structured reason it is not
// running now; for the queue its predicted drain time (ETA) and critical path.
//
// The plan is the policy's own: sched::PlanQueue runs a fresh instance of the daemon's policy
// forward on a copy of the live ClusterState (running tasks with their remaining predicted
// work, bound tasks, reservations, live memory and background load) with predicted durations —
// the code path of `hase simulate`. It is bounded (QueuePlanOptions::budget_ms); tasks beyond
// what the budget reached are list-scheduled and marked `exact = false`. Times are wall seconds
// (Unix); the daemon builds the input under its lock and plans outside it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"
#include "hase/sched/cluster_state.h"
#include "hase/sched/latency_oracle.h"
#include "hase/sched/objective.h"
#include "hase/sched/queue_plan.h"
#include "hase/sched/task.h"

namespace hase::service {

struct PlanGpu {
  int id = -1;       // Cluster GPU id; -1 = none
  std::string node;  // node name
  int index = 0;     // the node's own GPU index
  std::string type;  // catalog type
};

// Why a queued task is not running now. `kind` is one of:
//   starts_now         planned to start at the next pass (offered after this pass's last one)
//   behind             waits behind `task` on `gpu` until `until_s`
//   reserved_for       `gpu` is reserved for `task` (EASY backfilling), which runs until `until_s`
//   holds_reservation  it holds the reservation of `gpu`, from `until_s`
//   queue_order        planned on `gpu` from `until_s`, after the tasks ahead of it
//   extrapolated       beyond the plan's budget: a list-scheduled estimate on `gpu` from `until_s`
//   memory             no GPU has the memory now: needs `need_mib`; the most free is `free_mib`
//                      on `gpu` (of `capacity_mib`); memory used outside hase (DCGM) must go
//   failed_gpus        only failed GPUs could host it; waits for them to recover
//   unplaceable        no GPU type here can ever run it; `fix` says what would
//   quota              its team is at its max_gpus now (`team`, `used_gpus`, `guaranteed_gpus`,
//                      `max_gpus`); planned on `gpu` from `until_s`, when the team's quota allows
//   team_share         waits for its team's share: `task` of team `other_team`, queued after it,
//                      goes first (below its guarantee, higher priority or higher fair-share
//                      factor: `fair_share` vs `other_fair_share`); planned on `gpu` from `until_s`
struct PlanReason {
  std::string kind;
  std::string text;    // one sentence for people, with the figures below (ISO 8601 UTC times)
  int64_t task = -1;   // behind / reserved_for: the task concerned
  PlanGpu gpu;         // the GPU concerned
  double until_s = std::numeric_limits<double>::quiet_NaN();  // wall s
  double need_mib = 0, free_mib = 0, capacity_mib = 0;        // memory, MiB
  std::string fix;     // unplaceable / memory / failed_gpus: what would let it run
  // quota / team_share: its team then (GPUs it holds, its quota, its fair-share factor) and,
  // team_share, the team that goes first.
  std::string team;
  int used_gpus = -1, guaranteed_gpus = 0, max_gpus = -1;  // max -1: none
  double fair_share = std::numeric_limits<double>::quiet_NaN();
  std::string other_team;
  double other_fair_share = std::numeric_limits<double>::quiet_NaN();
};

struct PlanEntry {
  int64_t task_id = 0;
  std::string model;
  bool exact = true;   // false: extrapolated beyond the plan's budget (or no plan: never starts)
  PlanGpu gpu;         // planned GPU (id -1: none)
  double start_s = std::numeric_limits<double>::infinity();  // wall s; +inf = not planned
  double end_s = std::numeric_limits<double>::infinity();
  PlanReason reason;
};

// The whole plan (GET /v1/queue).
struct LiveQueuePlan {
  double planned_at_s = 0;     // wall s of the pass it follows
  double eta_s = 0;            // predicted drain: last end over everything placed and planned
  std::vector<PlanEntry> tasks;  // queued tasks, in queue order
  struct Step {
    int64_t task_id = 0;
    std::string state;  // running, bound, queued
    double start_s = 0, end_s = 0;
  };
  std::vector<Step> critical_path;  // start order; the last ends at eta_s
  struct Placed {
    int64_t task_id = 0;
    std::string state;  // running, bound
    PlanGpu gpu;
    double start_s = 0, end_s = 0;  // started (or planned start) and predicted end, wall s
  };
  std::vector<Placed> placed;       // running and bound tasks, by id
  PlanGpu critical_gpu;
  int running = 0, bound = 0;       // placed tasks the plan includes
  int unplanned = 0;                // queued tasks with no start (memory, failed, unplaceable)
  bool complete = true;             // false: the budget cut the forward run short
  int64_t decisions = 0;
  double compute_ms = 0;
  std::string policy;
  std::map<int64_t, size_t> index;  // task id → tasks[i]

  const PlanEntry* Find(int64_t id) const {
    auto it = index.find(id);
    return it == index.end() ? nullptr : &tasks[it->second];
  }
};

// What the daemon hands the planner (a copy: planning runs outside the daemon's lock).
struct LivePlanInput {
  std::unique_ptr<sched::ClusterState> state;  // copy of the live state, projected finishes kept
  std::vector<sched::Task> queue;              // queued tasks in queue order; Task::id = task id
  std::map<int64_t, std::string> placed_state;  // running/bound task id → "running"/"bound"
  std::vector<double> foreign_mib;             // per GPU: memory in use outside hase (DCGM), MiB
  std::set<int> failed_gpus;
  std::vector<double> catalog_mib;             // per GPU: catalog memory, MiB
  double epoch_s = 0;                          // wall s of scheduler time 0
  std::string policy;
  sched::Objective objective = sched::Objective::kBalanced;  // hase's (DaemonOptions::objective)
  std::shared_ptr<const sched::LatencyOracle> oracle;
  sched::QueuePlanOptions options;
  // Teams (docs/teams.md): the plan's team pass input; its config and ended usage point into
  // the two objects below (owned here, so the input can move to the planner's thread).
  sched::QueuePlanTeams teams;
  std::shared_ptr<const sched::TeamConfig> team_config;
  std::shared_ptr<const sched::FairShare> team_ended;
};

// Plans the queue. Errors: the policy's (NotFound for an unknown name; Internal).
Result<std::shared_ptr<const LiveQueuePlan>> BuildLivePlan(const LivePlanInput& in);

// Plans on its own thread, so the scheduler's next pass does not wait for the plan: Request
// hands over an input and returns; the thread plans the newest input (older ones not yet
// started are dropped) and publishes the result for Latest. A failed plan keeps the previous
// one and is reported through `on_error`. Thread-safe. The destructor stops and joins the thread.
class LivePlanner {
 public:
  LivePlanner() = default;
  ~LivePlanner();
  LivePlanner(const LivePlanner&) = delete;
  LivePlanner& operator=(const LivePlanner&) = delete;

  void Request(LivePlanInput in, std::function<void(const Status&)> on_error);
  // The newest plan; null before the first one.
  std::shared_ptr<const LiveQueuePlan> Latest() const;
  // Blocks until every input handed over so far is planned (tests; RunPassForTest).
  void WaitIdle();

 private:
  void Loop();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<LivePlanInput> next_;           // guarded by mu_: the input to plan next
  std::function<void(const Status&)> on_error_;   // guarded by mu_
  bool busy_ = false;                             // guarded by mu_: planning now
  bool stop_ = false;                             // guarded by mu_
  std::shared_ptr<const LiveQueuePlan> latest_;   // guarded by mu_
  std::thread thread_;                            // started by the first Request
};

// JSON forms. PlanGpu: {"id","node","index","type"} (null for none). A queued task's
// "predicted": {"start_s","end_s","start","end","gpu","exact"} (start/end: ISO 8601 UTC; null
// seconds when not planned); its structured reason: {"kind","text",...figures}.
nlohmann::json PlanGpuJson(const PlanGpu& g);
nlohmann::json PlannedJson(const PlanEntry& e);
nlohmann::json PlanReasonJson(const PlanReason& r);
// For a queued task's record JSON (GET /v1/tasks, /v1/tasks/{id}): sets "predicted" and "why"
// (the structured reason) from `plan` and "reason" to its text; a task the plan does not hold yet
// (submitted after it) gets why.kind "pending". Leaves other tasks' JSON alone.
void AttachPlan(nlohmann::json& task, int64_t id, bool queued, const LiveQueuePlan* plan);
// GET /v1/queue: {"planned_at_s","planned_at","eta_s","eta","drain_s","critical_path":{...},
// "tasks":[{"id","model","state":"queued","predicted":…,"reason":…}], "plan":{…}}.
nlohmann::json QueuePlanJson(const LiveQueuePlan& p, double now_s);

}  // namespace hase::service
