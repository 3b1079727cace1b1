#include "hase/predict/features.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hase::predict {

namespace {

// Stable op codes (never renumber; append only).
constexpr const char* kOpCodes[] = {
    "",           // 0 unknown
    "conv2d", "conv2d_relu", "conv2d_add_relu", "conv2d_winograd", "depthwise_conv2d",
    "linear", "bmm", "gemm", "matmul",
    "add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "relu", "gelu", "tanh",
    "softmax", "layernorm", "maxpool", "avgpool", "globalavgpool", "flatten", "sigmoid", "clip",
    "batchnorm", "concat", "transpose", "resize", "sub",
};

double Log2(double v) { return std::log2(std::max(v, 1e-12)); }
double Log2p(double v) { return std::log2(1.0 + std::max(v, 0.0)); }
double CeilDiv(double a, double b) { return std::ceil(a / b); }

double ComputeCapability(const std::string& cc) {
  // "8.6" → 8.6
  try {
    return std::stod(cc);
  } catch (...) {
    return 0;
  }
}

}  // namespace

int OpCode(const std::string& op) {
  for (size_t i = 1; i < std::size(kOpCodes); ++i) {
    if (op == kOpCodes[i]) return static_cast<int>(i);
  }
  return 0;
}

int SourceCode(const std::string& source) {
  if (source == "neusight") return 1;
  if (source == "deepbench") return 2;
  if (source == "tophub") return 3;
  if (source == "bencyq_hase") return 4;
  if (source == "probe") return 5;
  return 0;
}

NormFigures DatasheetFigures(const GpuSpec& gpu) {
  NormFigures f;
  f.fp32_tflops = gpu.fp32_tflops;
  f.fp16_tflops = gpu.fp16_tflops;
  f.tensor_fp16_tflops = gpu.tensor_fp16_tflops;
  f.dram_gbps = gpu.memory_bandwidth_gbps;
  return f;
}

NormFigures FiguresFromProfile(const MicrobenchmarkProfile& p) {
  NormFigures f;
  f.fp32_tflops = p.fp32_tflops;
  f.fp16_tflops = p.fp16_tflops;
  f.tensor_fp16_tflops = p.tensor_fp16_tflops;
  f.dram_gbps = p.dram_bandwidth_gbps;
  return f;
}

Roofline FiguresRoofline(const KernelSample& s, const GpuSpec& gpu, const NormFigures& f) {
  auto pick = [](double v, double dflt) { return v > 0 ? v : dflt; };
  double sheet = gpu.fp32_tflops;
  double peak = pick(f.fp32_tflops, gpu.fp32_tflops);
  const bool matmul = s.family == KernelFamily::kConv || s.family == KernelFamily::kGroupedConv ||
                      s.family == KernelFamily::kGemm;
  if (s.dtype == DType::kFloat16 || s.dtype == DType::kBFloat16) {
    if (matmul && gpu.tensor_fp16_tflops > 0) {
      sheet = gpu.tensor_fp16_tflops;
      peak = pick(f.tensor_fp16_tflops, sheet);
    } else {
      // FP16 storage on CUDA cores: the runtime computes in FP16 where that is faster, else in
      // FP32 ("pseudo fp16", DeepBench P100; GP102/GP104 run FP16 at 1/64 of FP32, so a GTX
      // 1080 Ti or TITAN Xp computes FP16 models in FP32). Before this, the FP16 figure alone was
      // used, which made fp16 kernels ~50x too slow on those GPUs.
      sheet = std::max(gpu.fp16_tflops, gpu.fp32_tflops);
      peak = std::max(pick(f.fp16_tflops, gpu.fp16_tflops), peak);
    }
  }
  const double bw = pick(f.dram_gbps, gpu.memory_bandwidth_gbps);
  Roofline r;
  r.peak_tflops = peak;
  r.datasheet_peak_tflops = sheet;
  r.compute_ms = peak > 0 ? s.flops / (peak * 1e12) * 1e3 : 0;
  r.memory_ms = bw > 0 ? s.bytes / (bw * 1e9) * 1e3 : 0;
  r.roofline_ms = std::max(r.compute_ms, r.memory_ms);
  return r;
}

