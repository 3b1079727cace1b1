// NeuSight (sitar-lab/NeuSight, ASPLOS'25) PyTorch 2.1 FP32 operator latencies
// (../shared/data/kernels/neusight/README.md). Latency = mean of the 5 fastest of 25 runs, ms,
// inputs on device, GPU otherwise idle (load columns left empty).
//
// Mapping (README "NOTE": for linear/bmm, N is the reduction dimension, K the output):
//   conv    nn.Conv2d(C, K, R, stride, padding) on (B, C, I, I)  → conv, groups 1, no bias
//   linear  nn.Linear(N, K) on (B, M, N)                          → gemm m = B·M, n = K, k = N
//   bmm     (B, M, N) x (B, N, K)                                 → gemm batch B, m M, n K, k N
//   add/mul/div/pow (two (B,H) tensors), *u (tensor ⊕ scalar), relu/gelu/tanh → elementwise
//   softmax, ln (LayerNorm(H))                                    → normalization, inner = H
// Dropped: nothing. Flagged: latency > 1000 ms → "suspect_throttle" (PITFALLS 6: kernels longer
// than ~1 s lose about half their throughput on P100/T4). Launch-configuration columns (kernel
// name, grid, block, warps/blocks per SM) are measurements and are not read (PITFALLS 2).
#include <algorithm>
#include <filesystem>

#include "hase/predict/csv.h"
#include "hase/predict/datasets/converters.h"
#include "hase/predict/datasets/table_access.h"

namespace hase::predict {

namespace fs = std::filesystem;
using datasets_internal::RowReader;

namespace {

constexpr double kThrottleMs = 1000.0;

struct OpInfo {
  const char* folder;
  const char* op;  // canonical op name
  KernelFamily family;
};

constexpr OpInfo kOps[] = {
    {"conv", "conv2d", KernelFamily::kConv},
    {"linear", "linear", KernelFamily::kGemm},
    {"bmm", "bmm", KernelFamily::kGemm},
    {"add", "add", KernelFamily::kElementwise},
    {"addu", "addu", KernelFamily::kElementwise},
    {"mul", "mul", KernelFamily::kElementwise},
    {"mulu", "mulu", KernelFamily::kElementwise},
    {"div", "div", KernelFamily::kElementwise},
    {"divu", "divu", KernelFamily::kElementwise},
    {"pow", "pow", KernelFamily::kElementwise},
    {"powu", "powu", KernelFamily::kElementwise},
    {"relu", "relu", KernelFamily::kElementwise},
    {"gelu", "gelu", KernelFamily::kElementwise},
    {"tanh", "tanh", KernelFamily::kElementwise},
    {"softmax", "softmax", KernelFamily::kNormalization},
    {"ln", "layernorm", KernelFamily::kNormalization},
};

Status ConvertFile(const std::string& path, const OpInfo& info, std::vector<KernelSample>* out,
                   ConvertReport* report) {
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  HASE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, path));
  const std::string folder = info.folder;
  for (const auto& row : t.rows()) {
    RowReader rr(t, row);
    ++report->read;
    KernelSample s;
    s.source = "neusight";
    s.where = rr.where();
    s.gpu = rr.Text("Device");
    s.family = info.family;
    s.op = info.op;
    s.dtype = DType::kFloat;
    s.latency_ms = rr.Double("Latency");
    if (folder == "conv") {
      s.n = rr.Int("B");
      s.c = rr.Int("Input_Channel");
      s.k = rr.Int("Output_Channel");
      s.r = s.s = rr.Int("Kernel_Szie");
      s.h = s.w = rr.Int("Input_Size");
      s.stride_h = s.stride_w = rr.Int("Stride");
      s.pad_h = s.pad_w = rr.Int("Padding");
    } else if (folder == "linear") {
      const long long b = rr.Int("B"), m = rr.Int("M"), n = rr.Int("N"), k = rr.Int("K");
      s.gemm_batch = 1;
      s.gemm_m = b * m;
      s.gemm_n = k;
      s.gemm_k = n;
    } else if (folder == "bmm") {
      s.gemm_batch = rr.Int("B");
      s.gemm_m = rr.Int("M");
      s.gemm_n = rr.Int("K");
      s.gemm_k = rr.Int("N");
    } else {
      const long long b = rr.Int("B"), h = rr.Int("H");
      s.elements = b * h;
      if (info.family == KernelFamily::kNormalization) s.inner = h;
    }
    if (!rr.status().ok()) return rr.status();
    if (!(s.latency_ms > 0)) {
      ++report->dropped["non-positive latency"];
      continue;
    }
    if (s.latency_ms > kThrottleMs) {
      s.flags.push_back("suspect_throttle");
      ++report->flagged["suspect_throttle"];
    }
    FillDerived(s);
    out->push_back(std::move(s));
    ++report->kept;
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<KernelSample>> ConvertNeuSight(const std::string& dir, ConvertReport* report) {
  ConvertReport local;
  if (report == nullptr) report = &local;
  report->source = "neusight";
  std::vector<KernelSample> out;
  std::error_code ec;
  for (const OpInfo& info : kOps) {
    const fs::path folder = fs::path(dir) / info.folder;
    if (!fs::is_directory(folder, ec)) {
      return Status::NotFound(std::string("NeuSight op folder missing: ") + info.folder, dir);
    }
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      const std::string name = e.path().filename().string();
      if (name.ends_with(".csv") || name.ends_with(".csv.gz")) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());  // deterministic order
    for (const auto& f : files) HASE_RETURN_IF_ERROR(ConvertFile(f, info, &out, report));
  }
  return out;
}

}  // namespace hase::predict
