#include "hase/predict/predict_model.h"

#include <algorithm>

#include "hase/predict/analytic_estimator.h"

namespace hase {
namespace {

double CopyMs(const std::vector<TensorInfo>& ts, double gbps, double scale) {
  double bytes = 0;
  for (const auto& t : ts) bytes += static_cast<double>(t.bytes()) * scale;
  return gbps > 0 ? bytes / (gbps * 1e6) : 0.0;
}

}  // namespace

Result<ModelLatency> PredictModel(const KernelList& kl, const GpuSpec& gpu,
                                  const LoadSnapshot& load, const PredictOptions& options) {
  if (kl.kernels.empty()) {
    return Status::InvalidArgument("kernel list is empty", kl.model,
                                   "check the model with `hase kernels`");
  }
  if (kl.batch < 1) {
    return Status::InvalidArgument("batch must be >= 1", kl.model);
  }
  const RuntimeProfile& rt = options.runtime;
  const Precision precision = options.precision.value_or(rt.default_precision);
  const AnalyticParams params = DefaultAnalyticParams();
  const AnalyticEstimator analytic(params);
  const MicrobenchmarkProfile profile = options.profile ? *options.profile : DerivedProfile(gpu);

  const double host_per_kernel_ms =
      (options.dispatch_us >= 0 ? options.dispatch_us
       : rt.per_kernel_launch   ? profile.launch_overhead_us + rt.framework_us_per_kernel
                                : 0.0) *
      1e-3;
  const double node_gap_ms = rt.per_kernel_launch ? 0.0 : rt.graph_node_gap_us * 1e-3;

  ModelLatency m;
  m.model = kl.model;
  m.gpu = gpu.id;
  m.runtime = rt.name;
  m.precision = precision;
  m.batch = kl.batch;
  m.kernels.reserve(kl.kernels.size());

  const double scale = StorageScale(precision);
  const double h2d_ms = options.include_input_transfer.value_or(rt.copies_io)
                            ? CopyMs(kl.graph_inputs, profile.h2d_gbps, scale)
                            : 0.0;
  const double d2h_ms = options.include_output_transfer.value_or(rt.copies_io)
                            ? CopyMs(kl.graph_outputs, profile.d2h_gbps, scale)
                            : 0.0;
  // Host timeline: run setup, then the input copy (from pageable host memory the host waits
  // for it), then one issue per kernel (or one graph launch).
  double t_host = rt.batch_host_us * 1e-3 + h2d_ms;
  double t_dev = t_host;  // the device is free once the inputs are there
  const double first_start = t_dev;
  for (const Kernel& k : kl.kernels) {
    KernelTime kt;
    kt.index = k.index;
    kt.type = k.type;
    kt.family = k.family;
    // View-only kernels (Reshape/Flatten on contiguous data) are aliased by the runtime: no
    // launch, no device time.
    // Host-placed shape arithmetic (Kernel::cpu_placed) runs on the CPU: no device time either.
    if (k.view_only || k.cpu_placed) {
      kt.estimator = k.view_only ? "none (view)" : "none (cpu)";
      m.kernels.push_back(std::move(kt));
      continue;
    }
    const ExecutionContext ctx{gpu, profile, load, EffectivePrecision(precision, IsConvolution(k.family))};
    Result<KernelEstimate> e = Status::Unsupported("no primary estimator");
    if (options.estimator != nullptr) {
      e = options.estimator->Estimate(k, ctx);
      if (!e.ok()) ++m.fallback_kernels;
    }
    if (!e.ok()) {
      e = analytic.Estimate(k, ctx);
      if (!e.ok()) return e.status().WithContext(kl.model);
    }
    kt.device_ms = e->latency_ms;
    kt.estimator = e->estimator;
    double start;
    if (rt.per_kernel_launch || options.dispatch_us >= 0) {
      t_host += host_per_kernel_ms;
      start = std::max(t_host, t_dev);
    } else {
      start = t_dev + node_gap_ms;
    }
    m.idle_ms += start - t_dev;
    kt.effective_ms = start + kt.device_ms - t_dev;
    t_dev = start + kt.device_ms;
    m.device_ms += kt.device_ms;
    m.kernels.push_back(std::move(kt));
  }
  m.kernel_ms = t_dev - first_start;
  m.host_ms = t_host - h2d_ms;
  m.transfer_ms = h2d_ms + d2h_ms;
  m.sync_ms = (options.sync_us >= 0 ? options.sync_us : params.sync_us) * 1e-3;
  m.latency_ms = std::max(t_host, t_dev + d2h_ms) + m.sync_ms;
  m.demand = std::clamp(m.device_ms / m.latency_ms, 0.0, 1.0);
  m.uncalibrated_ms = m.latency_ms;
  const CalibratedLatency c = options.calibration != nullptr
                                  ? options.calibration->Apply(m.latency_ms, gpu.id, rt.name)
                                  : LatencyCalibration::Uncalibrated(m.latency_ms);
  m.latency_ms = c.latency_ms;
  m.latency_p10_ms = c.p10_ms;
  m.latency_p90_ms = c.p90_ms;
  m.calibration_factor = c.factor;
  m.calibrated = c.calibrated;
  m.throughput_samples_per_s = static_cast<double>(m.batch) * 1000.0 / m.latency_ms;
  return m;
}

}  // namespace hase
