#include "hase/sched/task_limits.h"

#include <cmath>

#include <fmt/format.h>

namespace hase::sched {
namespace {
// Whole numbers up to 2^53 in full ("1048576", not "1.04858e+06"); others as %g.
std::string Num(double v) {
  if (std::isfinite(v) && std::abs(v) < 9007199254740992.0 && v == std::floor(v)) {
    return fmt::format("{:.0f}", v);
  }
  return fmt::format("{:g}", v);
}
}  // namespace


Status CheckTaskField(const std::string& field, double value, const std::string& where) {
  for (const TaskFieldRange& r : kTaskFieldRanges) {
    if (field != r.field) continue;
    if (std::isfinite(value) && value >= r.min && value <= r.max) return Status::OK();
    return Status::InvalidArgument(
        fmt::format("{} must be between {} and {}{}{} (got {})", field, Num(r.min), Num(r.max),
                    *r.unit ? " " : "", r.unit, Num(value)),
        where, "see the task fields in docs/scheduler.md (\"Files\") or docs/service.md");
  }
  return Status::OK();
}

}  // namespace hase::sched
