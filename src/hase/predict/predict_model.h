// PredictModel: model-level latency = composition of per-kernel predictions.
//
// latency_ms = Σ_k max(device_ms_k, dispatch_ms)          (kernels on one stream, in order)
//            + sync_ms                                    (one stream synchronisation per batch)
//            + [input H2D copy] + [output D2H copy]       (only when asked)
// device_ms_k comes from options.estimator (fallback: the analytic estimator); dispatch_ms is
// the host-side cost to launch one kernel: while the GPU runs a kernel longer than that, the
// host queues the next one, so only kernels shorter than the dispatch cost expose it.
// throughput_samples_per_s = batch × 1000 / latency_ms. Formulas and constants:
// docs/predictor.md.
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
#include "hase/predict/precision.h"
#include "hase/telemetry/load_snapshot.h"

namespace hase {

struct PredictOptions {
  // Arithmetic the runtime uses (precision.h); default TF32 as ORT's CUDA EP.
  Precision precision = kDefaultPrecision;
  // Primary per-kernel estimator; nullptr = analytic only. Not owned; must outlive the call.
  const KernelLatencyEstimator* estimator = nullptr;
  // Achievable figures of the GPU; nullopt = DerivedProfile(gpu).
  std::optional<MicrobenchmarkProfile> profile;
  // Add the host→device copy of the graph inputs (pinned memory, profile.h2d_gbps).
  bool include_input_transfer = false;
  // Add the device→host copy of the graph outputs (profile.d2h_gbps).
  bool include_output_transfer = false;
  // Host-side dispatch cost per kernel, µs; < 0 = profile.launch_overhead_us + the runtime's
  // own per-kernel cost (AnalyticParams::runtime_dispatch_us, docs/predictor.md).
  double dispatch_us = -1;
  // Per-batch synchronisation cost, µs (cudaStreamSynchronize + runtime bookkeeping); < 0 =
  // AnalyticParams::sync_us.
  double sync_us = -1;
};

// One kernel's share of the model latency.
struct KernelTime {
  int index = 0;                            // Kernel::index
  std::string type;                         // Kernel::type
  KernelFamily family = KernelFamily::kOther;
  double device_ms = 0;                     // estimator's device time under load
  double effective_ms = 0;                  // max(device_ms, dispatch): what it adds to latency
  std::string estimator;                    // which estimator produced device_ms
};

struct ModelLatency {
  std::string model;                        // KernelList::model
  std::string gpu;                          // GpuSpec::id
  Precision precision = kDefaultPrecision;
  int64_t batch = 1;                        // KernelList::batch
  double latency_ms = 0;                    // per batch, all terms included
  double throughput_samples_per_s = 0;      // batch × 1000 / latency_ms
  double kernel_ms = 0;                     // Σ effective_ms
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
