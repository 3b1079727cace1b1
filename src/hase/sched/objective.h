// Objective: what the `hase` policy trades — the queue's makespan, the tasks' completion times
// (JCT), or a balance of both — and the central-queue order each one implies.
//
// The objective sets hase's queue order (Policy::Options::queue_order); placement (earliest
// predicted completion, co-location by predicted gain, reservations, backfilling) is the same
// for all three. Measurements behind the defaults: docs/scheduler.md, "Makespan and JCT".
#pragma once

#include <string>
#include <string_view>

#include "hase/base/status.h"

namespace hase::sched {

enum class Objective {
  kMakespan,  // longest first, aged (LPT, Graham 1969): the tasks that set the tail go first
  kJct,       // shortest first, aged (SPT, Smith 1956): least mean completion time
  kBalanced,  // long tasks first (LPT), every other task shortest first (default)
};

// "makespan", "jct", "balanced". InvalidArgument (listing the three) for anything else;
// `where` names the flag or file line for the message.
Result<Objective> ParseObjective(std::string_view text, std::string_view where);
std::string_view ObjectiveName(Objective objective);

// A central-queue order as a static sort key (larger first within a priority level), so the
// simulator, the daemon's queue and the live plan order tasks alike.
struct QueueOrder {
  enum class Kind {
    kArrival,        // key 0: arrival order
    kLongestFirst,   // key = L − aging × arrival
    kShortestFirst,  // key = −L − aging × arrival
    kSplit,          // tasks with L ≥ long_task_ms: kLongestFirst, ahead of all others;
                     // the others kShortestFirst
  };
  Kind kind = Kind::kArrival;
  // ms of task length credited per ms of arrival time: a task arriving Δ ms later overtakes
  // an earlier one only when it is longer (LPT) / shorter (SPT) by more than aging × Δ, so
  // every wait is bounded (L + aging × waited orders like L − aging × arrival: now is common).
  double aging = 0;
  double long_task_ms = 0;  // kSplit: the length from which a task is "long"
};

// The key of a task whose fastest predicted isolated time over the cluster's GPU types is
// `fastest_ms` (0 when it has none) and that arrived at `arrival_ms`.
double QueueKeyOf(const QueueOrder& order, double fastest_ms, double arrival_ms);

}  // namespace hase::sched
