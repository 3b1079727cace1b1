// KernelLatencyEstimator: "how long does this kernel take on this GPU type under this load?"
//
// One interface for every per-kernel latency model: the analytic roofline
// (analytic_estimator.h, defined for every catalog GPU, no training data) and learned models
// (XGBoost, trained on measurements). PredictModel (predict_model.h) asks a primary estimator
// first and falls back to the analytic one when the primary returns an error, recording which
// estimator produced each kernel's time.
//
// Implementations must be const-callable from several threads at once (no mutable state).
#pragma once

#include <string>

#include "hase/base/status.h"
#include "hase/hw/gpu_spec.h"
#include "hase/hw/microbenchmark_profile.h"
#include "hase/kernels/kernel.h"
#include "hase/predict/precision.h"
#include "hase/telemetry/load_snapshot.h"

namespace hase {

// Where and how a kernel runs. References must outlive the Estimate call only.
struct ExecutionContext {
  const GpuSpec& gpu;                    // the GPU type (datasheet)
  const MicrobenchmarkProfile& profile;  // achievable figures (measured or DerivedProfile(gpu))
  const LoadSnapshot& load;              // background load on that GPU (Idle() for none)
  Precision precision = kDefaultPrecision;
};

struct KernelEstimate {
  // Device time of the kernel, milliseconds: from the kernel starting on the GPU to its end,
  // under ctx.load. EXCLUDES host-side launch/dispatch overhead and host↔device copies (added
  // by PredictModel, docs/predictor.md), so a learned model trained on timings that include a
  // dispatch floor must subtract it or model it separately (../shared/data/PITFALLS.md 3).
  double latency_ms = 0;
  std::string estimator;  // name of the estimator that produced it ("analytic", "xgboost", …)
};

class KernelLatencyEstimator {
 public:
  virtual ~KernelLatencyEstimator() = default;

  // Short stable name, reported per kernel by `hase predict`: "analytic", "xgboost".
  virtual std::string Name() const = 0;

  // Predicts one kernel. Errors: Unsupported when this estimator has no model for the kernel's
  // family / op / precision (PredictModel then falls back to the analytic estimator);
  // InvalidArgument for a kernel with impossible values (negative FLOPs or bytes).
  virtual Result<KernelEstimate> Estimate(const Kernel& kernel,
                                          const ExecutionContext& ctx) const = 0;
};

}  // namespace hase
