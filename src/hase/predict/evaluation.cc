#include "hase/predict/evaluation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "hase/predict/probe_emulation.h"

namespace hase::predict {

Result<SplitKind> ParseSplitKind(const std::string& name) {
  if (name == "none") return SplitKind::kNone;
  if (name == "random") return SplitKind::kRandom;
  if (name == "by-shape") return SplitKind::kByShape;
  if (name == "leave-gpu-out") return SplitKind::kLeaveGpuOut;
  if (name == "leave-source-out") return SplitKind::kLeaveSourceOut;
  return Status::InvalidArgument("unknown split '" + name + "'", "--split",
                                 "use none, random, by-shape, leave-gpu-out or leave-source-out");
}

const char* SplitKindName(SplitKind k) {
  switch (k) {
    case SplitKind::kNone: return "none";
    case SplitKind::kRandom: return "random";
    case SplitKind::kByShape: return "by-shape";
    case SplitKind::kLeaveGpuOut: return "leave-gpu-out";
    case SplitKind::kLeaveSourceOut: return "leave-source-out";
  }
  return "none";
}

namespace {

struct Fold {
  std::string name;
  std::vector<size_t> train, test;
};

// Uniform integer in [0, n) from the engine's raw output (identical across standard libraries).
size_t Draw(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

// Fisher–Yates with Draw (std::shuffle differs between libraries).
template <typename T>
void Shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Draw(rng, i)]);
}

std::vector<Fold> MakeFolds(const std::vector<KernelSample>& rows,
                            const std::vector<const GpuSpec*>& gpus, const EvalOptions& o) {
  std::vector<Fold> folds;
  std::mt19937_64 rng(o.seed);
  if (o.split == SplitKind::kRandom) {
    std::vector<size_t> idx(rows.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    Shuffle(idx, rng);
    const size_t ntest = static_cast<size_t>(std::round(o.test_fraction * idx.size()));
    Fold f{"test", {}, {}};
    for (size_t i = 0; i < idx.size(); ++i) (i < ntest ? f.test : f.train).push_back(idx[i]);
    std::sort(f.train.begin(), f.train.end());
    std::sort(f.test.begin(), f.test.end());
    folds.push_back(std::move(f));
  } else if (o.split == SplitKind::kByShape) {
    std::set<std::string> keys_set;
    std::vector<std::string> key_of(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) keys_set.insert(key_of[i] = ShapeKey(rows[i]));
    std::vector<std::string> keys(keys_set.begin(), keys_set.end());
    Shuffle(keys, rng);
    const size_t ntest = static_cast<size_t>(std::round(o.test_fraction * keys.size()));
    std::set<std::string> test_keys(keys.begin(), keys.begin() + ntest);
    Fold f{"test", {}, {}};
    for (size_t i = 0; i < rows.size(); ++i) {
      (test_keys.count(key_of[i]) ? f.test : f.train).push_back(i);
    }
    folds.push_back(std::move(f));
  } else {
    const bool by_gpu = o.split == SplitKind::kLeaveGpuOut;
    std::map<std::string, Fold> by;
    std::set<std::string> names;
    for (size_t i = 0; i < rows.size(); ++i) names.insert(by_gpu ? gpus[i]->id : rows[i].source);
    for (const auto& n : names) {
      Fold f{n, {}, {}};
      for (size_t i = 0; i < rows.size(); ++i) {
        const std::string& v = by_gpu ? gpus[i]->id : rows[i].source;
        (v == n ? f.test : f.train).push_back(i);
      }
      folds.push_back(std::move(f));
    }
  }
  return folds;
}

}  // namespace

