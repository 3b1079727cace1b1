// Baidu DeepBench training results, conv forward + GEMM (../shared/data/kernels/deepbench).
// Library times (cuDNN / cuBLAS, 2016–2019 software stacks, different per GPU: PITFALLS 7).
//
// Mapping: conv rows → conv (groups 1, fwd_ms only; backward columns are not inference);
// GEMM rows → gemm with batch 1, m = M, n = N, k = K (C[MxN] = op(A)[MxK] op(B)[KxN]).
// precision fp32 → float; fp16_pseudo (P100) and fp16_mixed (V100, T4 tensor cores) → float16.
// GPU names: the workbook names mapped to catalog-resolvable spellings (kGpuNames). The P100 and
// V100 workbooks do not say which board; we assume the SXM2 16 GB parts (DGX-era runs) — an
// assumption recorded in docs/predictor-learned.md.
// Dropped: rows without a positive time. Flagged: nothing.
#include <filesystem>

#include "hase/predict/csv.h"
#include "hase/predict/datasets/converters.h"
#include "hase/predict/datasets/table_access.h"

namespace hase::predict {

namespace fs = std::filesystem;
using datasets_internal::RowReader;

namespace {

struct GpuName {
  const char* workbook;
  const char* gpu;
};
constexpr GpuName kGpuNames[] = {
    {"M40", "Tesla M40"},
    {"TitanX", "GeForce GTX TITAN X"},
    {"TitanX_Pascal", "TITAN X (Pascal)"},
    {"TitanXp", "TITAN Xp"},
    {"1080Ti", "GeForce GTX 1080 Ti"},
    {"P100", "Tesla P100-SXM2-16GB"},
    {"V100", "Tesla V100-SXM2-16GB"},
    {"T4", "Tesla T4"},
};

std::string MapGpu(const std::string& workbook) {
  for (const auto& g : kGpuNames) {
    if (workbook == g.workbook) return g.gpu;
  }
  return workbook;
}

DType MapPrecision(const std::string& p) {
  return (p == "fp16_pseudo" || p == "fp16_mixed") ? DType::kFloat16 : DType::kFloat;
}

}  // namespace

Result<std::vector<KernelSample>> ConvertDeepBench(const std::string& dir, ConvertReport* report) {
  ConvertReport local;
  if (report == nullptr) report = &local;
  report->source = "deepbench";
  std::vector<KernelSample> out;
  {
    const std::string path = (fs::path(dir) / "deepbench_train_conv.csv").string();
    HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
    HASE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, path));
    for (const auto& row : t.rows()) {
      RowReader rr(t, row);
      ++report->read;
      KernelSample s;
      s.source = "deepbench";
      s.where = rr.where();
      s.gpu = MapGpu(rr.Text("gpu"));
      s.family = KernelFamily::kConv;
      s.op = "conv2d";
      s.dtype = MapPrecision(rr.Text("precision"));
      s.n = rr.Int("N"); s.c = rr.Int("C"); s.h = rr.Int("H"); s.w = rr.Int("W");
      s.k = rr.Int("K"); s.r = rr.Int("R"); s.s = rr.Int("S");
      s.pad_h = rr.Int("pad_h"); s.pad_w = rr.Int("pad_w");
      s.stride_h = rr.Int("stride_h"); s.stride_w = rr.Int("stride_w");
      const std::string fwd = rr.Text("fwd_ms");
      if (!rr.status().ok()) return rr.status();
      auto ms = ParseDouble(fwd);
      if (!ms || !(*ms > 0)) {
        ++report->dropped["no forward time"];
        continue;
      }
      s.latency_ms = *ms;
      FillDerived(s);
      out.push_back(std::move(s));
      ++report->kept;
    }
  }
  {
    const std::string path = (fs::path(dir) / "deepbench_train_gemm.csv").string();
    HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
    HASE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, path));
    for (const auto& row : t.rows()) {
      RowReader rr(t, row);
      ++report->read;
      KernelSample s;
      s.source = "deepbench";
      s.where = rr.where();
      s.gpu = MapGpu(rr.Text("gpu"));
      s.family = KernelFamily::kGemm;
      s.op = "gemm";
      s.dtype = MapPrecision(rr.Text("precision"));
      s.gemm_batch = 1;
      s.gemm_m = rr.Int("M");
      s.gemm_n = rr.Int("N");
      s.gemm_k = rr.Int("K");
      const std::string ms_text = rr.Text("time_ms");
      if (!rr.status().ok()) return rr.status();
      auto ms = ParseDouble(ms_text);
      if (!ms || !(*ms > 0)) {
        ++report->dropped["no time"];
        continue;
      }
      s.latency_ms = *ms;
      FillDerived(s);
      out.push_back(std::move(s));
      ++report->kept;
    }
  }
  return out;
}

}  // namespace hase::predict
