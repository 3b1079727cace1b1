#include "hase/sched/objective.h"

#include <fmt/format.h>

namespace hase::sched {
namespace {
// kSplit: long tasks sit above every short one. Keys are ms; arrival ≤ 10^12 ms
// (task_limits.h) and aging ≤ 1 in practice, so 10^13 clears any short key and keeps long
// keys exact to ~2 µs (a double's spacing at 10^13).
constexpr double kLongClassOffsetMs = 1e13;
}  // namespace

Result<Objective> ParseObjective(std::string_view text, std::string_view where) {
  if (text == "makespan") return Objective::kMakespan;
  if (text == "jct") return Objective::kJct;
  if (text == "balanced") return Objective::kBalanced;
  return Status::InvalidArgument(fmt::format("unknown objective '{}'", text), std::string(where),
                                 "use makespan, jct or balanced");
}

std::string_view ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kMakespan:
      return "makespan";
    case Objective::kJct:
      return "jct";
    case Objective::kBalanced:
      return "balanced";
  }
  return "balanced";
}

double QueueKeyOf(const QueueOrder& order, double fastest_ms, double arrival_ms) {
  const double aged = order.aging * arrival_ms;
  switch (order.kind) {
    case QueueOrder::Kind::kArrival:
      return 0;
    case QueueOrder::Kind::kLongestFirst:
      return fastest_ms - aged;
    case QueueOrder::Kind::kShortestFirst:
      return -fastest_ms - aged;
    case QueueOrder::Kind::kSplit:
      return fastest_ms >= order.long_task_ms ? kLongClassOffsetMs + fastest_ms - aged
                                              : -fastest_ms - aged;
  }
  return 0;
}

}  // namespace hase::sched
