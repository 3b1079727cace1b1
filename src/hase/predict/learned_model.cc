#include "hase/predict/learned_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hase/predict/csv.h"
#include "hase/predict/features.h"
#include "hase/predict/probe_emulation.h"

namespace hase::predict {

using nlohmann::json;

namespace {

Status XgbError(const std::string& what) {
  return Status::Internal(what + ": " + XGBGetLastError(), "xgboost");
}

std::string FloorKey(const std::string& source, const std::string& gpu, const std::string& op) {
  return source + "|" + gpu + "|" + op;
}
std::string DefaultFloorKey(const std::string& source, const std::string& op) {
  return source + "|" + op;
}

// Cap of a dispatch floor relative to the op's fastest call (LearnedKernelModel::Train). A
// 2nd-percentile latency above 1.5 × the minimum is not a floor: NeuSight's smallest
// convolutions (10^6–10^8 FLOP) already run 0.15–0.30 ms at the 2nd percentile, scaling with
// the GPU's speed, while the fastest call of every op on every GPU is 0.07–0.11 ms; elementwise,
// GEMM and normalisation ops sit within 1.25× of their minimum (docs/predictor-learned.md).
constexpr double kFloorOverMin = 1.5;

// Nearest-rank quantile of unsorted values.
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

// RAII DMatrix.
class DMatrix {
 public:
  DMatrix() = default;
  ~DMatrix() {
    if (h_ != nullptr) XGDMatrixFree(h_);
  }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  Status Create(const std::vector<float>& data, size_t rows, size_t cols) {
    if (XGDMatrixCreateFromMat(data.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(),
                               &h_) != 0) {
      return XgbError("XGDMatrixCreateFromMat");
    }
    return Status::OK();
  }
  DMatrixHandle get() const { return h_; }

 private:
  DMatrixHandle h_ = nullptr;
};

json OptionsToJson(const LearnedTrainOptions& o) {
  return json{{"seed", o.seed},         {"rounds", o.rounds},
              {"max_depth", o.max_depth}, {"eta", o.eta},
              {"subsample", o.subsample}, {"colsample", o.colsample},
              {"min_child_weight", o.min_child_weight},
              {"min_family_rows", o.min_family_rows}, {"use_load", o.use_load},
              {"max_rows_per_group", o.max_rows_per_group}, {"max_bin", o.max_bin},
              {"profile_source", o.profile_source}, {"probe_rows", o.probe_rows},
              {"spec_features", o.spec_features}};
}

LearnedTrainOptions OptionsFromJson(const json& j) {
  LearnedTrainOptions o;
  o.seed = j.value("seed", o.seed);
  o.rounds = j.value("rounds", o.rounds);
  o.max_depth = j.value("max_depth", o.max_depth);
  o.eta = j.value("eta", o.eta);
  o.subsample = j.value("subsample", o.subsample);
  o.colsample = j.value("colsample", o.colsample);
  o.min_child_weight = j.value("min_child_weight", o.min_child_weight);
  o.min_family_rows = j.value("min_family_rows", o.min_family_rows);
  o.use_load = j.value("use_load", o.use_load);
  o.max_rows_per_group = j.value("max_rows_per_group", o.max_rows_per_group);
  o.max_bin = j.value("max_bin", o.max_bin);
  o.profile_source = j.value("profile_source", o.profile_source);
  o.probe_rows = j.value("probe_rows", o.probe_rows);
  o.spec_features = j.value("spec_features", o.spec_features);
  return o;
}

// Indices of the load features (zeroed when use_load is false).
std::vector<size_t> LoadFeatureIndices() {
  std::vector<size_t> idx;
  const auto& names = FeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].starts_with("load_")) idx.push_back(i);
  }
  return idx;
}

json FiguresToJson(const NormFigures& f) {
  return json{{"fp32_tflops", f.fp32_tflops}, {"fp16_tflops", f.fp16_tflops},
              {"tensor_fp16_tflops", f.tensor_fp16_tflops}, {"dram_gbps", f.dram_gbps}};
}