Result<std::vector<EvalRow>> CrossValidate(const std::vector<KernelSample>& rows,
                                           const std::vector<const GpuSpec*>& gpus,
                                           const EvalOptions& options,
                                           const std::function<void(const std::string&)>& progress,
                                           EvalStats* stats) {
  if (options.split == SplitKind::kNone) {
    return Status::InvalidArgument("CrossValidate needs a split", "--split");
  }
  const bool logo = options.split == SplitKind::kLeaveGpuOut;
  if ((options.calibrate_rows > 0 || options.few_shot > 0) && !logo) {
    return Status::InvalidArgument("calibration applies to --split leave-gpu-out only", "--calibrate");
  }
  if (options.calibrate_rows > 0 && options.train.profile_source != "probe") {
    return Status::InvalidArgument("--calibrate needs a model trained on probe figures",
                                   "--calibrate", "add --profile-source probe");
  }
  EvalStats local;
  if (stats == nullptr) stats = &local;
  *stats = EvalStats{};
  std::vector<EvalRow> out;
  for (const Fold& fold : MakeFolds(rows, gpus, options)) {
    if (fold.train.empty() || fold.test.empty()) continue;
    if (progress) progress(fold.name);
    std::vector<KernelSample> tr, te;
    std::vector<const GpuSpec*> gtr, gte;
    for (size_t i : fold.train) {
      tr.push_back(rows[i]);
      gtr.push_back(gpus[i]);
    }
    // Emulated probe on the held-out GPU's own rows; those rows are not scored.
    std::map<std::string, NormFigures> figures;
    std::set<size_t> calib;
    if (logo && options.calibrate_rows > 0) {
      ProbeEmulation pe = EmulateProbe(rows, fold.test, *gpus[fold.test[0]], options.calibrate_rows);
      figures[gpus[fold.test[0]]->id] = pe.figures;
      calib.insert(pe.rows_used.begin(), pe.rows_used.end());
      stats->calibration_rows += pe.rows_used.size();
    }
    for (size_t i : fold.test) {
      if (calib.count(i)) continue;
      te.push_back(rows[i]);
      gte.push_back(gpus[i]);
    }
    LearnedTrainOptions train = options.train;
    train.only_families.clear();
    for (const auto& s : te) {
      if (std::find(train.only_families.begin(), train.only_families.end(), s.family) ==
          train.only_families.end()) {
        train.only_families.push_back(s.family);
      }
    }
    HASE_ASSIGN_OR_RETURN(LearnedKernelModel model, LearnedKernelModel::Train(tr, gtr, train));
    const RooflineBaseline baseline = RooflineBaseline::Fit(tr, gtr);
    HASE_ASSIGN_OR_RETURN(std::vector<double> pred, model.Predict(te, gte, true, figures));
    std::vector<bool> fit_row(te.size(), false);
    if (logo && options.few_shot > 0) {
      // Few-shot scale per (source, family): seeded choice of few_shot rows per group.
      std::map<std::string, std::vector<size_t>> groups;
      for (size_t j = 0; j < te.size(); ++j) {
        if (std::isfinite(pred[j])) {
          groups[te[j].source + "|" + KernelFamilyName(te[j].family)].push_back(j);
        }
      }
      std::mt19937_64 rng(options.seed);
      for (auto& [key, g] : groups) {
        Shuffle(g, rng);
        const size_t k = std::min(options.few_shot, g.size() / 2);  // score at least half
        if (k == 0) continue;
        std::vector<double> logr;
        for (size_t q = 0; q < k; ++q) {
          logr.push_back(std::log(te[g[q]].latency_ms / pred[g[q]]));
          fit_row[g[q]] = true;
        }
        std::sort(logr.begin(), logr.end());
        const double m = logr.size() % 2 ? logr[logr.size() / 2]
                                         : 0.5 * (logr[logr.size() / 2 - 1] + logr[logr.size() / 2]);
        for (size_t q = k; q < g.size(); ++q) pred[g[q]] *= std::exp(m);
        stats->few_shot_rows += k;
      }
    }
    for (size_t j = 0; j < te.size(); ++j) {
      if (fit_row[j]) continue;
      EvalRow r;
      auto fo = figures.find(gte[j]->id);
      r.floor_ms = model.DispatchFloorMs(te[j], gte[j]->id, fo == figures.end() ? nullptr : &fo->second);
      r.baseline_ms = baseline.Predict(te[j], *gte[j]);
      r.sample = std::move(te[j]);
      r.gpu = gte[j];
      r.predicted_ms = pred[j];
      r.fold = fold.name;
      out.push_back(std::move(r));
    }
  }
  if (out.empty()) return Status::InvalidArgument("the split produced no test rows", "--split");
  return out;
}

