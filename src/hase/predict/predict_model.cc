#include "hase/predict/predict_model.h"

#include <algorithm>

#include "hase/predict/analytic_estimator.h"

namespace hase {

Result<ModelLatency> PredictModel(const KernelList& kl, const GpuSpec& gpu,
                                  const LoadSnapshot& load, const PredictOptions& options) {
  if (kl.kernels.empty()) {
    return Status::InvalidArgument("kernel list is empty", kl.model,
                                   "check the model with `hase kernels`");
  }
  if (kl.batch < 1) {
    return Status::InvalidArgument("batch must be >= 1", kl.model);
  }
  const AnalyticParams params = DefaultAnalyticParams();
  const AnalyticEstimator analytic(params);
  const MicrobenchmarkProfile profile = options.profile ? *options.profile : DerivedProfile(gpu);
  const ExecutionContext ctx{gpu, profile, load, options.precision};

  const double dispatch_ms =
      (options.dispatch_us >= 0 ? options.dispatch_us
                                : profile.launch_overhead_us + params.runtime_dispatch_us) *
      1e-3;

  ModelLatency m;
  m.model = kl.model;
  m.gpu = gpu.id;
  m.precision = options.precision;
  m.batch = kl.batch;
  m.kernels.reserve(kl.kernels.size());
  for (const Kernel& k : kl.kernels) {
    KernelTime kt;
    kt.index = k.index;
    kt.type = k.type;
    kt.family = k.family;
    Result<KernelEstimate> e = Status::Unsupported("no primary estimator");
    if (options.estimator != nullptr) {
      e = options.estimator->Estimate(k, ctx);
      if (!e.ok()) ++m.fallback_kernels;
    }
    if (!e.ok()) {
      e = analytic.Estimate(k, ctx);
      if (!e.ok()) return e.status().WithContext(kl.model);
    }
    // View-only kernels (Reshape/Flatten on contiguous data) are aliased by the runtime: no
    // launch, no device time.
    if (k.view_only) {
      kt.device_ms = 0;
      kt.effective_ms = 0;
    } else {
      kt.device_ms = e->latency_ms;
      kt.effective_ms = std::max(kt.device_ms, dispatch_ms);
    }
    kt.estimator = k.view_only ? "none (view)" : e->estimator;
    m.kernel_ms += kt.effective_ms;
    m.kernels.push_back(std::move(kt));
  }
  m.sync_ms = (options.sync_us >= 0 ? options.sync_us : params.sync_us) * 1e-3;
  auto copy_ms = [](const std::vector<TensorInfo>& ts, double gbps, double scale) {
    double bytes = 0;
    for (const auto& t : ts) bytes += static_cast<double>(t.bytes()) * scale;
    return gbps > 0 ? bytes / (gbps * 1e6) : 0.0;
  };
  const double scale = StorageScale(options.precision);
  if (options.include_input_transfer) m.transfer_ms += copy_ms(kl.graph_inputs, profile.h2d_gbps, scale);
  if (options.include_output_transfer) m.transfer_ms += copy_ms(kl.graph_outputs, profile.d2h_gbps, scale);
  m.latency_ms = m.kernel_ms + m.sync_ms + m.transfer_ms;
  m.throughput_samples_per_s = static_cast<double>(m.batch) * 1000.0 / m.latency_ms;
  return m;
}

}  // namespace hase
