#include "hase/predict/analytic_estimator.h"

#include <algorithm>

#include "hase/hw/l2_residency.h"
#include "hase/predict/conv_algorithm.h"

namespace hase {

AnalyticParams DefaultAnalyticParams() { return AnalyticParams{}; }

namespace {

int64_t OutputElements(const Kernel& k) {
  int64_t n = 0;
  for (const auto& t : k.outputs) n += t.elements();
  return n;
}

}  // namespace

bool UsesTensorCores(KernelFamily f) {
  return f == KernelFamily::kConv || f == KernelFamily::kGemm;
}

Result<AnalyticEstimator::Terms> AnalyticEstimator::RooflineTerms(
    const Kernel& k, const ExecutionContext& ctx) const {
  if (k.flops < 0 || k.dram_bytes() < 0) {
    return Status::InvalidArgument("kernel has negative FLOPs or bytes",
                                   "kernel " + std::to_string(k.index) + " (" + k.type + ")");
  }
  const MicrobenchmarkProfile& p = ctx.profile;
  if (p.dram_bandwidth_gbps <= 0 || p.fp32_tflops <= 0) {
    return Status::InvalidArgument("microbenchmark profile lacks DRAM bandwidth or FP32 peak",
                                   ctx.gpu.id);
  }
  const int fam = std::clamp(static_cast<int>(k.family), 0, kNumKernelFamilies - 1);
  double peak = p.fp32_tflops;
  double eff = params_.compute_eff[fam];
  // Dense conv: the algorithm cuDNN picks (conv_algorithm.h) decides whether tensor cores run
  // it and how much arithmetic it really does.
  bool tensor_ok = UsesTensorCores(k.family);
  Terms t;
  if (k.family == KernelFamily::kConv && params_.conv_algorithm) {
    if (const auto sh = ConvShapeOf(k)) {
      t.algorithm = PickConvAlgorithm(*sh, ctx.precision, ctx.gpu);
      if (t.algorithm == ConvAlgorithm::kWinograd) {
        eff *= params_.winograd_gain;
      } else if (t.algorithm == ConvAlgorithm::kTensorCoreGemm) {
        const double red = static_cast<double>(sh->c) * sh->r * sh->s;
        t.reduction_eff = red / (red + params_.tensor_conv_k_half);
        eff *= t.reduction_eff;
      } else {
        tensor_ok = false;  // channels not a multiple of 8: CUDA cores
      }
    }
  }
  if (ctx.precision == Precision::kTf32) {
    if (tensor_ok && p.tensor_tf32_tflops > peak) {
      peak = p.tensor_tf32_tflops;
      eff *= params_.tf32_eff;
    }
  } else if (ctx.precision != Precision::kFp32) {
    peak = std::max(p.fp16_tflops, p.fp32_tflops);
    if (ctx.precision == Precision::kTensor && tensor_ok && p.tensor_fp16_tflops > peak) {
      peak = p.tensor_fp16_tflops;
      eff *= params_.tensor_eff;
    }
  }
  t.peak_tflops = peak;
  const double outputs = static_cast<double>(OutputElements(k));
  const double full = std::max(1, ctx.gpu.sms) * params_.min_outputs_per_sm;
  t.utilisation = outputs > 0 ? std::min(1.0, outputs / full) : 1.0;

  const double sm_share =
      std::max(0.1, 1.0 - params_.sm_contention * std::clamp(ctx.load.EffectiveSmActive(), 0.0, 1.0));
  const double dram_share = std::max(
      0.1, 1.0 - params_.dram_contention * std::clamp(ctx.load.EffectiveDramActive(), 0.0, 1.0));

  const double flops_per_ms = peak * 1e9 * eff * t.utilisation * sm_share;  // TFLOP/s → FLOP/ms
  t.compute_ms = k.flops > 0 ? k.flops / flops_per_ms : 0.0;
  const double bytes_scale = StorageScale(ctx.precision);
  // Input activations that fit in L2 are read at L2 bandwidth (hw/l2_residency.h).
  t.memory_ms = MemoryTimeMs(
      p, ctx.gpu.l2_mib, static_cast<double>(k.activation_bytes_read) * bytes_scale,
      static_cast<double>(k.weight_bytes_read + k.bytes_written) * bytes_scale,
      params_.memory_eff[fam] * dram_share);
  return t;
}

Result<KernelEstimate> AnalyticEstimator::Estimate(const Kernel& k,
                                                   const ExecutionContext& ctx) const {
  HASE_ASSIGN_OR_RETURN(Terms t, RooflineTerms(k, ctx));
  KernelEstimate e;
  e.latency_ms = std::max(t.compute_ms, t.memory_ms) + params_.kernel_floor_us * 1e-3;
  e.estimator = Name();
  return e;
}

}  // namespace hase
