#include "hase/predict/measured_run.h"

#include <cmath>

#include <fmt/format.h>

#include "hase/kernels/kernel_list_builder.h"
#include "hase/predict/csv.h"
#include "hase/predict/precision.h"
#include "hase/predict/runtime_profile.h"
#include "hase/telemetry/load_snapshot.h"

namespace hase {
namespace {

Status Bad(const std::string& where, const std::string& what) {
  return Status::Parse(what, where,
                       "rows are model,gpu,batch,latency_ms[,runtime,precision,input_shape] "
                       "(docs/predictor.md, \"Calibration and error bars\")");
}

Result<std::vector<MeasuredRun>> ReadProbe(const predict::CsvTable& t, const std::string& path) {
  std::vector<MeasuredRun> out;
  const auto col = [&](const char* name) { return *t.Find(name); };
  for (const char* need : {"gpu", "model", "batch", "load_level", "stream_median_ms", "graph_median_ms"}) {
    if (!t.Find(need)) return Bad(path, fmt::format("hase-probe model CSV without a '{}' column", need));
  }
  for (const auto& row : t.rows()) {
    const std::string where = fmt::format("{}:{}", path, row.line);
    if (row.fields[col("load_level")] != "idle") continue;  // calibration is of an idle GPU
    const auto batch = predict::ParseInt(row.fields[col("batch")]);
    if (!batch || *batch < 1) return Bad(where, "batch must be an integer >= 1");
    for (const auto& [column, runtime] : {std::pair<const char*, const char*>{"stream_median_ms", "tensorrt"},
                                          {"graph_median_ms", "ort-cuda-graph"}}) {
      const auto ms = predict::ParseDouble(row.fields[col(column)]);
      if (!ms || !std::isfinite(*ms) || *ms <= 0) continue;  // NaN: no graph capture
      MeasuredRun r;
      r.model = row.fields[col("model")];
      r.gpu = row.fields[col("gpu")];
      r.runtime = runtime;
      r.batch = *batch;
      r.latency_ms = *ms;
      r.where = where;
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

Result<std::vector<MeasuredRun>> ReadMeasuredRuns(const std::string& path) {
  HASE_ASSIGN_OR_RETURN(std::string text, predict::ReadTextFile(path));
  HASE_ASSIGN_OR_RETURN(predict::CsvTable t, predict::CsvTable::Parse(text, path));
  if (t.Find("stream_median_ms")) return ReadProbe(t, path);
  for (const char* need : {"model", "gpu", "latency_ms"}) {
    if (!t.Find(need)) return Bad(path, fmt::format("no '{}' column in the header", need));
  }
  const auto opt = [&](const predict::CsvTable::Row& row, const char* name) -> std::string {
    auto c = t.Find(name);
    return c ? row.fields[*c] : std::string();
  };
  std::vector<MeasuredRun> out;
  for (const auto& row : t.rows()) {
    MeasuredRun r;
    r.where = fmt::format("{}:{}", path, row.line);
    r.model = opt(row, "model");
    r.gpu = opt(row, "gpu");
    if (r.model.empty() || r.gpu.empty()) return Bad(r.where, "model and gpu must not be empty");
    r.runtime = opt(row, "runtime");
    r.precision = opt(row, "precision");
    if (const std::string b = opt(row, "batch"); !b.empty()) {
      const auto batch = predict::ParseInt(b);
      if (!batch || *batch < 1) return Bad(r.where, "batch must be an integer >= 1, not '" + b + "'");
      r.batch = *batch;
    }
    const std::string ms = opt(row, "latency_ms");
    const auto latency = predict::ParseDouble(ms);
    if (!latency || !std::isfinite(*latency) || *latency <= 0) {
      return Bad(r.where, "latency_ms must be a number > 0, not '" + ms + "'");
    }
    r.latency_ms = *latency;
    if (const std::string s = opt(row, "input_shape"); !s.empty()) {
      auto shape = ParseInputShape(s);
      if (!shape.ok()) return Bad(r.where, "input_shape: " + shape.status().message());
      r.input_shape = *shape;
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) return Bad(path, "no rows");
  return out;
}

Result<ModelLatency> PredictMeasuredRun(const MeasuredRun& run, const std::string& onnx_path,
                                        const GpuCatalog& catalog,
                                        const KernelLatencyEstimator* estimator,
                                        KernelList* kernels_out) {
  auto gpu = catalog.Find(run.gpu);
  if (!gpu.ok()) return gpu.status().WithContext(run.where);
  PredictOptions po;
  if (!run.runtime.empty()) {
    auto rt = FindRuntime(run.runtime);
    if (!rt.ok()) return rt.status().WithContext(run.where);
    po.runtime = *rt;
  }
  if (!run.precision.empty()) {
    auto p = ParsePrecision(run.precision);
    if (!p.ok()) return p.status().WithContext(run.where);
    po.precision = *p;
  }
  po.estimator = estimator;
  KernelListOptions ko;
  ko.batch = run.batch;
  ko.input_shape = run.input_shape;
  auto kl = BuildRuntimeKernelList(onnx_path, ko, po.runtime);
  if (!kl.ok()) return kl.status().WithContext(run.where);
  auto m = PredictModel(*kl, **gpu, LoadSnapshot::Idle(), po);
  if (!m.ok()) return m.status().WithContext(run.where);
  if (kernels_out != nullptr) *kernels_out = std::move(*kl);
  return m;
}

}  // namespace hase
