#include "hase/service/task_record.h"

namespace hase::service {

namespace {
constexpr const char* kNames[] = {"queued", "bound", "running", "succeeded", "failed", "cancelled", "rejected"};
}

const char* TaskStateName(TaskState s) { return kNames[static_cast<int>(s)]; }

Result<TaskState> ParseTaskState(std::string_view name) {
  for (int i = 0; i < 7; ++i) {
    if (name == kNames[i]) return static_cast<TaskState>(i);
  }
  return Status::InvalidArgument("unknown task state '" + std::string(name) + "'");
}

bool IsTerminal(TaskState s) {
  return s == TaskState::kSucceeded || s == TaskState::kFailed || s == TaskState::kCancelled ||
         s == TaskState::kRejected;
}

sched::Task TaskRecord::ToSchedTask() const {
  sched::Task t;
  t.id = static_cast<int>(id);
  t.name = spec.name.empty() ? "task-" + std::to_string(id) : spec.name;
  t.model = spec.model;
  t.family = sched::ModelFamily(spec.model);
  t.batch_size = spec.batch_size;
  t.input_size = spec.input_size;
  t.input_shape = spec.input_shape;
  t.num_batches = spec.num_batches;
  t.arrival_ms = submitted_s * 1000.0;
  t.priority = spec.priority;
  t.memory_mib = spec.memory_mib;
  t.runtime = spec.runtime;
  t.team = spec.team;
  t.gpus = spec.gpus;
  t.parallel_efficiency = spec.parallel_efficiency;
  return t;
}

}  // namespace hase::service
