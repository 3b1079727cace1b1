// bencyq/hase load-level data (../shared/data/interference/bencyq_hase): ONNX Runtime CUDA EP
// single-kernel models timed with a host timer around session.run on host arrays, while a
// stressor loaded the GPU; DCGM sm_active / sm_occupancy / dram_active read once per level.
//
// Every row gets includes_transfer = 1 with h2d_bytes = graph inputs (activation, plus the
// residual for Conv_Add_Relu) and d2h_bytes = the output (README "CAVEAT"). The load fields are
// the level's snapshot (weak evidence: PITFALLS 9).
//
// Shapes: the Kernel_ID `<OpType>_bs<N>_<C>c<H>x<W>_k<R>x<S>` and Input_Shape give the input but
// not the output channels or strides. We assume the torchvision layer each ID was cut from and
// flag the row "assumed_shape" (information, not excluded):
//   Conv_Add_Relu 1x1 → K = 4C, stride 1, pad 0 (ResNet-50 bottleneck expansion + residual)
//   Conv_Add_Relu 3x3, Conv_Relu 3x3, Conv 3x3 → K = C, stride 1, pad 1 (ResNet-18 / VGG)
//   Conv_Relu 7x7 on 3 channels → K = 64, stride 2, pad 3 (ResNet stem)
//   MaxPool 3x3 → stride 2, pad 1 (ResNet); GlobalAveragePool → window H x W
//   Gemm_bs<N>_512 → m = N, k = 512, n = 1000 (ResNet-18 classifier); Flatten → data movement.
// Dropped: rows whose OpType is none of these, or whose latency is not positive.
#include <algorithm>
#include <filesystem>
#include <regex>

#include "hase/predict/csv.h"
#include "hase/predict/datasets/converters.h"
#include "hase/predict/datasets/table_access.h"

namespace hase::predict {

namespace fs = std::filesystem;
using datasets_internal::RowReader;

namespace {

// Parses "128x64x56x56" into 4 integers.
bool ParseShape4(const std::string& s, int64_t out[4]) {
  static const std::regex re(R"((\d+)x(\d+)x(\d+)x(\d+))");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return false;
  for (int i = 0; i < 4; ++i) out[i] = std::stoll(m[i + 1].str());
  return true;
}

Status ConvertFile(const std::string& path, std::vector<KernelSample>* out, ConvertReport* report) {
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  HASE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, path));
  static const std::regex kernel_re(R"(_k(\d+)x(\d+)$)");
  static const std::regex gemm_re(R"(^Gemm_bs(\d+)_(\d+)$)");
  for (const auto& row : t.rows()) {
    RowReader rr(t, row);
    ++report->read;
    KernelSample s;
    s.source = "bencyq_hase";
    s.where = rr.where();
    s.gpu = rr.Text("GPU");
    const std::string id = rr.Text("Kernel_ID");
    const std::string type = rr.Text("OpType");
    const std::string shape = rr.Text("Input_Shape");
    s.load.sm_active = rr.Double("DCGM_sm_active");
    s.load.sm_occupancy = rr.Double("DCGM_sm_occupancy");
    s.load.dram_active = rr.Double("DCGM_dram_active");
    s.latency_ms = rr.Double("Latency_ms");
    if (!rr.status().ok()) return rr.status();
    s.includes_transfer = true;
    const double size = 4.0;  // fp32 throughout (README)
    int64_t in[4] = {0, 0, 0, 0};
    std::smatch m;
    if (type == "Gemm") {
      if (!std::regex_match(id, m, gemm_re)) {
        return Status::Parse("cannot parse Gemm Kernel_ID '" + id + "'", rr.where());
      }
      s.family = KernelFamily::kGemm;
      s.op = "gemm";
      s.gemm_batch = 1;
      s.gemm_m = std::stoll(m[1].str());
      s.gemm_k = std::stoll(m[2].str());
      s.gemm_n = 1000;
      s.h2d_bytes = size * s.gemm_m * s.gemm_k;
      s.d2h_bytes = size * s.gemm_m * s.gemm_n;
      s.flags.push_back("assumed_shape");
    } else {
      if (!ParseShape4(shape, in)) {
        return Status::Parse("cannot parse Input_Shape '" + shape + "'", rr.where());
      }
      s.n = in[0]; s.c = in[1]; s.h = in[2]; s.w = in[3];
      const double in_bytes = size * in[0] * in[1] * in[2] * in[3];
      if (type == "Flatten") {
        s.family = KernelFamily::kDataMovement;
        s.op = "flatten";
        s.elements = in[0] * in[1] * in[2] * in[3];
        s.n = s.c = s.h = s.w = 0;
        s.h2d_bytes = in_bytes;
        s.d2h_bytes = in_bytes;
      } else if (type == "GlobalAveragePool") {
        s.family = KernelFamily::kPooling;
        s.op = "globalavgpool";
        s.k = s.c;
        s.r = s.h;
        s.s = s.w;
        s.h2d_bytes = in_bytes;
        s.d2h_bytes = size * s.n * s.c;
      } else {
        if (!std::regex_search(id, m, kernel_re)) {
          return Status::Parse("cannot parse kernel size in Kernel_ID '" + id + "'", rr.where());
        }
        s.r = std::stoll(m[1].str());
        s.s = std::stoll(m[2].str());
        if (type == "MaxPool") {
          s.family = KernelFamily::kPooling;
          s.op = "maxpool";
          s.k = s.c;
          s.stride_h = s.stride_w = 2;
          s.pad_h = s.pad_w = 1;
        } else if (type == "Conv" || type == "Conv_Relu" || type == "Conv_Add_Relu") {
          s.family = KernelFamily::kConv;
          s.op = type == "Conv" ? "conv2d" : (type == "Conv_Relu" ? "conv2d_relu" : "conv2d_add_relu");
          if (s.r == 7 && s.c == 3) {
            s.k = 64;
            s.stride_h = s.stride_w = 2;
            s.pad_h = s.pad_w = 3;
          } else if (s.r == 1) {
            s.k = type == "Conv_Add_Relu" ? 4 * s.c : s.c;
            s.pad_h = s.pad_w = 0;
          } else {
            s.k = s.c;
            s.pad_h = s.r / 2;
            s.pad_w = s.s / 2;
          }
        } else {
          ++report->dropped["unknown OpType " + type];
          continue;
        }
        const double out_bytes = size * s.n * s.k * s.out_h() * s.out_w();
        s.h2d_bytes = in_bytes + (type == "Conv_Add_Relu" ? out_bytes : 0.0);
        s.d2h_bytes = out_bytes;
      }
      s.flags.push_back("assumed_shape");
    }
    if (!(s.latency_ms > 0)) {
      ++report->dropped["non-positive latency"];
      continue;
    }
    ++report->flagged["assumed_shape"];
    FillDerived(s);
    out->push_back(std::move(s));
    ++report->kept;
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<KernelSample>> ConvertBencyq(const std::string& dir, ConvertReport* report) {
  ConvertReport local;
  if (report == nullptr) report = &local;
  report->source = "bencyq_hase";
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("data_") && name.ends_with(".csv")) files.push_back(e.path().string());
  }
  if (ec) return Status::IO(ec.message(), dir);
  if (files.empty()) return Status::NotFound("no data_*.csv files", dir);
  std::sort(files.begin(), files.end());
  std::vector<KernelSample> out;
  for (const auto& f : files) HASE_RETURN_IF_ERROR(ConvertFile(f, &out, report));
  return out;
}

}  // namespace hase::predict
