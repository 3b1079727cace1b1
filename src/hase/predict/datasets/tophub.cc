// TVM TopHub AutoTVM best tuned CUDA kernels (../shared/data/kernels/tophub), float32, inputs on
// device, batch 1 for convolutions.
//
// Mapping: conv2d and conv2d_winograd (same convolution, TVM's winograd template) → conv with
// op "conv2d" / "conv2d_winograd"; depthwise_conv2d → grouped_conv (groups = C); batch_matmul
// A[b,M,K] x B[b,N,K]^T → gemm batch b, m M, n N, k K. pad = pad_top / pad_left (TVM order
// top, left, bottom, right; asymmetric pads are rare and flagged "asymmetric_pad"). flops comes
// from the dataset (direct-algorithm count, as ours).
// GPU names (`-model=`): titanx → "GeForce GTX TITAN X" (Maxwell): on the 160 workloads both
// targets tuned, titanx is 1.90× slower than 1080ti (median; quartiles 1.75–2.02), as the
// Maxwell card's 6.7 TFLOP/s / 336 GB/s against 11.3 / 484 predicts, not the Pascal TITAN X
// (11 TFLOP/s, 480 GB/s, ≈ 1.0×); 1080ti; v100 (→ V100 SXM2 16 GB, assumed).
// Dropped: Jetson TX2 / Nano targets (integrated GPUs sharing LPDDR with the CPU: not scheduling
// targets and not in the catalog; 362 rows), conv2d_transpose and conv1d_transpose (output-size
// semantics differ; 9 rows).
#include <filesystem>

#include "hase/predict/csv.h"
#include "hase/predict/datasets/converters.h"
#include "hase/predict/datasets/table_access.h"

namespace hase::predict {

namespace fs = std::filesystem;
using datasets_internal::RowReader;

namespace {
std::string MapGpu(const std::string& model) {
  if (model == "titanx") return "GeForce GTX TITAN X";
  if (model == "1080ti") return "GeForce GTX 1080 Ti";
  if (model == "v100") return "Tesla V100-SXM2-16GB";
  return model;
}
}  // namespace

Result<std::vector<KernelSample>> ConvertTopHub(const std::string& dir, ConvertReport* report) {
  ConvertReport local;
  if (report == nullptr) report = &local;
  report->source = "tophub";
  std::vector<KernelSample> out;
  const std::string path = (fs::path(dir) / "tophub_cuda_v0.10.csv").string();
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  HASE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, path));
  for (const auto& row : t.rows()) {
    RowReader rr(t, row);
    ++report->read;
    const std::string op = rr.Text("op");
    const std::string target = rr.Text("gpu_model");
    if (target == "tx2" || target == "jetson-nano") {
      ++report->dropped["Jetson target (integrated GPU, not in the catalog)"];
      continue;
    }
    KernelSample s;
    s.source = "tophub";
    s.where = rr.where();
    s.gpu = MapGpu(rr.Text("gpu_model"));
    if (!ParseDType(rr.Text("dtype"), &s.dtype)) s.dtype = DType::kFloat;
    if (op == "conv2d" || op == "conv2d_winograd" || op == "depthwise_conv2d") {
      s.family = op == "depthwise_conv2d" ? KernelFamily::kGroupedConv : KernelFamily::kConv;
      s.op = op;
      s.n = rr.Int("N"); s.c = rr.Int("C"); s.h = rr.Int("H"); s.w = rr.Int("W");
      s.k = rr.Int("K"); s.r = rr.Int("R"); s.s = rr.Int("S");
      s.stride_h = rr.Int("stride_h"); s.stride_w = rr.Int("stride_w");
      s.pad_h = rr.Int("pad_top"); s.pad_w = rr.Int("pad_left");
      s.dilation_h = rr.Int("dilation_h"); s.dilation_w = rr.Int("dilation_w");
      s.groups = rr.Int("groups");
      if (rr.Int("pad_bottom") != s.pad_h || rr.Int("pad_right") != s.pad_w) {
        s.flags.push_back("asymmetric_pad");
        ++report->flagged["asymmetric_pad"];
      }
    } else if (op == "batch_matmul") {
      s.family = KernelFamily::kGemm;
      s.op = "bmm";
      s.gemm_batch = rr.Int("bmm_batch");
      s.gemm_m = rr.Int("bmm_M");
      s.gemm_n = rr.Int("bmm_N");
      s.gemm_k = rr.Int("bmm_K");
    } else {
      if (!rr.status().ok()) return rr.status();
      ++report->dropped["unsupported op " + op];
      continue;
    }
    s.flops = rr.Double("flops");
    s.latency_ms = rr.Double("best_ms");
    if (!rr.status().ok()) return rr.status();
    if (!(s.latency_ms > 0)) {
      ++report->dropped["non-positive latency"];
      continue;
    }
    FillDerived(s);
    out.push_back(std::move(s));
    ++report->kept;
  }
  return out;
}

}  // namespace hase::predict
