// calibration_check: scores `hase calibrate` (predict/latency_calibration.h) and the p10–p90
// interval of every prediction on the whole-model measurement sets of ../shared.
//
//   build/tools/calibration_check [--shared ../shared] [--models-dir models] [--fit-models 3]
//       [--write-runs DIR] [--max-calibrated-mape PCT] [--min-coverage F --max-coverage F] [-v]
// The figures in docs/predictor.md, "Calibration and error bars", are this tool's output.
//
// Sets (rows whose model maps to a zoo ONNX file; each becomes a MeasuredRun, the input of
// `hase calibrate`; --write-runs writes them as CSV files `hase calibrate` reads):
//   timm   data/models/timm/benchmark-infer-amp-nchw-*.csv (not -dynamo): PyTorch eager, AMP
//          → runtime pytorch-eager, precision tensor; batch and resolution per row; latency =
//          infer_batch_size / infer_samples_per_sec.
//   cpn    data/interference/cpn_controller/*.csv, solo rows (one model on the GPU): PyTorch
//          eager batch 1 → pytorch-eager, the runtime's precision; latency = averagetime1.
//   dle    data/models/nvidia_dle/inference.csv: PyTorch rows (→ pytorch-eager; FP32 → fp32,
//          TF32 → tf32, AMP → tensor) and PaddlePaddle+TensorRT rows (→ tensorrt; TF32 → tf32,
//          FP16 → tensor) of resnet50v1.5 and efficientnet-b0; latency = latency_avg_ms.
//          Other frameworks (TF, MXNet, Triton) have no hase runtime and are left out.
//
// 1. Calibration from a few models: per set and (GPU type, runtime) with at least fit-models + 1
//    models, for every choice of `fit-models` models: FitCalibration on their runs, then the
//    other models' runs are scored: MAPE before (uncalibrated) and after, and the share inside
//    the calibrated p10–p90. Beside it, the two-parameter fit fitted on the same runs:
//    time = c · FLOPs / peak + d · bytes / bandwidth (datasheet figures of the run's precision,
//    c, d ≥ 0, relative least squares as predict/roofline_baseline.h). Figures are means over
//    the choices.
// 2. Uncalibrated interval: r = ln(measured / predicted) over every run; its p10 and p90 pooled
//    (the constants LatencyCalibration::kUncalibratedLogP10/P90 come from here), and the
//    coverage of [p10, p90] leave-one-GPU-type-out (quantiles from the other GPU types' runs)
//    and with the built-in constants.
// Exit: 77 without ../shared (1 under CI=true); 1 when a threshold given is missed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/predict/latency_calibration.h"
#include "hase/predict/measured_run.h"
#include "hase/predict/precision.h"
#include "hase/predict/roofline_baseline.h"

namespace fs = std::filesystem;
using namespace hase;

namespace {

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}
std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}

struct Table {
  std::map<std::string, size_t> col;
  std::vector<std::vector<std::string>> rows;
  std::string At(const std::vector<std::string>& r, const std::string& c) const {
    auto it = col.find(c);
    return it == col.end() || it->second >= r.size() ? "" : Trim(r[it->second]);
  }
};
Table ReadCsv(const fs::path& p) {
  Table t;
  std::ifstream in(p);
  std::string line;
  if (!std::getline(in, line)) return t;
  auto h = Split(line);
  for (size_t i = 0; i < h.size(); ++i) t.col[Trim(h[i])] = i;
  while (std::getline(in, line)) {
    if (!line.empty()) t.rows.push_back(Split(line));
  }
  return t;
}

struct Run {
  std::string set;
  MeasuredRun m;
  std::string gpu_id, runtime;
  double predicted_ms = 0;
  double host_ms = 0, device_ms = 0;  // the composition's two timelines (ModelLatency)
  double base_x = 0, base_y = 0;  // two-parameter fit terms, s
};

