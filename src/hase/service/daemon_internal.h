// Private to the daemon's files (daemon.cc, daemon_report.cc, daemon_external.cc,
// daemon_reconcile.cc).
#pragma once

#include <limits>
#include <string>

#include "hase/base/status.h"

namespace hase::service::internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Holder of a failed GPU's phantom reservation (daemon.h, Failures).
inline constexpr int kFailedGpuTaskId = -2;

// The 400 for a model no GPU type of the cluster can price (Submit, Advise).
inline Status UnpredictableModel(const std::string& model, const Status& why) {
  return Status::InvalidArgument("model '" + model + "' cannot be predicted: " + why.message(), "model",
                                 why.hint().empty() ? "name a model of the daemon's model directory (--models) or latency table"
                                                    : why.hint());
}

}  // namespace hase::service::internal
