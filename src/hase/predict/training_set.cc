#include "hase/predict/training_set.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "hase/predict/csv.h"

namespace hase::predict {

namespace {

constexpr const char* kColumns[] = {
    "source", "gpu", "family", "op", "dtype", "n", "c", "h", "w", "k", "r", "s",
    "stride_h", "stride_w", "pad_h", "pad_w", "dilation_h", "dilation_w", "groups",
    "gemm_batch", "gemm_m", "gemm_n", "gemm_k", "elements", "inner", "flops", "bytes",
    "sm_active", "sm_occupancy", "dram_active", "pipe_tensor_active", "gr_engine_active",
    "gpu_util", "includes_transfer", "h2d_bytes", "d2h_bytes", "latency_ms", "flags"};

std::vector<std::string> SplitFlags(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(';', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string Num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:.8g}", v);
}
std::string IntOrEmpty(int64_t v) { return v == 0 ? "" : std::to_string(v); }
std::string Opt(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }

}  // namespace

Result<std::vector<KernelSample>> ParseTrainingCsv(const std::string& text,
                                                   const std::string& name) {
  HASE_ASSIGN_OR_RETURN(CsvTable table, CsvTable::Parse(text, name));
  for (const char* req : {"source", "gpu", "family", "op", "latency_ms"}) {
    if (!table.Find(req)) {
      return Status::Parse(std::string("missing required column '") + req + "'", name + ":1",
                           "see docs/training-data.md");
    }
  }
  std::vector<KernelSample> out;
  out.reserve(table.rows().size());
  for (const auto& row : table.rows()) {
    const std::string where = name + ":" + std::to_string(row.line);
    auto text_of = [&](const char* col) -> std::string {
      auto i = table.Find(col);
      return i ? row.fields[*i] : std::string();
    };
    Status bad;
    auto int_of = [&](const char* col, int64_t dflt) -> int64_t {
      std::string v = text_of(col);
      if (v.empty()) return dflt;
      auto p = ParseInt(v);
      if (!p && bad.ok()) {
        bad = Status::Parse(fmt::format("column '{}': '{}' is not an integer", col, v), where);
      }
      return p.value_or(dflt);
    };
    auto dbl_of = [&](const char* col) -> std::optional<double> {
      std::string v = text_of(col);
      if (v.empty()) return std::nullopt;
      auto p = ParseDouble(v);
      if (!p && bad.ok()) {
        bad = Status::Parse(fmt::format("column '{}': '{}' is not a number", col, v), where);
      }
      return p;
    };
    KernelSample s;
    s.where = where;
    s.source = text_of("source");
    s.gpu = text_of("gpu");
    s.op = text_of("op");
    const std::string fam = text_of("family");
    if (!ParseKernelFamily(fam, &s.family)) {
      return Status::Parse("unknown family '" + fam + "'", where,
                           "use a KernelFamilyName: conv, grouped_conv, gemm, elementwise, "
                           "pooling, normalization, data_movement, other");
    }
    const std::string dt = text_of("dtype");
    if (!ParseDType(dt, &s.dtype)) return Status::Parse("unknown dtype '" + dt + "'", where);
    if (s.gpu.empty()) return Status::Parse("empty gpu", where);
    s.n = int_of("n", 0); s.c = int_of("c", 0); s.h = int_of("h", 0); s.w = int_of("w", 0);
    s.k = int_of("k", 0); s.r = int_of("r", 0); s.s = int_of("s", 0);
    s.stride_h = int_of("stride_h", 1); s.stride_w = int_of("stride_w", 1);
    s.pad_h = int_of("pad_h", 0); s.pad_w = int_of("pad_w", 0);
    s.dilation_h = int_of("dilation_h", 1); s.dilation_w = int_of("dilation_w", 1);
    s.groups = int_of("groups", 1);
    s.gemm_batch = int_of("gemm_batch", 0); s.gemm_m = int_of("gemm_m", 0);
    s.gemm_n = int_of("gemm_n", 0); s.gemm_k = int_of("gemm_k", 0);
    s.elements = int_of("elements", 0); s.inner = int_of("inner", 0);
    s.flops = dbl_of("flops").value_or(0);
    s.bytes = dbl_of("bytes").value_or(0);
    s.load.sm_active = dbl_of("sm_active");
    s.load.sm_occupancy = dbl_of("sm_occupancy");
    s.load.dram_active = dbl_of("dram_active");
    s.load.pipe_tensor_active = dbl_of("pipe_tensor_active");
    s.load.gr_engine_active = dbl_of("gr_engine_active");
    s.load.gpu_util = dbl_of("gpu_util");
    const std::string tr = text_of("includes_transfer");
    if (tr == "1" || tr == "true") {
      s.includes_transfer = true;
    } else if (!(tr.empty() || tr == "0" || tr == "false")) {
      return Status::Parse("includes_transfer must be 0 or 1, got '" + tr + "'", where);
    }
    s.h2d_bytes = dbl_of("h2d_bytes").value_or(0);
    s.d2h_bytes = dbl_of("d2h_bytes").value_or(0);
    auto lat = dbl_of("latency_ms");
    if (!bad.ok()) return bad;
    if (!lat || !(*lat > 0) || !std::isfinite(*lat)) {
      return Status::Parse("latency_ms must be a positive number, got '" + text_of("latency_ms") + "'",
                           where);
    }
    s.latency_ms = *lat;
    s.flags = SplitFlags(text_of("flags"));
    FillDerived(s);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<KernelSample>> ReadTrainingCsv(const std::string& path) {
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseTrainingCsv(text, path);
}

std::string FormatTrainingCsv(const std::vector<KernelSample>& samples,
                              const std::vector<std::string>& comment) {
  std::string out = "# schema: hase-kernels 1\n";
  for (const auto& c : comment) out += "# " + c + "\n";
  for (size_t i = 0; i < std::size(kColumns); ++i) {
    out += (i ? "," : "");
    out += kColumns[i];
  }
  out += "\n";
  for (const auto& s : samples) {
    const bool conv_like = s.family == KernelFamily::kConv ||
                           s.family == KernelFamily::kGroupedConv ||
                           s.family == KernelFamily::kPooling;
    std::string flags;
    for (size_t i = 0; i < s.flags.size(); ++i) flags += (i ? ";" : "") + s.flags[i];
    std::vector<std::string> f = {
        CsvEscape(s.source), CsvEscape(s.gpu), KernelFamilyName(s.family), CsvEscape(s.op),
        DTypeName(s.dtype), IntOrEmpty(s.n), IntOrEmpty(s.c), IntOrEmpty(s.h), IntOrEmpty(s.w),
        IntOrEmpty(s.k), IntOrEmpty(s.r), IntOrEmpty(s.s),
        conv_like ? std::to_string(s.stride_h) : "", conv_like ? std::to_string(s.stride_w) : "",
        conv_like ? std::to_string(s.pad_h) : "", conv_like ? std::to_string(s.pad_w) : "",
        conv_like ? std::to_string(s.dilation_h) : "", conv_like ? std::to_string(s.dilation_w) : "",
        conv_like ? std::to_string(s.groups) : "", IntOrEmpty(s.gemm_batch), IntOrEmpty(s.gemm_m),
        IntOrEmpty(s.gemm_n), IntOrEmpty(s.gemm_k), IntOrEmpty(s.elements), IntOrEmpty(s.inner),
        s.flops > 0 ? Num(s.flops) : "", s.bytes > 0 ? Num(s.bytes) : "", Opt(s.load.sm_active),
        Opt(s.load.sm_occupancy), Opt(s.load.dram_active), Opt(s.load.pipe_tensor_active),
        Opt(s.load.gr_engine_active), Opt(s.load.gpu_util), s.includes_transfer ? "1" : "0",
        s.h2d_bytes > 0 ? Num(s.h2d_bytes) : "", s.d2h_bytes > 0 ? Num(s.d2h_bytes) : "",
        fmt::format("{:.9g}", s.latency_ms), CsvEscape(flags)};
    for (size_t i = 0; i < f.size(); ++i) {
      out += (i ? "," : "");
      out += f[i];
    }
    out += "\n";
  }
  return out;
}

Status WriteTrainingCsv(const std::string& path, const std::vector<KernelSample>& samples,
                        const std::vector<std::string>& comment) {
  return WriteTextFile(path, FormatTrainingCsv(samples, comment));
}

}  // namespace hase::predict