Roofline FixedRoofline(const KernelSample& s, const GpuSpec& gpu) {
  return FiguresRoofline(s, gpu, DatasheetFigures(gpu));
}

double TransferMs(const KernelSample& s, const GpuSpec& gpu) {
  if (!s.includes_transfer) return 0;
  const double gbps = 0.8 * gpu.pcie_peak_gbps();
  return gbps > 0 ? (s.h2d_bytes + s.d2h_bytes) / (gbps * 1e9) * 1e3 : 0;
}

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> kNames = {
      // kernel
      "op", "dtype_bytes", "log2_flops", "log2_bytes", "log2_intensity", "log2_compute_ms",
      "log2_memory_ms", "log2_roofline_ms", "log2_compute_over_memory",
      // shape
      "log2_n", "log2_c", "log2_h", "log2_w", "log2_k", "r", "s", "stride", "pad", "log2_groups",
      "log2_out_hw", "log2_gemm_batch", "log2_gemm_m", "log2_gemm_n", "log2_gemm_k",
      "log2_elements", "log2_inner",
      // implicit-GEMM view and waves (computed from the shape, not measured)
      "log2_mm_m", "log2_mm_n", "log2_mm_k", "log2_tiles_per_sm", "wave_fill",
      "log2_threads_per_sm",
      // GPU datasheet
      "gpu_peak_tflops", "gpu_fp32_tflops", "gpu_tensor_tflops", "gpu_bandwidth_gbps", "gpu_sms",
      "gpu_clock_mhz", "gpu_l2_mib", "gpu_cc", "gpu_flop_per_byte", "log2_bytes_over_l2",
      "norm_compute_eff", "norm_bw_eff",
      // background load (LoadSnapshot, idle = 0)
      "load_sm_active", "load_sm_occupancy", "load_dram_active",
      // measurement setting
      "includes_transfer", "log2_transfer_ms", "source",
  };
  return kNames;
}

std::vector<float> ExtractFeatures(const KernelSample& s, const GpuSpec& gpu) {
  return ExtractFeatures(s, gpu, DatasheetFigures(gpu), true);
}

