#include "training_row.h"

#include <algorithm>
#include <optional>

#include "csv.h"

namespace hase::probe {
namespace {

std::string Num(int64_t v) { return FormatNumber(v); }
std::string Opt(const std::optional<double>& v) { return v ? FormatNumber(*v) : ""; }

}  // namespace

const std::vector<std::string>& TrainingHeader() {
  static const std::vector<std::string> kHeader = {
      "source", "gpu", "family", "op", "dtype",
      "n", "c", "h", "w", "k", "r", "s",
      "stride_h", "stride_w", "pad_h", "pad_w", "dilation_h", "dilation_w", "groups",
      "gemm_batch", "gemm_m", "gemm_n", "gemm_k", "elements", "inner", "flops", "bytes",
      "sm_active", "sm_occupancy", "dram_active", "pipe_tensor_active", "gr_engine_active",
      "gpu_util", "includes_transfer", "latency_ms", "flags",
      // probe's own columns
      "model", "batch", "kernel_index", "kernel_type", "impl", "load_level", "repeats", "p10_ms",
      "p90_ms", "stddev_ms"};
  return kHeader;
}

std::vector<std::string> TrainingRow(const TimedKernel& t) {
  const Kernel& k = *t.kernel;
  const KernelPlan& p = *t.plan;
  std::vector<std::string> shape(20);  // the columns n … inner of the header
  auto set = [&](int col, int64_t v) { shape[col] = Num(v); };
  // Indices into `shape`: n0 c1 h2 w3 k4 r5 s6 sh7 sw8 ph9 pw10 dh11 dw12 g13 gb14 gm15 gn16 gk17
  // elements18 inner19.
  switch (p.backend) {
    case Backend::kCudnnConv: {
      const ConvDims& d = p.conv;
      set(0, d.n); set(1, d.c); set(2, d.h); set(3, d.w); set(4, d.k); set(5, d.r); set(6, d.s);
      set(7, d.stride_h); set(8, d.stride_w); set(9, d.pad_h); set(10, d.pad_w);
      set(11, d.dilation_h); set(12, d.dilation_w); set(13, d.groups);
      break;
    }
    case Backend::kCudnnPool: {
      const PoolDims& d = p.pool;
      set(0, d.n); set(1, d.c); set(2, d.h); set(3, d.w); set(4, d.c); set(5, d.r); set(6, d.s);
      set(7, d.stride_h); set(8, d.stride_w); set(9, d.pad_h); set(10, d.pad_w);
      break;
    }
    case Backend::kCublasGemm: {
      const GemmDims& d = p.gemm;
      set(14, d.batch); set(15, d.m); set(16, d.n); set(17, d.k);
      break;
    }
    default: {
      int64_t largest = 0;
      for (const auto& in : k.inputs) largest = std::max(largest, in.elements());
      if (largest == 0) largest = p.out_elements;
      set(18, largest);
      if (p.backend == Backend::kRowNorm) set(19, p.inner);
      break;
    }
  }
  const LoadSnapshot load = ToLoadSnapshot(t.load);
  std::vector<std::string> row = {"probe", t.gpu, KernelFamilyName(k.family), p.op,
                                  DTypeName(p.dtype)};
  row.insert(row.end(), shape.begin(), shape.end());
  row.push_back(FormatNumber(k.flops));
  row.push_back(Num(k.dram_bytes()));
  row.push_back(Opt(load.sm_active));
  row.push_back(Opt(load.sm_occupancy));
  row.push_back(Opt(load.dram_active));
  row.push_back(Opt(load.pipe_tensor_active));
  row.push_back(Opt(load.gr_engine_active));
  row.push_back(Opt(load.gpu_util));
  row.push_back("0");
  row.push_back(FormatNumber(t.latency_ms.median));
  row.push_back(p.approximate ? "probe_approx" : "");
  row.push_back(t.model);
  row.push_back(Num(t.batch));
  row.push_back(Num(k.index));
  row.push_back(k.type);
  row.push_back(BackendName(p.backend));
  row.push_back(t.load_level);
  row.push_back(Num(t.latency_ms.n));
  row.push_back(FormatNumber(t.latency_ms.p10));
  row.push_back(FormatNumber(t.latency_ms.p90));
  row.push_back(FormatNumber(t.latency_ms.stddev));
  return row;
}

}  // namespace hase::probe
