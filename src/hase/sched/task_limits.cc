#include "hase/sched/task_limits.h"

#include <cmath>

#include <fmt/format.h>

namespace hase::sched {

Status CheckTaskField(const std::string& field, double value, const std::string& where) {
  for (const TaskFieldRange& r : kTaskFieldRanges) {
    if (field != r.field) continue;
    if (std::isfinite(value) && value >= r.min && value <= r.max) return Status::OK();
    return Status::InvalidArgument(
        fmt::format("{} must be between {:g} and {:g}{}{} (got {:g})", field, r.min, r.max,
                    *r.unit ? " " : "", r.unit, value),
        where, "see the task fields in docs/scheduler.md (\"Files\") or docs/service.md");
  }
  return Status::OK();
}

}  // namespace hase::sched
