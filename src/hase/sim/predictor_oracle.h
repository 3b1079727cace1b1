// PredictorOracle: a LatencyOracle backed by hase's model-level predictor.
//
// For each (model, batch, input size) it builds the KernelList once (kernels/
// kernel_list_builder.h) and, per GPU type, predicts one batch on an idle GPU with
// PredictModel (predict/predict_model.h). Both are cached; the table of per-batch latencies is
// computed once per run. From one batch's prediction:
//   isolated_ms = latency_ms per batch × num_batches (calibrated when options.calibration has
//                 an entry for the GPU type × runtime); isolated_p10_ms / _p90_ms likewise
//   demand      = ModelLatency::demand (Σ_k device_ms_k / latency_ms of the host-bound
//                 composition), at least 0.01: the fraction of the batch time the GPU is busy
//                 with kernels (≈ DCGM SM_ACTIVE while it runs; host-bound small batches leave
//                 the GPU mostly idle).
// Task::runtime (when set) selects the runtime; an unknown name is InvalidArgument.
//   memory_mib  = kRuntimeOverheadMib + (4 B × parameters + 2 × the largest kernel's input +
//                 output activation bytes) / 2^20: fp32 weights resident, two activation
//                 buffers live at once (ORT's arena reuses the rest), plus the CUDA context
//                 and ORT arena (kRuntimeOverheadMib, the order of a CUDA context on Ampere).
//                 Task::memory_mib overrides it.
// A model is "resnet50" (→ MODELS_DIR/resnet50.onnx) or a path ending in ".onnx".
// Thread-safety: Profile is safe to call concurrently (the cache is under a mutex).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "hase/hw/gpu_catalog.h"
#include "hase/kernels/kernel.h"
#include "hase/predict/latency_calibration.h"
#include "hase/predict/precision.h"
#include "hase/predict/runtime_profile.h"
#include "hase/sched/latency_oracle.h"

namespace hase::sim {

inline constexpr double kRuntimeOverheadMib = 600;  // CUDA context + ORT arena, MiB

// The GPU memory one batch of `list` needs, MiB: the memory_mib formula above (what the
// scheduler's fit checks use for a task without Task::memory_mib; `hase predict` warns with it).
double ModelMemoryNeedMib(const KernelList& list);

struct PredictorOracleOptions {
  std::string models_dir = "models";  // where zoo names are looked up
  // How tasks without their own Task::runtime run (predict/runtime_profile.h): fusion profile,
  // host costs, copies, default precision.
  RuntimeProfile runtime = DefaultRuntime();
  // Arithmetic; nullopt = each task's runtime's default precision (predict/precision.h).
  std::optional<Precision> precision;
  sched::ContentionModel contention;  // the co-location model policies assume
  // Per-GPU-type × runtime correction of isolated_ms and its p10–p90 interval
  // (predict/latency_calibration.h, `hase calibrate`); nullptr = uncalibrated.
  std::shared_ptr<const LatencyCalibration> calibration;
};

// Sets options.runtime from a runtime name and options.precision from a precision name ("" =
// the runtime's default), as the --runtime / --precision flags of simulate and serve give them.
// Errors: InvalidArgument naming the flag.
Status SetRuntimeAndPrecision(const std::string& runtime, const std::string& precision,
                              PredictorOracleOptions& options);

class PredictorOracle final : public sched::LatencyOracle {
 public:
  // `catalog` must outlive the oracle (GPU types are resolved by name in it).
  PredictorOracle(const GpuCatalog& catalog, PredictorOracleOptions options)
      : catalog_(catalog), options_(std::move(options)) {}

  // Errors: NotFound (no such model file or GPU type), the kernel builder's or predictor's
  // error with the model as context.
  Result<sched::TaskProfile> Profile(const sched::Task& task,
                                     const sched::GpuType& type) const override;
  const sched::ContentionModel& contention() const override { return options_.contention; }
  // The first graph input's dims after the batch, read from the model's ONNX (weights are not
  // read); cached per model. Errors: as LatencyOracle::DeclaredInputShape; InvalidArgument names
  // the symbolic dims ("3xheightxwidth") so the caller can ask for a shape.
  Result<std::vector<int64_t>> DeclaredInputShape(const std::string& model) const override;

  // The ONNX path a task's model resolves to.
  std::string ModelPath(const std::string& model) const;

 private:
  struct Shape {
    double params = 0;
    double peak_activation_bytes = 0;
  };
  const GpuCatalog& catalog_;
  const PredictorOracleOptions options_;
  mutable std::mutex mu_;
  // ProfileKey → kernels (or the error building them).
  mutable std::map<std::string, std::shared_ptr<const Result<KernelList>>> kernels_;
  // model → its declared input dims (or why not).
  mutable std::map<std::string, Result<std::vector<int64_t>>> declared_;
  // (ProfileKey, type) → per-batch profile (isolated_ms per batch).
  mutable std::map<std::pair<std::string, std::string>, Result<sched::TaskProfile>> per_batch_;
};

}  // namespace hase::sim
