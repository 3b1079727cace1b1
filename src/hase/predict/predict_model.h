// PredictModel: model-level latency = the host issue timeline composed with the device timeline,
// kernel by kernel (one stream, in launch order).
//
//   host:   t_h = batch_host + [H2D copy, the host waits for it]; per kernel t_h += host_k
//   device: start_k = max(t_h after issuing k, end_{k-1})  (the GPU idles while the host issues)
//           end_k   = start_k + device_ms_k                 (CUDA graph: end_{k-1} + node gap)
//   latency_ms = max(t_h, end_last + [D2H copy]) + sync_ms
// host_k = profile.launch_overhead_us + runtime.framework_us_per_kernel (0 inside a CUDA graph);
// device_ms_k from options.estimator (fallback: the analytic estimator). A runtime whose host
// cost per kernel exceeds its kernels' device time is host-bound: the GPU idles between kernels.
// The same timeline gives the demand the scheduler's contention model uses:
//   demand = Σ_k device_ms_k / latency_ms  (fraction of the batch the GPU is busy, ≈ SM_ACTIVE
//            while it runs; ≤ 1)
// throughput_samples_per_s = batch × 1000 / latency_ms. Formulas, runtime constants and their
// sources: docs/predictor.md, "Model-level composition" and "Runtime profiles".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/hw/gpu_spec.h"
#include "hase/hw/microbenchmark_profile.h"
#include "hase/kernels/kernel.h"
#include "hase/predict/kernel_latency_estimator.h"
#include "hase/predict/latency_calibration.h"
#include "hase/predict/precision.h"
#include "hase/predict/runtime_profile.h"
#include "hase/telemetry/load_snapshot.h"

namespace hase {

struct PredictOptions {
  // How the model is run (runtime_profile.h): host costs, copies, default precision. The caller
  // builds the kernel list for the same runtime (BuildRuntimeKernelList).
  RuntimeProfile runtime = DefaultRuntime();
  // Arithmetic the runtime uses (precision.h); nullopt = runtime.default_precision.
  std::optional<Precision> precision;
  // Primary per-kernel estimator; nullptr = analytic only. Not owned; must outlive the call.
  const KernelLatencyEstimator* estimator = nullptr;
  // Achievable figures of the GPU; nullopt = DerivedProfile(gpu).
  std::optional<MicrobenchmarkProfile> profile;
  // Host→device copy of the graph inputs (profile.h2d_gbps) before the first kernel;
  // nullopt = runtime.copies_io.
  std::optional<bool> include_input_transfer;
  // Device→host copy of the graph outputs (profile.d2h_gbps); nullopt = runtime.copies_io.
  std::optional<bool> include_output_transfer;
  // Host time to issue one kernel, µs; < 0 = profile.launch_overhead_us +
  // runtime.framework_us_per_kernel (0 when the runtime replays a CUDA graph).
  double dispatch_us = -1;
  // Per-batch synchronisation cost, µs (cudaStreamSynchronize + runtime bookkeeping); < 0 =
  // AnalyticParams::sync_us.
  double sync_us = -1;
  // Per-GPU-type × runtime correction and interval (latency_calibration.h); nullptr = none (the
  // uncalibrated interval). Not owned; must outlive the call.
  const LatencyCalibration* calibration = nullptr;
};

// One kernel's share of the model latency.
struct KernelTime {
  int index = 0;                            // Kernel::index
  std::string type;                         // Kernel::type
  KernelFamily family = KernelFamily::kOther;
  double device_ms = 0;                     // estimator's device time under load
  double effective_ms = 0;                  // what it adds to the device timeline: its device
                                            // time plus the idle time waiting for the host
  std::string estimator;                    // which estimator produced device_ms
};

struct ModelLatency {
  std::string model;                        // KernelList::model
  std::string gpu;                          // GpuSpec::id
  std::string runtime;                      // RuntimeProfile::name
  Precision precision = kDefaultPrecision;
  int64_t batch = 1;                        // KernelList::batch
  double latency_ms = 0;                    // per batch, all terms included, calibrated
                                            // (= uncalibrated_ms × calibration_factor)
  double latency_p10_ms = 0;                // p10–p90 interval of the measured latency per
  double latency_p90_ms = 0;                //   batch (latency_calibration.h)
  double uncalibrated_ms = 0;               // the composition's latency per batch
  double calibration_factor = 1;            // 1 when no calibration entry applied
  bool calibrated = false;                  // a calibration entry for this GPU × runtime applied
  double throughput_samples_per_s = 0;      // batch × 1000 / latency_ms
  double kernel_ms = 0;                     // Σ effective_ms: first kernel start to last end
  double device_ms = 0;                     // Σ device_ms: time the GPU is busy with kernels
  double host_ms = 0;                       // host issue time per batch (batch_host + Σ host_k)
  double idle_ms = 0;                       // GPU idle between kernels, waiting for the host
  double demand = 0;                        // device_ms / uncalibrated_ms, 0–1 (the timeline
                                            // terms are the composition's, uncalibrated)
  double sync_ms = 0;                       // per-batch synchronisation
  double transfer_ms = 0;                   // H2D + D2H when asked, else 0
  int fallback_kernels = 0;                 // kernels the primary estimator could not predict
  std::vector<KernelTime> kernels;          // launch order
};

// Predicts one batch of `kernels` on `gpu` under `load`. Errors: InvalidArgument (empty kernel
// list, batch < 1, a kernel with negative FLOPs/bytes), or the analytic estimator's error.
Result<ModelLatency> PredictModel(const KernelList& kernels, const GpuSpec& gpu,
                                  const LoadSnapshot& load, const PredictOptions& options);

}  // namespace hase