NormFigures FiguresFromJson(const json& j) {
  NormFigures f;
  f.fp32_tflops = j.value("fp32_tflops", 0.0);
  f.fp16_tflops = j.value("fp16_tflops", 0.0);
  f.tensor_fp16_tflops = j.value("tensor_fp16_tflops", 0.0);
  f.dram_gbps = j.value("dram_gbps", 0.0);
  return f;
}

}  // namespace

class Booster {
 public:
  Booster() = default;
  ~Booster() {
    if (h_ != nullptr) XGBoosterFree(h_);
  }
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;

  Status Create(DMatrixHandle train) {
    DMatrixHandle mats[1] = {train};
    if (XGBoosterCreate(mats, train ? 1 : 0, &h_) != 0) return XgbError("XGBoosterCreate");
    return Status::OK();
  }
  Status Set(const std::string& k, const std::string& v) {
    if (XGBoosterSetParam(h_, k.c_str(), v.c_str()) != 0) return XgbError("XGBoosterSetParam " + k);
    return Status::OK();
  }
  Status Update(int iter, DMatrixHandle train) {
    if (XGBoosterUpdateOneIter(h_, iter, train) != 0) return XgbError("XGBoosterUpdateOneIter");
    return Status::OK();
  }
  Result<std::string> SaveJson() const {
    bst_ulong len = 0;
    const char* buf = nullptr;
    if (XGBoosterSaveModelToBuffer(h_, R"({"format": "json"})", &len, &buf) != 0) {
      return XgbError("XGBoosterSaveModelToBuffer");
    }
    return std::string(buf, len);
  }
  Status LoadJson(const std::string& text) {
    if (XGBoosterLoadModelFromBuffer(h_, text.data(), text.size()) != 0) {
      return XgbError("XGBoosterLoadModelFromBuffer");
    }
    return Status::OK();
  }
  Result<std::vector<float>> Predict(DMatrixHandle m) const {
    bst_ulong const* shape = nullptr;
    bst_ulong dim = 0;
    const float* out = nullptr;
    const char* cfg =
        R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})";
    if (XGBoosterPredictFromDMatrix(h_, m, cfg, &shape, &dim, &out) != 0) {
      return XgbError("XGBoosterPredictFromDMatrix");
    }
    size_t n = 1;
    for (bst_ulong i = 0; i < dim; ++i) n *= shape[i];
    return std::vector<float>(out, out + n);
  }

 private:
  BoosterHandle h_ = nullptr;
};

LearnedKernelModel::LearnedKernelModel() : mu_(std::make_unique<std::mutex>()) {}
LearnedKernelModel::~LearnedKernelModel() = default;
LearnedKernelModel::LearnedKernelModel(LearnedKernelModel&&) noexcept = default;
LearnedKernelModel& LearnedKernelModel::operator=(LearnedKernelModel&&) noexcept = default;

bool LearnedKernelModel::HasFamily(KernelFamily f) const {
  return boosters_.count({f, false}) > 0 || boosters_.count({f, true}) > 0;
}

size_t LearnedKernelModel::KernelRows(KernelFamily f) const {
  auto it = kernel_rows_.find(f);
  return it == kernel_rows_.end() ? 0 : it->second;
}

std::vector<KernelFamily> LearnedKernelModel::families() const {
  std::vector<KernelFamily> out;
  for (const auto& [key, b] : boosters_) {
    if (out.empty() || out.back() != key.first) out.push_back(key.first);
  }
  return out;
}

NormFigures LearnedKernelModel::FiguresFor(const GpuSpec& gpu, const NormFigures* override) const {
  const NormFigures sheet = DatasheetFigures(gpu);
  if (!UsesProbeFigures()) return sheet;
  NormFigures f{sheet.fp32_tflops * fallback_eff_.fp32_tflops,
                sheet.fp16_tflops * fallback_eff_.fp16_tflops,
                sheet.tensor_fp16_tflops * fallback_eff_.tensor_fp16_tflops,
                sheet.dram_gbps * fallback_eff_.dram_gbps, {}};
  auto apply = [&f](const NormFigures& o) {
    if (o.fp32_tflops > 0) f.fp32_tflops = o.fp32_tflops;
    if (o.fp16_tflops > 0) f.fp16_tflops = o.fp16_tflops;
    if (o.tensor_fp16_tflops > 0) f.tensor_fp16_tflops = o.tensor_fp16_tflops;
    if (o.dram_gbps > 0) f.dram_gbps = o.dram_gbps;
    if (!o.floor_ms.empty()) f.floor_ms = o.floor_ms;
  };
  auto it = probe_figures_.find(gpu.id);
  if (it != probe_figures_.end()) apply(it->second);
  if (override != nullptr) apply(*override);
  return f;
}