std::vector<float> ExtractFeatures(const KernelSample& s, const GpuSpec& gpu,
                                   const NormFigures& figures, bool spec_features) {
  const Roofline rf = FiguresRoofline(s, gpu, figures);
  const double peak = rf.peak_tflops;
  const double bw = figures.dram_gbps > 0 ? figures.dram_gbps : gpu.memory_bandwidth_gbps;
  // Implicit-GEMM view: conv → M = n·oh·ow, N = k, K = c/groups·r·s; gemm → m, n, k (× batch).
  double mm_m = 0, mm_n = 0, mm_k = 0, batch = 1;
  const bool conv = s.family == KernelFamily::kConv || s.family == KernelFamily::kGroupedConv;
  if (conv) {
    mm_m = static_cast<double>(s.n) * s.out_h() * s.out_w();
    mm_n = static_cast<double>(s.k) / std::max<int64_t>(s.groups, 1);
    mm_k = static_cast<double>(s.c) / std::max<int64_t>(s.groups, 1) * s.r * s.s;
    batch = std::max<int64_t>(s.groups, 1);
  } else if (s.family == KernelFamily::kGemm) {
    mm_m = s.gemm_m;
    mm_n = s.gemm_n;
    mm_k = s.gemm_k;
    batch = std::max<int64_t>(s.gemm_batch, 1);
  }
  const double sms = std::max(gpu.sms, 1);
  // 128x128 output tiles (a common cuBLAS/cuDNN tile) per SM and the fill of the last wave.
  double tiles = (mm_m > 0 && mm_n > 0) ? CeilDiv(mm_m, 128) * CeilDiv(mm_n, 128) * batch : 0;
  double tiles_per_sm = tiles / sms;
  double wave_fill = tiles_per_sm > 0 ? tiles_per_sm / std::ceil(tiles_per_sm) : 0;
  double out_elems = 0;
  if (conv || s.family == KernelFamily::kPooling) {
    out_elems = static_cast<double>(s.n) * (conv ? s.k : s.c) * s.out_h() * s.out_w();
  } else if (s.family == KernelFamily::kGemm) {
    out_elems = batch * mm_m * mm_n;
  } else {
    out_elems = s.elements;
  }
  const double threads_per_sm = out_elems / sms;
  const LoadSnapshot& l = s.load;
  std::vector<float> f = {
      static_cast<float>(OpCode(s.op)),
      static_cast<float>(DTypeSize(s.dtype)),
      static_cast<float>(Log2(s.flops)),
      static_cast<float>(Log2(s.bytes)),
      static_cast<float>(Log2(s.bytes > 0 ? s.flops / s.bytes : 0)),
      static_cast<float>(Log2(rf.compute_ms)),
      static_cast<float>(Log2(rf.memory_ms)),
      static_cast<float>(Log2(rf.roofline_ms)),
      static_cast<float>(Log2(rf.compute_ms) - Log2(rf.memory_ms)),
      static_cast<float>(Log2p(s.n)),
      static_cast<float>(Log2p(s.c)),
      static_cast<float>(Log2p(s.h)),
      static_cast<float>(Log2p(s.w)),
      static_cast<float>(Log2p(s.k)),
      static_cast<float>(s.r),
      static_cast<float>(s.s),
      static_cast<float>(s.stride_h),
      static_cast<float>(s.pad_h),
      static_cast<float>(Log2p(s.groups)),
      static_cast<float>(Log2p(static_cast<double>(s.out_h()) * s.out_w())),
      static_cast<float>(Log2p(s.gemm_batch)),
      static_cast<float>(Log2p(s.gemm_m)),
      static_cast<float>(Log2p(s.gemm_n)),
      static_cast<float>(Log2p(s.gemm_k)),
      static_cast<float>(Log2p(s.elements)),
      static_cast<float>(Log2p(s.inner)),
      static_cast<float>(Log2p(mm_m)),
      static_cast<float>(Log2p(mm_n)),
      static_cast<float>(Log2p(mm_k)),
      static_cast<float>(Log2p(tiles_per_sm)),
      static_cast<float>(wave_fill),
      static_cast<float>(Log2p(threads_per_sm)),
      static_cast<float>(peak),
      static_cast<float>(gpu.fp32_tflops),
      static_cast<float>(gpu.tensor_fp16_tflops),
      static_cast<float>(gpu.memory_bandwidth_gbps),
      static_cast<float>(gpu.sms),
      static_cast<float>(gpu.boost_clock_mhz),
      static_cast<float>(gpu.l2_mib),
      static_cast<float>(ComputeCapability(gpu.compute_capability)),
      static_cast<float>(bw > 0 ? peak * 1e3 / bw : 0),
      static_cast<float>(Log2(s.bytes / std::max(gpu.l2_mib * 1048576.0, 1.0))),
      static_cast<float>(rf.datasheet_peak_tflops > 0 ? peak / rf.datasheet_peak_tflops : 1),
      static_cast<float>(gpu.memory_bandwidth_gbps > 0 ? bw / gpu.memory_bandwidth_gbps : 1),
      static_cast<float>(l.EffectiveSmActive()),
      static_cast<float>(l.EffectiveSmOccupancy()),
      static_cast<float>(l.EffectiveDramActive()),
      static_cast<float>(s.includes_transfer ? 1 : 0),
      static_cast<float>(Log2p(TransferMs(s, gpu))),
      static_cast<float>(SourceCode(s.source)),
  };
  if (!spec_features) {
    static const std::vector<size_t> kSpecIdx = [] {
      std::vector<size_t> idx;
      const auto& names = FeatureNames();
      for (const char* n : {"gpu_peak_tflops", "gpu_fp32_tflops", "gpu_tensor_tflops",
                            "gpu_bandwidth_gbps", "gpu_sms", "gpu_clock_mhz", "gpu_l2_mib",
                            "gpu_cc"}) {
        idx.push_back(static_cast<size_t>(std::find(names.begin(), names.end(), n) - names.begin()));
      }
      return idx;
    }();
    for (size_t i : kSpecIdx) f[i] = std::numeric_limits<float>::quiet_NaN();
  }
  return f;
}

}  // namespace hase::predict