// timm name → zoo name (plain models only: a *_bn VGG is another graph than the zoo's).
const std::map<std::string, std::string> kTimmZoo = {
    {"resnet18", "resnet18"},       {"resnet34", "resnet34"},         {"resnet50", "resnet50"},
    {"resnet101", "resnet101"},     {"resnet152", "resnet152"},       {"vgg11", "vgg11"},
    {"vgg13", "vgg13"},             {"vgg16", "vgg16"},               {"vgg19", "vgg19"},
    {"densenet121", "densenet121"}, {"densenet161", "densenet161"},   {"densenet169", "densenet169"},
    {"densenet201", "densenet201"}, {"mobilenetv2_100", "mobilenet_v2"},
    {"mobilenetv3_large_100", "mobilenet_v3_large"}, {"efficientnet_b0", "efficientnet_b0"},
};

std::vector<MeasuredRun> ReadTimm(const fs::path& dir) {
  std::vector<MeasuredRun> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (e.path().extension() == ".csv" && n.find("dynamo") == std::string::npos) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string n = f.filename().string();
    std::string gpu = n.find("rtx3090") != std::string::npos ? "RTX-3090"
                      : n.find("4090") != std::string::npos ? "RTX-4090"
                      : n.find("5090") != std::string::npos ? "RTX-5090"
                      : n.find("pro6000maxq") != std::string::npos ? "RTX-PRO-6000-Max-Q" : "";
    if (gpu.empty()) continue;
    const Table t = ReadCsv(f);
    int line = 1;
    for (const auto& r : t.rows) {
      ++line;
      auto z = kTimmZoo.find(t.At(r, "model"));
      if (z == kTimmZoo.end()) continue;
      const std::string sps = t.At(r, "infer_samples_per_sec"), b = t.At(r, "infer_batch_size"),
                        img = t.At(r, "infer_img_size");
      if (sps.empty() || b.empty() || img.empty()) continue;
      MeasuredRun m;
      m.model = z->second;
      m.gpu = gpu;
      m.runtime = "pytorch-eager";
      m.precision = "tensor";
      m.batch = static_cast<int64_t>(std::stod(b));
      const int64_t px = std::stoll(img);
      m.input_shape = {3, px, px};
      m.latency_ms = 1000.0 * static_cast<double>(m.batch) / std::stod(sps);
      m.where = fmt::format("{}:{}", f.string(), line);
      out.push_back(m);
    }
  }
  return out;
}

std::vector<MeasuredRun> ReadCpn(const fs::path& dir) {
  std::vector<MeasuredRun> out;
  for (const auto& [file, gpu] : {std::pair<const char*, const char*>{"A100-prom-metric-updated-rows_final_v1.0.csv",
                                                                      "A100-SXM4-40GB"},
                                  {"P100-prom-metric-updated-rows_v1.0.csv", "P100-PCIE-16GB"}}) {
    const Table t = ReadCsv(dir / file);
    int line = 1;
    for (const auto& r : t.rows) {
      ++line;
      const std::string m2 = t.At(r, "model2");
      if (!(m2.empty() || m2 == "nan")) continue;  // shared rows: co-location, not solo
      MeasuredRun m;
      m.model = t.At(r, "model1");
      m.gpu = gpu;
      m.runtime = "pytorch-eager";
      m.batch = 1;
      const std::string s = t.At(r, "averagetime1");
      if (s.empty()) continue;
      m.latency_ms = 1000.0 * std::stod(s);
      m.where = fmt::format("{}:{}", (dir / file).string(), line);
      out.push_back(m);
    }
  }
  return out;
}

std::vector<MeasuredRun> ReadDle(const fs::path& file) {
  std::vector<MeasuredRun> out;
  const Table t = ReadCsv(file);
  const std::map<std::string, std::string> zoo = {{"resnet50v1.5", "resnet50"}, {"efficientnet-b0", "efficientnet_b0"}};
  int line = 1;
  for (const auto& r : t.rows) {
    ++line;
    auto z = zoo.find(t.At(r, "model"));
    if (z == zoo.end()) continue;
    const std::string fw = t.At(r, "framework"), prec = t.At(r, "precision"), ms = t.At(r, "latency_avg_ms");
    MeasuredRun m;
    if (fw == "PyTorch") {
      m.runtime = "pytorch-eager";
      m.precision = prec == "FP32" ? "fp32" : prec == "TF32" ? "tf32" : prec == "AMP" ? "tensor" : "";
    } else if (fw == "PaddlePaddle+TensorRT") {
      m.runtime = "tensorrt";
      m.precision = prec == "TF32" ? "tf32" : prec == "FP16" ? "tensor" : "";
    }
    if (m.runtime.empty() || m.precision.empty() || ms.empty()) continue;
    m.model = z->second;
    m.gpu = t.At(r, "gpu");
    m.batch = std::stoll(t.At(r, "batch_size"));
    const std::string px = t.At(r, "input_size");
    const int64_t side = px.empty() ? 224 : std::stoll(px);
    m.input_shape = {3, side, side};
    m.latency_ms = std::stod(ms);
    m.where = fmt::format("{}:{}", file.string(), line);
    out.push_back(m);
  }
  return out;
}