NormFigures LearnedKernelModel::FiguresFromMeasuredProfile(const MicrobenchmarkProfile& p) const {
  NormFigures f;
  f.fp32_tflops = fallback_eff_.fp32_tflops * p.fp32_tflops;
  f.fp16_tflops = fallback_eff_.fp16_tflops * p.fp16_tflops;
  f.tensor_fp16_tflops = p.tensor_fp16_tflops;
  f.dram_gbps = p.dram_bandwidth_gbps;
  return f;
}

double LearnedKernelModel::DispatchFloorMs(const KernelSample& s, const std::string& gpu_id,
                                           const NormFigures* probe) const {
  auto it = floors_.find(FloorKey(s.source, gpu_id, s.op));
  if (it != floors_.end()) return it->second;
  auto d = default_floors_.find(DefaultFloorKey(s.source, s.op));
  if (d == default_floors_.end()) return 0;
  if (probe != nullptr && UsesProbeFigures()) {
    auto p = probe->floor_ms.find(s.source);
    auto m = probe_floor_median_.find(s.source);
    if (p != probe->floor_ms.end() && m != probe_floor_median_.end() && m->second > 0) {
      return d->second * p->second / m->second;
    }
  }
  return d->second;
}

Result<LearnedKernelModel> LearnedKernelModel::Train(const std::vector<KernelSample>& rows,
                                                     const std::vector<const GpuSpec*>& gpus,
                                                     const LearnedTrainOptions& options) {
  if (rows.empty()) return Status::InvalidArgument("no training rows", "", "check --data");
  if (rows.size() != gpus.size()) return Status::InvalidArgument("rows and GPUs differ in size");
  LearnedKernelModel model;
  model.options_ = options;

  // Dispatch floors per (source, gpu, op): the 2nd-percentile latency, capped at
  // kFloorOverMin × the op's fastest call (when the 2nd-percentile rows take longer than that,
  // they are doing work, not waiting on dispatch); default = median over GPUs.
  std::map<std::string, std::vector<double>> lat_by_key;
  for (size_t i = 0; i < rows.size(); ++i) {
    lat_by_key[FloorKey(rows[i].source, gpus[i]->id, rows[i].op)].push_back(rows[i].latency_ms);
  }
  std::map<std::string, std::vector<double>> floors_by_default;
  for (const auto& [key, lats] : lat_by_key) {
    const double floor = std::min(Quantile(lats, 0.02), kFloorOverMin * Quantile(lats, 0.0));
    model.floors_[key] = floor;
    const size_t a = key.find('|');
    const size_t b = key.rfind('|');
    floors_by_default[key.substr(0, a) + "|" + key.substr(b + 1)].push_back(floor);
  }
  for (const auto& [key, v] : floors_by_default) model.default_floors_[key] = Quantile(v, 0.5);

  if (options.profile_source != "datasheet" && options.profile_source != "probe") {
    return Status::InvalidArgument("unknown profile source '" + options.profile_source + "'",
                                   "--profile-source", "use datasheet or probe");
  }
  if (model.UsesProbeFigures()) {
    // Emulated probe per training GPU (all sources), then the fallback efficiency per figure:
    // the median over GPUs that have it of achieved / datasheet.
    std::map<std::string, std::vector<size_t>> by_gpu;
    std::map<std::string, const GpuSpec*> spec_of;
    for (size_t i = 0; i < rows.size(); ++i) {
      by_gpu[gpus[i]->id].push_back(i);
      spec_of[gpus[i]->id] = gpus[i];
    }
    std::vector<double> e32, e16, et, ebw;
    std::map<std::string, std::vector<double>> floor_probes;
    for (const auto& [id, idx] : by_gpu) {
      const GpuSpec& g = *spec_of[id];
      NormFigures f = EmulateProbe(rows, idx, g, options.probe_rows).figures;
      for (const auto& [source, ms] : f.floor_ms) floor_probes[source].push_back(ms);
      f.floor_ms.clear();  // training GPUs use their own per-op floors
      model.probe_figures_[id] = f;
      if (f.fp32_tflops > 0 && g.fp32_tflops > 0) e32.push_back(f.fp32_tflops / g.fp32_tflops);
      if (f.fp16_tflops > 0 && g.fp16_tflops > 0) e16.push_back(f.fp16_tflops / g.fp16_tflops);
      if (f.tensor_fp16_tflops > 0 && g.tensor_fp16_tflops > 0) {
        et.push_back(f.tensor_fp16_tflops / g.tensor_fp16_tflops);
      }
      if (f.dram_gbps > 0 && g.memory_bandwidth_gbps > 0) ebw.push_back(f.dram_gbps / g.memory_bandwidth_gbps);
    }
    auto med = [](const std::vector<double>& v) { return v.empty() ? 1.0 : Quantile(v, 0.5); };
    model.fallback_eff_ = {med(e32), med(e16), med(et), med(ebw), {}};
    for (const auto& [source, v] : floor_probes) model.probe_floor_median_[source] = med(v);
  }
  std::map<std::string, NormFigures> figs;  // per training GPU id
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!figs.count(gpus[i]->id)) figs[gpus[i]->id] = model.FiguresFor(*gpus[i]);
  }

  const size_t nf = FeatureNames().size();
  const std::vector<size_t> load_idx = LoadFeatureIndices();
  // Seeded subsample: at most max_rows_per_group rows per (source, GPU, family), chosen by a
  // Fisher–Yates pass driven by the engine's raw output (identical across standard libraries).
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < rows.size(); ++i) {
    groups[rows[i].source + "|" + gpus[i]->id + "|" + KernelFamilyName(rows[i].family)].push_back(i);
  }
  std::mt19937_64 rng(options.seed);
  std::map<BoosterKey, std::vector<size_t>> by_family;
  for (auto& [key, g] : groups) {
    if (options.max_rows_per_group > 0 && g.size() > options.max_rows_per_group) {
      for (size_t i = g.size(); i > 1; --i) std::swap(g[i - 1], g[rng() % i]);
      g.resize(options.max_rows_per_group);
      std::sort(g.begin(), g.end());
    }
    for (size_t i : g) by_family[{rows[i].family, rows[i].includes_transfer}].push_back(i);
  }
  for (auto& [family, idx] : by_family) std::sort(idx.begin(), idx.end());
  for (const auto& [key, idx] : by_family) {
    const KernelFamily family = key.first;
    if (idx.size() < options.min_family_rows) continue;
    if (!options.only_families.empty() &&
        std::find(options.only_families.begin(), options.only_families.end(), family) ==
            options.only_families.end()) {
      continue;
    }
    size_t kernel_rows = 0;
    for (size_t i : idx) kernel_rows += rows[i].includes_transfer ? 0 : 1;
    std::vector<float> x;
    x.reserve(idx.size() * nf);
    std::vector<float> y;
    y.reserve(idx.size());
    for (size_t i : idx) {
      const KernelSample& s = rows[i];
      const NormFigures& fg = figs.at(gpus[i]->id);
      std::vector<float> f = ExtractFeatures(s, *gpus[i], fg, options.spec_features);
      if (!options.use_load) {
        for (size_t j : load_idx) f[j] = 0;
      }
      x.insert(x.end(), f.begin(), f.end());
      const double base = model.DispatchFloorMs(s, gpus[i]->id) +
                          FiguresRoofline(s, *gpus[i], fg).roofline_ms + TransferMs(s, *gpus[i]);
      y.push_back(static_cast<float>(std::log(s.latency_ms / std::max(base, 1e-9))));
    }
    DMatrix d;
    HASE_RETURN_IF_ERROR(d.Create(x, idx.size(), nf));
    if (XGDMatrixSetFloatInfo(d.get(), "label", y.data(), y.size()) != 0) {
      return XgbError("XGDMatrixSetFloatInfo");
    }
    auto booster = std::make_unique<Booster>();
    HASE_RETURN_IF_ERROR(booster->Create(d.get()));
    HASE_RETURN_IF_ERROR(booster->Set("objective", "reg:squarederror"));
    HASE_RETURN_IF_ERROR(booster->Set("tree_method", "hist"));
    HASE_RETURN_IF_ERROR(booster->Set("max_bin", std::to_string(options.max_bin)));
    HASE_RETURN_IF_ERROR(booster->Set("max_depth", std::to_string(options.max_depth)));
    HASE_RETURN_IF_ERROR(booster->Set("eta", fmt::format("{}", options.eta)));
    HASE_RETURN_IF_ERROR(booster->Set("subsample", fmt::format("{}", options.subsample)));
    HASE_RETURN_IF_ERROR(booster->Set("colsample_bytree", fmt::format("{}", options.colsample)));
    HASE_RETURN_IF_ERROR(booster->Set("min_child_weight", fmt::format("{}", options.min_child_weight)));
    HASE_RETURN_IF_ERROR(booster->Set("seed", std::to_string(options.seed)));
    HASE_RETURN_IF_ERROR(booster->Set("nthread", std::to_string(std::max(options.nthread, 1))));
    HASE_RETURN_IF_ERROR(booster->Set("verbosity", "0"));
    for (int it = 0; it < options.rounds; ++it) HASE_RETURN_IF_ERROR(booster->Update(it, d.get()));
    model.boosters_[key] = std::move(booster);
    model.rows_[key] = idx.size();
    model.kernel_rows_[family] += kernel_rows;
  }
  return model;
}

