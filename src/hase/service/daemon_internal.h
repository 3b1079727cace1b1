// Private to the daemon's files (daemon.cc, daemon_report.cc, daemon_external.cc,
// daemon_reconcile.cc).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "hase/base/status.h"

namespace hase::service::internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The reason of a running task whose launch has not been seen start ("launched as slurm job
// 12; not started yet"); cleared by its start or end.
inline std::string NotStartedNote(const std::string& backend, int64_t handle) {
  return "launched as " + backend + " job " + std::to_string(handle) + "; not started yet";
}
inline bool IsNotStartedNote(const std::string& reason) {
  constexpr std::string_view kTail = "; not started yet";
  return reason.rfind("launched as ", 0) == 0 && reason.size() > kTail.size() &&
         reason.compare(reason.size() - kTail.size(), kTail.size(), kTail) == 0;
}

// Holder of a failed GPU's phantom reservation (daemon.h, Failures).
inline constexpr int kFailedGpuTaskId = -2;

// The 400 for a model no GPU type of the cluster can price (Submit, Advise).
inline Status UnpredictableModel(const std::string& model, const Status& why) {
  return Status::InvalidArgument("model '" + model + "' cannot be predicted: " + why.message(), "model",
                                 why.hint().empty() ? "name a model of the daemon's model directory (--models) or latency table"
                                                    : why.hint());
}

}  // namespace hase::service::internal