Result<std::vector<EvalRow>> ScoreModel(const LearnedKernelModel& model,
                                        const std::vector<KernelSample>& rows,
                                        const std::vector<const GpuSpec*>& gpus) {
  HASE_ASSIGN_OR_RETURN(std::vector<double> pred, model.Predict(rows, gpus));
  const RooflineBaseline baseline = RooflineBaseline::Fit(rows, gpus);
  std::vector<EvalRow> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EvalRow r;
    r.sample = rows[i];
    r.gpu = gpus[i];
    r.predicted_ms = pred[i];
    r.fold = "all";
    r.floor_ms = model.DispatchFloorMs(rows[i], gpus[i]->id);
    r.baseline_ms = baseline.Predict(rows[i], *gpus[i]);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// The ORT-kernel view of a training row, for the analytic estimator: shapes as tensors, FLOPs as
// counted, the row's bytes as FP32-equivalent DRAM bytes (the estimator scales by precision).
Kernel SampleToKernel(const KernelSample& s, Precision precision) {
  Kernel k;
  k.family = s.family;
  k.op_type = s.op;
  k.type = s.op;
  const DType dt = s.dtype;
  if (IsConvolution(s.family)) {
    k.inputs = {{"x", {s.n, s.c, s.h, s.w}, dt}};
    k.weights = {{"w", {s.k, s.c / std::max<int64_t>(s.groups, 1), s.r, s.s}, dt}};
    k.outputs = {{"y", {s.n, s.k, s.out_h(), s.out_w()}, dt}};
    k.attributes["group"] = {s.groups};
    k.attributes["strides"] = {s.stride_h, s.stride_w};
    k.attributes["dilations"] = {s.dilation_h, s.dilation_w};
    k.attributes["pads"] = {s.pad_h, s.pad_w, s.pad_h, s.pad_w};
  } else if (s.family == KernelFamily::kPooling) {
    k.inputs = {{"x", {s.n, s.c, s.h, s.w}, dt}};
    k.outputs = {{"y", {s.n, s.c, s.out_h(), s.out_w()}, dt}};
  } else if (s.family == KernelFamily::kGemm) {
    const int64_t b = std::max<int64_t>(s.gemm_batch, 1);
    k.inputs = {{"a", {b, s.gemm_m, s.gemm_k}, dt}, {"b", {b, s.gemm_k, s.gemm_n}, dt}};
    k.outputs = {{"y", {b, s.gemm_m, s.gemm_n}, dt}};
  } else {
    k.inputs = {{"x", {std::max<int64_t>(s.elements, 1)}, dt}};
    k.outputs = {{"y", {std::max<int64_t>(s.elements, 1)}, dt}};
  }
  k.flops = s.flops;
  k.macs = s.flops / 2;
  k.activation_bytes_read = static_cast<int64_t>(s.bytes / StorageScale(precision));
  return k;
}

Precision SamplePrecision(const KernelSample& s, const GpuSpec& gpu) {
  if (s.dtype != DType::kFloat16 && s.dtype != DType::kBFloat16) return Precision::kFp32;
  const bool matmul = s.family == KernelFamily::kConv || s.family == KernelFamily::kGemm;
  return matmul && gpu.has_tensor_cores() ? Precision::kTensor : Precision::kFp16;
}

}  // namespace