Result<std::vector<double>> LearnedKernelModel::Predict(const std::vector<KernelSample>& samples,
                                                        const std::vector<const GpuSpec*>& gpus,
                                                        bool include_dispatch_floor,
                                                        const std::map<std::string, NormFigures>& figures) const {
  if (samples.size() != gpus.size()) return Status::InvalidArgument("samples and GPUs differ in size");
  std::map<std::string, NormFigures> figs;
  for (const GpuSpec* g : gpus) {
    if (figs.count(g->id)) continue;
    auto o = figures.find(g->id);
    figs[g->id] = FiguresFor(*g, o == figures.end() ? nullptr : &o->second);
  }
  std::vector<double> out(samples.size(), std::numeric_limits<double>::quiet_NaN());
  const size_t nf = FeatureNames().size();
  const std::vector<size_t> load_idx = LoadFeatureIndices();
  std::map<BoosterKey, std::vector<size_t>> by_family;
  for (size_t i = 0; i < samples.size(); ++i) {
    BoosterKey key{samples[i].family, samples[i].includes_transfer};
    if (!boosters_.count(key)) key.second = !key.second;  // the other kind, if any
    if (boosters_.count(key)) by_family[key].push_back(i);
  }
  std::lock_guard<std::mutex> lock(*mu_);
  for (const auto& [key, idx] : by_family) {
    std::vector<float> x;
    x.reserve(idx.size() * nf);
    for (size_t i : idx) {
      std::vector<float> f =
          ExtractFeatures(samples[i], *gpus[i], figs.at(gpus[i]->id), options_.spec_features);
      if (!options_.use_load) {
        for (size_t j : load_idx) f[j] = 0;
      }
      x.insert(x.end(), f.begin(), f.end());
    }
    DMatrix d;
    HASE_RETURN_IF_ERROR(d.Create(x, idx.size(), nf));
    HASE_ASSIGN_OR_RETURN(std::vector<float> y, boosters_.at(key)->Predict(d.get()));
    for (size_t j = 0; j < idx.size(); ++j) {
      const KernelSample& s = samples[idx[j]];
      const GpuSpec& g = *gpus[idx[j]];
      const double floor = include_dispatch_floor ? DispatchFloorMs(s, g.id, &figs.at(g.id)) : 0.0;
      const double base = floor + FiguresRoofline(s, g, figs.at(g.id)).roofline_ms + TransferMs(s, g);
      out[idx[j]] = std::max(base, 1e-9) * std::exp(static_cast<double>(y[j]));
    }
  }
  return out;
}

