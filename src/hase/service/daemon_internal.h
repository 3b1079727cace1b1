// Private to the daemon's files (daemon.cc, daemon_report.cc, daemon_external.cc,
// daemon_reconcile.cc).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "hase/base/status.h"
#include "hase/sched/task.h"
#include "hase/service/task_record.h"

namespace hase::service::internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The reason of a running task whose launch has not been seen start ("launched as slurm job
// 12; not started yet"); cleared by its start or end.
inline std::string NotStartedNote(const std::string& backend, int64_t handle) {
  // handle 0: the backend could not confirm the submission yet (slurmctld unreachable) and
  // follows it by name (backend.h, Launch).
  return "launched as " + backend + " job " + (handle > 0 ? std::to_string(handle) : "(submission not confirmed yet)") +
         "; not started yet";
}
inline bool IsNotStartedNote(const std::string& reason) {
  constexpr std::string_view kTail = "; not started yet";
  return reason.rfind("launched as ", 0) == 0 && reason.size() > kTail.size() &&
         reason.compare(reason.size() - kTail.size(), kTail.size(), kTail) == 0;
}

// Holder of a failed GPU's phantom reservation (daemon.h, Failures).
inline constexpr int kFailedGpuTaskId = -2;

// The 400 for a model no GPU type of the cluster can price (Submit, Advise), naming the input
// it was priced at. `declared` ("3x640x640", or "") is the model's own input: when the request
// stated another, the hint says so (YOLOv8's fixed 640 graph cannot be reshaped to 224).
inline Status UnpredictableModel(const TaskSpec& spec, const Status& why, const std::string& declared = "") {
  const std::string shape = sched::InputShapeText(spec.input_shape);
  std::string hint = why.hint().empty() ? "name a model of the daemon's model directory (--models) or latency table"
                                        : why.hint();
  if (!declared.empty() && declared != shape) {
    hint = "the model's ONNX declares input " + declared + "; drop input_size/input_shape (hase.io/input-size, "
           "hase.io/input-shape) to price it at that, or export the model for " + shape;
  }
  return Status::InvalidArgument("model '" + spec.model + "' cannot be predicted" +
                                     (shape.empty() ? "" : " at input " + shape) + ": " + why.message(),
                                 "model", hint);
}

}  // namespace hase::service::internal
