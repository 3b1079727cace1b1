#include "hase/predict/probe_emulation.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

namespace hase::predict {

namespace {

bool IsFp16(const KernelSample& s) {
  return s.dtype == DType::kFloat16 || s.dtype == DType::kBFloat16;
}

// The n candidates with the largest key (ties: lower index first).
std::vector<size_t> Top(std::vector<size_t> cand, size_t n,
                        const std::function<double(const KernelSample&)>& key,
                        const std::vector<KernelSample>& rows) {
  std::stable_sort(cand.begin(), cand.end(),
                   [&](size_t a, size_t b) { return key(rows[a]) > key(rows[b]); });
  if (cand.size() > n) cand.resize(n);
  return cand;
}

// Achieved TFLOP/s of the compute probe for rows of one precision (fp16 or not): the n largest
// GEMMs of each GEMM op ("linear", "bmm", "gemm", …), max FLOP/s over all of them.
std::vector<size_t> ComputeProbe(const std::vector<KernelSample>& rows,
                                 const std::vector<size_t>& idx, bool fp16, size_t n,
                                 double* tflops) {
  std::map<std::string, std::vector<size_t>> by_op;
  for (size_t i : idx) {
    const KernelSample& s = rows[i];
    if (s.includes_transfer || IsFp16(s) != fp16 || s.latency_ms <= 0 || s.flops <= 0) continue;
    if (s.latency_ms > kProbeMaxKernelMs) continue;
    if (s.family == KernelFamily::kGemm) by_op[s.op].push_back(i);
  }
  std::vector<size_t> used;
  *tflops = 0;
  for (const auto& [op, cand] : by_op) {
    for (size_t i : Top(cand, n, [](const KernelSample& s) { return s.flops; }, rows)) {
      used.push_back(i);
      *tflops = std::max(*tflops, rows[i].flops / (rows[i].latency_ms * 1e9));
    }
  }
  return used;
}

}  // namespace

ProbeEmulation EmulateProbe(const std::vector<KernelSample>& rows, const std::vector<size_t>& idx,
                            const GpuSpec& gpu, size_t rows_per_probe) {
  ProbeEmulation out;
  if (rows_per_probe == 0) return out;
  double fp32 = 0, fp16 = 0;
  std::vector<size_t> used = ComputeProbe(rows, idx, false, rows_per_probe, &fp32);
  std::vector<size_t> u16 = ComputeProbe(rows, idx, true, rows_per_probe, &fp16);
  out.figures.fp32_tflops = fp32;
  if (gpu.tensor_fp16_tflops > 0) {
    out.figures.tensor_fp16_tflops = fp16;
  } else {
    out.figures.fp16_tflops = fp16;
  }
  used.insert(used.end(), u16.begin(), u16.end());
  std::vector<size_t> elem;
  for (size_t i : idx) {
    const KernelSample& s = rows[i];
    if (s.family == KernelFamily::kElementwise && !s.includes_transfer && s.latency_ms > 0 &&
        s.bytes > 0) {
      elem.push_back(i);
    }
  }
  std::vector<size_t> ub =
      Top(elem, rows_per_probe, [](const KernelSample& s) { return s.bytes; }, rows);
  for (size_t i : ub) {
    out.figures.dram_gbps = std::max(out.figures.dram_gbps, rows[i].bytes / (rows[i].latency_ms * 1e6));
  }
  used.insert(used.end(), ub.begin(), ub.end());
  std::map<std::string, std::vector<size_t>> elem_by_source;
  for (size_t i : elem) elem_by_source[rows[i].source].push_back(i);
  for (const auto& [source, cand] : elem_by_source) {
    std::vector<size_t> uf =
        Top(cand, rows_per_probe, [](const KernelSample& s) { return -s.bytes; }, rows);
    std::vector<double> lat;
    for (size_t i : uf) lat.push_back(rows[i].latency_ms);
    std::sort(lat.begin(), lat.end());
    const size_t m = lat.size() / 2;
    out.figures.floor_ms[source] = lat.size() % 2 ? lat[m] : 0.5 * (lat[m - 1] + lat[m]);
    used.insert(used.end(), uf.begin(), uf.end());
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  out.rows_used = std::move(used);
  return out;
}

}  // namespace hase::predict