Result<std::vector<EvalRow>> ScoreAnalytic(const std::vector<KernelSample>& rows,
                                           const std::vector<const GpuSpec*>& gpus,
                                           const AnalyticParams& params) {
  if (rows.size() != gpus.size() || rows.empty()) {
    return Status::InvalidArgument("ScoreAnalytic needs one GPU per row and at least one row");
  }
  const AnalyticEstimator est(params);
  std::map<std::string, std::vector<size_t>> by_gpu;
  for (size_t i = 0; i < rows.size(); ++i) by_gpu[gpus[i]->id].push_back(i);
  std::vector<EvalRow> out;
  out.reserve(rows.size());
  for (const auto& [id, idx] : by_gpu) {
    std::vector<KernelSample> tr;
    std::vector<const GpuSpec*> gtr;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (gpus[i]->id == id) continue;
      tr.push_back(rows[i]);
      gtr.push_back(gpus[i]);
    }
    const RooflineBaseline baseline = RooflineBaseline::Fit(tr, gtr);
    const MicrobenchmarkProfile profile = DerivedProfile(*gpus[idx[0]]);
    for (size_t i : idx) {
      const Precision prec = SamplePrecision(rows[i], *gpus[i]);
      const Kernel k = SampleToKernel(rows[i], prec);
      const ExecutionContext ctx{*gpus[i], profile, rows[i].load, prec};
      HASE_ASSIGN_OR_RETURN(KernelEstimate e, est.Estimate(k, ctx));
      EvalRow r;
      r.sample = rows[i];
      r.gpu = gpus[i];
      r.predicted_ms = e.latency_ms;
      r.fold = id;
      r.baseline_ms = baseline.Predict(rows[i], *gpus[i]);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<GroupMetrics> Summarize(const std::vector<EvalRow>& rows,
                                    const std::function<std::string(const EvalRow&)>& key) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> base;
  std::map<std::string, size_t> unscored;
  for (const auto& r : rows) {
    const std::string k = key(r);
    if (!std::isfinite(r.predicted_ms)) {
      ++unscored[k];
      groups[k];
      continue;
    }
    groups[k].first.push_back(r.sample.latency_ms);
    groups[k].second.push_back(r.predicted_ms);
    if (std::isfinite(r.baseline_ms)) {
      base[k].first.push_back(r.sample.latency_ms);
      base[k].second.push_back(r.baseline_ms);
    }
  }
  std::vector<GroupMetrics> out;
  for (const auto& [k, mp] : groups) {
    GroupMetrics g;
    g.group = k;
    g.metrics = ComputeErrorMetrics(mp.first, mp.second);
    g.unscored = unscored.count(k) ? unscored.at(k) : 0;
    if (auto b = base.find(k); b != base.end()) {
      g.baseline = ComputeErrorMetrics(b->second.first, b->second.second);
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string LoadLevel(const KernelSample& s) {
  const LoadSnapshot& l = s.load;
  if (!l.sm_active && !l.gr_engine_active && !l.gpu_util) return "no load recorded";
  const double a = l.EffectiveSmActive();
  if (a < 0.1) return "sm_active 0.0-0.1";
  if (a < 0.3) return "sm_active 0.1-0.3";
  if (a < 0.5) return "sm_active 0.3-0.5";
  if (a < 0.7) return "sm_active 0.5-0.7";
  return "sm_active 0.7-1.0";
}

namespace {
std::string Table(const std::string& title, const std::vector<GroupMetrics>& groups) {
  std::string out = fmt::format(
      "\n{}\n{:<28} {:>8} {:>8} {:>10} {:>8} {:>8}   | {:>10} {:>10} {:>8}\n", title, "group",
      "rows", "MAPE%", "medAPE%", "p90APE%", "R2", "base MAPE%", "base medAP", "base R2");
  for (const auto& g : groups) {
    const auto& m = g.metrics;
    const auto& b = g.baseline;
    out += fmt::format("{:<28} {:>8} {:>8.2f} {:>10.2f} {:>8.2f} {:>8.3f}", g.group, m.count,
                       100 * m.mape, 100 * m.median_ape, 100 * m.p90_ape, m.r2);
    if (b.count > 0) {
      out += fmt::format("   | {:>10.2f} {:>10.2f} {:>8.3f}", 100 * b.mape, 100 * b.median_ape, b.r2);
    } else {
      out += fmt::format("   | {:>10} {:>10} {:>8}", "-", "-", "-");
    }
    if (g.unscored) out += fmt::format("  ({} rows without a model)", g.unscored);
    out += "\n";
  }
  return out;
}
}  // namespace

std::string FormatEvalReport(const std::vector<EvalRow>& rows, const std::string& title) {
  std::string out = title + "\n";
  out += "base = two-parameter baseline per family, time = c*FLOPs/peak + d*bytes/bandwidth "
         "(datasheet), least squares on relative error, fitted on the same training rows\n";
  out += Table("overall", Summarize(rows, [](const EvalRow&) { return std::string("all"); }));
  out += Table("per kernel family",
               Summarize(rows, [](const EvalRow& r) { return KernelFamilyName(r.sample.family); }));
  out += Table("per GPU", Summarize(rows, [](const EvalRow& r) { return r.gpu->id; }));
  out += Table("per FLOP decade (family, floor(log10 FLOP))", Summarize(rows, [](const EvalRow& r) {
                 const int d = r.sample.flops > 0
                                   ? static_cast<int>(std::floor(std::log10(r.sample.flops)))
                                   : 0;
                 return fmt::format("{} 1e{:02d}", KernelFamilyName(r.sample.family), d);
               }));
  out += Table("per source", Summarize(rows, [](const EvalRow& r) { return r.sample.source; }));
  bool any_load = false;
  for (const auto& r : rows) any_load = any_load || LoadLevel(r.sample) != "no load recorded";
  if (any_load) {
    out += Table("per background load level (DCGM sm_active)",
                 Summarize(rows, [](const EvalRow& r) { return LoadLevel(r.sample); }));
  }
  out += Table("per regime (near floor: measured < 1.5 x dispatch floor)",
               Summarize(rows, [](const EvalRow& r) {
                 return std::string(r.sample.latency_ms < 1.5 * r.floor_ms ? "near dispatch floor"
                                                                          : "kernel-bound");
               }));
  return out;
}

}  // namespace hase::predict