// Datasheet roofline terms of a run's kernel list, s (the two-parameter fit's x and y).
std::pair<double, double> BaselineTerms(const KernelList& kl, const GpuSpec& g, Precision p) {
  double peak = g.fp32_tflops;
  double bytes = static_cast<double>(kl.total_dram_bytes());
  if (p == Precision::kTensor || p == Precision::kFp16) {
    peak = g.tensor_fp16_tflops > 0 ? g.tensor_fp16_tflops : std::max(g.fp16_tflops, g.fp32_tflops);
    bytes *= 0.5;
  } else if ((p == Precision::kTf32 || p == Precision::kTf32Conv) && g.tensor_tf32_tflops() > 0) {
    peak = g.tensor_tf32_tflops();
  }
  return {kl.total_flops() / (peak * 1e12), bytes / (g.memory_bandwidth_gbps * 1e9)};
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

// All k-subsets of {0..n-1}.
void Subsets(int n, int k, int start, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (static_cast<int>(cur.size()) == k) {
    out.push_back(cur);
    return;
  }
  for (int i = start; i < n; ++i) {
    cur.push_back(i);
    Subsets(n, k, i + 1, cur, out);
    cur.pop_back();
  }
}

struct Acc {
  double n = 0, ape_before = 0, ape_after = 0, ape_base = 0, inside = 0, sq_log_after = 0;
  void Add(const Acc& o, double w = 1) {
    n += w * o.n, ape_before += w * o.ape_before, ape_after += w * o.ape_after, ape_base += w * o.ape_base,
        inside += w * o.inside, sq_log_after += w * o.sq_log_after;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"calibration_check: hase calibrate and the p10-p90 interval on ../shared whole-model sets"};
  std::string shared = "../shared", models_dir = "models", write_runs, dump;
  int fit_models = 3;
  double max_mape = -1, min_cov = -1, max_cov = 2;
  bool verbose = false;
  std::set<std::string> gate_sets = {"timm"};
  app.add_option("--shared", shared, "the shared data folder (holds data/models, data/interference)");
  app.add_option("--models-dir", models_dir, "folder with the zoo's .onnx files");
  app.add_option("--fit-models", fit_models, "models per GPU type x runtime the calibration sees")->capture_default_str();
  app.add_option("--write-runs", write_runs, "write each set's measured runs as a `hase calibrate` CSV into DIR");
  app.add_option("--max-calibrated-mape", max_mape, "exit 1 when a gated set's held-out MAPE after calibration (%) is above");
  app.add_option("--gate-set", gate_sets, "sets --max-calibrated-mape applies to")->capture_default_str();
  app.add_option("--min-coverage", min_cov, "exit 1 when the held-out p10-p90 coverage (pooled) is below");
  app.add_option("--max-coverage", max_cov, "exit 1 when the held-out p10-p90 coverage (pooled) is above");
  app.add_flag("-v,--verbose", verbose, "print every run");
  app.add_option("--dump", dump, "write every run with its prediction terms to a CSV file");
  CLI11_PARSE(app, argc, argv);

  const fs::path root(shared);
  if (!fs::is_directory(root / "data" / "models")) {
    const char* ci = std::getenv("CI");
    std::fprintf(stderr, "calibration_check: no whole-model data under %s/data/models\n", shared.c_str());
    return ci != nullptr && std::string(ci) == "true" ? 1 : 77;
  }
  auto catalog = GpuCatalog::Builtin();
  if (!catalog.ok()) {
    std::fprintf(stderr, "%s\n", catalog.status().ToString().c_str());
    return 1;
  }

  std::map<std::string, std::vector<MeasuredRun>> sets;
  sets["timm"] = ReadTimm(root / "data/models/timm");
  sets["cpn"] = ReadCpn(root / "data/interference/cpn_controller");
  sets["dle"] = ReadDle(root / "data/models/nvidia_dle/inference.csv");

  std::vector<Run> runs;
  for (auto& [name, ms] : sets) {
    int used = 0;
    std::set<std::string> skipped;
    for (const MeasuredRun& m : ms) {
      const fs::path onnx = fs::path(models_dir) / (m.model + ".onnx");
      if (!fs::exists(onnx)) {
        skipped.insert(m.model);
        continue;
      }
      KernelList kl;
      auto p = PredictMeasuredRun(m, onnx.string(), *catalog, nullptr, &kl);
      if (!p.ok()) {
        std::fprintf(stderr, "skip %s\n", p.status().ToString().c_str());
        continue;
      }
      Run r;
      r.set = name;
      r.m = m;
      r.gpu_id = p->gpu;
      r.runtime = p->runtime;
      r.predicted_ms = p->uncalibrated_ms;
      r.host_ms = p->host_ms;
      r.device_ms = p->device_ms;
      std::tie(r.base_x, r.base_y) = BaselineTerms(kl, **catalog->Find(m.gpu), p->precision);
      runs.push_back(r);
      ++used;
    }
    std::string sk;
    for (const auto& s : skipped) sk += (sk.empty() ? "" : ", ") + s;
    std::printf("set %-5s %4d runs%s%s\n", name.c_str(), used, sk.empty() ? "" : "; not in the zoo: ", sk.c_str());
  }
  if (!write_runs.empty()) {
    fs::create_directories(write_runs);
    std::map<std::string, std::ofstream> files;
    for (const Run& r : runs) {
      auto& f = files[r.set];
      if (!f.is_open()) {
        f.open(fs::path(write_runs) / (r.set + ".csv"));
        f << "model,gpu,batch,latency_ms,runtime,precision,input_shape\n";
      }
      std::string shape;
      for (int64_t d : r.m.input_shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
      f << fmt::format("{},{},{},{:.6g},{},{},{}\n", r.m.model, r.gpu_id, r.m.batch, r.m.latency_ms, r.runtime,
                       r.m.precision, shape);
    }
    std::printf("wrote the runs to %s/{%s}.csv\n", write_runs.c_str(), "cpn,dle,timm");
  }
  if (!dump.empty()) {
    std::ofstream f(dump);
    f << "set,model,gpu,runtime,precision,batch,measured_ms,predicted_ms,host_ms,device_ms\n";
    for (const Run& r : runs) {
      f << fmt::format("{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g}\n", r.set, r.m.model, r.gpu_id, r.runtime,
                       r.m.precision, r.m.batch, r.m.latency_ms, r.predicted_ms, r.host_ms, r.device_ms);
    }
  }
  if (verbose) {
    for (const Run& r : runs) {
      std::printf("  %-5s %-18s %-20s %-14s b%-5lld meas %10.3f  pred %10.3f  (%+.0f%%)\n", r.set.c_str(),
                  r.m.model.c_str(), r.gpu_id.c_str(), r.runtime.c_str(), (long long)r.m.batch, r.m.latency_ms,
                  r.predicted_ms, 100 * (r.predicted_ms / r.m.latency_ms - 1));
    }
  }

  // ---- 1. calibration from `fit_models` models per GPU type x runtime ----
  std::printf("\n1. CALIBRATION FROM %d MODELS PER GPU TYPE x RUNTIME, scored on the other models' runs\n"
              "   (means over every choice of the %d models; base = two-parameter fit on the same runs)\n",
              fit_models, fit_models);
  std::printf("  %-5s %-20s %-14s %6s %7s %6s  %8s %8s %8s  %9s %8s\n", "set", "GPU", "runtime", "models", "choices",
              "runs", "before%", "after%", "base%", "in p10-90", "factor");
  std::map<std::string, Acc> per_set;
  Acc all;
  bool missed = false;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Run*>> groups;
  for (const Run& r : runs) groups[{r.set, r.gpu_id, r.runtime}].push_back(&r);
  for (const auto& [key, rs] : groups) {
    const auto& [set, gpu, runtime] = key;
    std::vector<std::string> models;
    for (const Run* r : rs) {
      if (std::find(models.begin(), models.end(), r->m.model) == models.end()) models.push_back(r->m.model);
    }
    std::sort(models.begin(), models.end());
    if (static_cast<int>(models.size()) < fit_models + 1) {
      std::printf("  %-5s %-20s %-14s %6zu   (fewer than %d models: nothing to hold out)\n", set.c_str(), gpu.c_str(),
                  runtime.c_str(), models.size(), fit_models + 1);
      continue;
    }
    std::vector<std::vector<int>> choices;
    std::vector<int> cur;
    Subsets(static_cast<int>(models.size()), fit_models, 0, cur, choices);
    Acc g;
    double factor_sum = 0;
    for (const auto& choice : choices) {
      std::set<std::string> fit;
      for (int i : choice) fit.insert(models[i]);
      std::vector<CalibrationPoint> pts;
      predict::RelativeLeastSquares base;
      for (const Run* r : rs) {
        if (!fit.count(r->m.model)) continue;
        pts.push_back({r->m.model, r->gpu_id, r->runtime, r->predicted_ms, r->m.latency_ms});
        const double t = r->m.latency_ms * 1e-3;
        base.Add(r->base_x / t, r->base_y / t);
      }
      auto cal = FitCalibration(pts);
      if (!cal.ok()) {
        std::fprintf(stderr, "%s\n", cal.status().ToString().c_str());
        return 1;
      }
      const auto [c, d] = base.Solve();
      factor_sum += cal->Find(gpu, runtime)->factor;
      Acc a;
      for (const Run* r : rs) {
        if (fit.count(r->m.model)) continue;
        const CalibratedLatency cl = cal->Apply(r->predicted_ms, gpu, runtime);
        const double y = r->m.latency_ms;
        const double b = 1e3 * (c * r->base_x + d * r->base_y);
        a.n += 1;
        a.ape_before += std::fabs(r->predicted_ms - y) / y;
        a.ape_after += std::fabs(cl.latency_ms - y) / y;
        a.ape_base += b > 0 ? std::fabs(b - y) / y : 1;
        a.inside += (y >= cl.p10_ms && y <= cl.p90_ms) ? 1 : 0;
        a.sq_log_after += std::pow(std::log(y / cl.latency_ms), 2);
      }
      g.Add(a, 1.0 / static_cast<double>(choices.size()));
    }
    std::printf("  %-5s %-20s %-14s %6zu %7zu %6.0f  %8.1f %8.1f %8.1f  %8.0f%% %8.3f\n", set.c_str(), gpu.c_str(),
                runtime.c_str(), models.size(), choices.size(), g.n, 100 * g.ape_before / g.n, 100 * g.ape_after / g.n,
                100 * g.ape_base / g.n, 100 * g.inside / g.n, factor_sum / static_cast<double>(choices.size()));
    per_set[set].Add(g);
    all.Add(g);
  }
  for (const auto& [set, a] : per_set) {
    std::printf("  %-5s %-42s %6.0f  %8.1f %8.1f %8.1f  %8.0f%%   rms ln(meas/calibrated) %.3f\n", set.c_str(),
                "ALL (runs pooled)", a.n, 100 * a.ape_before / a.n, 100 * a.ape_after / a.n, 100 * a.ape_base / a.n,
                100 * a.inside / a.n, std::sqrt(a.sq_log_after / a.n));
    if (max_mape >= 0 && gate_sets.count(set) && 100 * a.ape_after / a.n > max_mape) missed = true;
  }
  if (all.n > 0) {
    std::printf("  %-48s %6.0f  %8.1f %8.1f %8.1f  %8.0f%%   rms ln(meas/calibrated) %.3f\n", "ALL SETS", all.n,
                100 * all.ape_before / all.n, 100 * all.ape_after / all.n, 100 * all.ape_base / all.n,
                100 * all.inside / all.n, std::sqrt(all.sq_log_after / all.n));
  }

  // ---- 2. the uncalibrated interval ----
  std::printf("\n2. UNCALIBRATED INTERVAL: r = ln(measured / predicted)\n");
  std::printf("  %-26s %6s %8s %8s %8s  %14s  %14s\n", "group", "runs", "p10", "median", "p90", "in built-in", "in LOGO p10-90");
  std::map<std::string, std::vector<double>> r_by_gpu;
  std::vector<double> r_all;
  for (const Run& r : runs) {
    const double x = std::log(r.m.latency_ms / r.predicted_ms);
    r_by_gpu[r.gpu_id].push_back(x);
    r_all.push_back(x);
  }
  const auto inside_builtin = [](const std::vector<double>& v) {
    double k = 0;
    for (double x : v) k += (x >= LatencyCalibration::kUncalibratedLogP10 && x <= LatencyCalibration::kUncalibratedLogP90);
    return v.empty() ? 0 : k / static_cast<double>(v.size());
  };
  // Leave-one-GPU-type-out: the interval from every other GPU type's runs.
  double logo_in = 0, logo_n = 0;
  std::map<std::string, double> logo_cov;
  for (const auto& [gpu, v] : r_by_gpu) {
    std::vector<double> rest;
    for (const auto& [g2, v2] : r_by_gpu) {
      if (g2 != gpu) rest.insert(rest.end(), v2.begin(), v2.end());
    }
    const double lo = Quantile(rest, 0.1), hi = Quantile(rest, 0.9);
    double k = 0;
    for (double x : v) k += (x >= lo && x <= hi);
    logo_cov[gpu] = k / static_cast<double>(v.size());
    logo_in += k;
    logo_n += static_cast<double>(v.size());
  }
  std::map<std::string, std::vector<double>> r_by_set;
  for (const Run& r : runs) r_by_set["set " + r.set].push_back(std::log(r.m.latency_ms / r.predicted_ms));
  for (const auto& [g, v] : r_by_set) {
    std::printf("  %-26s %6zu %8.3f %8.3f %8.3f  %13.0f%%\n", g.c_str(), v.size(), Quantile(v, 0.1), Quantile(v, 0.5),
                Quantile(v, 0.9), 100 * inside_builtin(v));
  }
  for (const auto& [g, v] : r_by_gpu) {
    std::printf("  %-26s %6zu %8.3f %8.3f %8.3f  %13.0f%%  %13.0f%%\n", g.c_str(), v.size(), Quantile(v, 0.1),
                Quantile(v, 0.5), Quantile(v, 0.9), 100 * inside_builtin(v), 100 * logo_cov[g]);
  }
  const double logo = logo_n > 0 ? logo_in / logo_n : 0;
  std::printf("  %-26s %6zu %8.3f %8.3f %8.3f  %13.0f%%  %13.0f%%\n", "ALL", r_all.size(), Quantile(r_all, 0.1),
              Quantile(r_all, 0.5), Quantile(r_all, 0.9), 100 * inside_builtin(r_all), 100 * logo);
  std::printf("  built-in interval: [%.2f, %.2f] (LatencyCalibration::kUncalibratedLogP10/P90)\n",
              LatencyCalibration::kUncalibratedLogP10, LatencyCalibration::kUncalibratedLogP90);

  double cov_in = 0, cov_n = 0;
  for (const auto& [set, a] : per_set) {
    if (gate_sets.count(set)) cov_in += a.inside, cov_n += a.n;
  }
  const double cov = cov_n > 0 ? cov_in / cov_n : 0;
  std::printf("\ngated sets: calibrated held-out coverage %.1f %%, uncalibrated leave-one-GPU-type-out %.1f %%\n",
              100 * cov, 100 * logo);
  if (min_cov >= 0 && (cov < min_cov || cov > max_cov)) missed = true;
  if (min_cov >= 0 && (logo < min_cov || logo > max_cov)) missed = true;
  if (missed) std::printf("\nFAILED: a threshold given on the command line is missed\n");
  return missed ? 1 : 0;
}