std::string LearnedKernelModel::ToJsonText() const {
  json j;
  j["format"] = kLearnedModelFormat;
  j["version"] = kLearnedModelVersion;
  j["features"] = FeatureNames();
  j["train_options"] = OptionsToJson(options_);
  j["floors"] = floors_;
  j["default_floors"] = default_floors_;
  json pf = json::object();
  for (const auto& [id, f] : probe_figures_) pf[id] = FiguresToJson(f);
  j["probe_figures"] = std::move(pf);
  j["fallback_efficiency"] = FiguresToJson(fallback_eff_);
  j["probe_floor_median"] = probe_floor_median_;
  json fams = json::object();
  for (const auto& [key, b] : boosters_) {
    auto text = b->SaveJson();
    json entry;
    entry["rows"] = rows_.at(key);
    entry["booster"] = text.ok() ? json::parse(text.value()) : json();
    fams[std::string(KernelFamilyName(key.first)) + (key.second ? "+transfer" : "")] =
        std::move(entry);
  }
  j["families"] = std::move(fams);
  return j.dump();
}

Status LearnedKernelModel::Save(const std::string& path) const {
  return WriteTextFile(path, ToJsonText());
}

Result<LearnedKernelModel> LearnedKernelModel::FromJsonText(const std::string& text,
                                                            const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return Status::Parse(std::string("model file is not JSON: ") + e.what(), where);
  }
  if (!j.is_object() || j.value("format", std::string()) != kLearnedModelFormat) {
    return Status::InvalidArgument("not a hase learned kernel model (format field missing or wrong)",
                                   where, "train one with `hase train`");
  }
  const int version = j.value("version", -1);
  if (version != kLearnedModelVersion) {
    return Status::InvalidArgument(
        fmt::format("model file version {} is not supported (this hase reads version {})", version,
                    kLearnedModelVersion),
        where, "retrain the model with this hase: `hase train --data ... --out MODEL`");
  }
  LearnedKernelModel m;
  try {
    if (j.at("features").get<std::vector<std::string>>() != FeatureNames()) {
      return Status::InvalidArgument("model feature list differs from this hase's", where,
                                     "retrain the model with this hase");
    }
    m.options_ = OptionsFromJson(j.value("train_options", json::object()));
    m.floors_ = j.value("floors", std::map<std::string, double>());
    m.default_floors_ = j.value("default_floors", std::map<std::string, double>());
    const json probe = j.value("probe_figures", json::object());
    for (const auto& [id, f] : probe.items()) {
      m.probe_figures_[id] = FiguresFromJson(f);
    }
    if (j.contains("fallback_efficiency")) m.fallback_eff_ = FiguresFromJson(j["fallback_efficiency"]);
    m.probe_floor_median_ = j.value("probe_floor_median", std::map<std::string, double>());
    for (const auto& [name, entry] : j.at("families").items()) {
      const bool transfer = name.ends_with("+transfer");
      const std::string fname = transfer ? name.substr(0, name.size() - 9) : name;
      KernelFamily f;
      if (!ParseKernelFamily(fname, &f)) {
        return Status::InvalidArgument("unknown family '" + name + "' in model", where);
      }
      auto b = std::make_unique<Booster>();
      HASE_RETURN_IF_ERROR(b->Create(nullptr));
      HASE_RETURN_IF_ERROR(b->LoadJson(entry.at("booster").dump()));
      m.boosters_[{f, transfer}] = std::move(b);
      m.rows_[{f, transfer}] = entry.value("rows", size_t{0});
      if (!transfer) m.kernel_rows_[f] = entry.value("rows", size_t{0});
    }
  } catch (const json::exception& e) {
    return Status::Parse(std::string("malformed model file: ") + e.what(), where);
  }
  return m;
}

Result<LearnedKernelModel> LearnedKernelModel::Load(const std::string& path) {
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return FromJsonText(text, path);
}

Result<std::vector<const GpuSpec*>> ResolveGpus(std::vector<KernelSample>& samples,
                                                const GpuCatalog& catalog) {
  std::vector<const GpuSpec*> out;
  out.reserve(samples.size());
  std::map<std::string, const GpuSpec*> cache;
  for (auto& s : samples) {
    auto it = cache.find(s.gpu);
    if (it == cache.end()) {
      auto r = catalog.Find(s.gpu);
      if (!r.ok()) return r.status().WithContext(s.where);
      it = cache.emplace(s.gpu, r.value()).first;
    }
    s.gpu = it->second->id;
    out.push_back(it->second);
  }
  return out;
}

}  // namespace hase::predict
