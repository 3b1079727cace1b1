// `hase calibrate [ROWS.csv ...] [--daemon URL [--token-file F] [--runtime R]] [--out FILE]
//  [--replace] [--dry-run] [--check ROWS.csv ...] [--calibration FILE] [--show]
//  [--models DIR] [--catalog FILE] [--format table|json]`
// Fits the per-GPU-type × runtime correction of model-level predictions from measured runs
// (predict/latency_calibration.h): rows from CSV files or hase-probe's --model-out
// (predict/measured_run.h), or the succeeded tasks of a running `hase serve`. Saves it to
// --out (default DefaultCalibrationPath(), merged with the entries already there unless
// --replace), which `hase predict`, `simulate` and `serve` then use. --check scores a
// calibration on other measured rows (MAPE before/after, p10–p90 coverage).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/rest_client.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/predict/latency_calibration.h"
#include "hase/predict/measured_run.h"
#include "hase/predict/runtime_profile.h"

namespace hase::cli {
namespace {

struct CalibrateFlags {
  std::vector<std::string> rows;
  std::string daemon;
  std::string token_file;
  std::string runtime = DefaultRuntime().name;  // tasks that name none (the daemon's --runtime)
  std::string out;
  bool replace = false;
  bool dry_run = false;
  std::vector<std::string> check;
  std::string calibration;
  bool show = false;
  std::string models_dir;
  std::string catalog;
  std::string format = "table";
};

// One measured run with its uncalibrated prediction.
struct Scored {
  MeasuredRun run;
  std::string gpu_id;
  std::string runtime;
  double predicted_ms = 0;
};

// Predictions are the analytic model's (what predict, simulate and serve use by default).
Result<std::vector<Scored>> PredictAll(const std::vector<MeasuredRun>& runs, const CalibrateFlags& f,
                                       const GpuCatalog& catalog, const KernelLatencyEstimator* est) {
  std::vector<Scored> out;
  for (const MeasuredRun& r : runs) {
    auto path = ResolveModelArg(r.model, f.models_dir);
    if (!path.ok()) return path.status().WithContext(r.where);
    auto m = PredictMeasuredRun(r, *path, catalog, est);
    if (!m.ok()) return m.status();
    out.push_back({r, m->gpu, m->runtime, m->uncalibrated_ms});
  }
  return out;
}

// The succeeded tasks of a running daemon as measured runs: per-batch latency = the task's real
// run time (ended − started) / num_batches, on the GPU type of the GPU it ran on.
Result<std::vector<MeasuredRun>> DaemonRuns(const CalibrateFlags& f) {
  HASE_ASSIGN_OR_RETURN(std::unique_ptr<RestClient> client, RestClient::Open(f.daemon, f.token_file, "--daemon", 60));
  HASE_ASSIGN_OR_RETURN(nlohmann::json gpus, client->Get("/v1/gpus"));
  std::map<int64_t, std::string> type_of;
  for (const auto& g : gpus.value("gpus", nlohmann::json::array())) {
    if (g.contains("id") && g["id"].is_number_integer() && g.contains("type") && g["type"].is_string()) {
      type_of[g["id"].get<int64_t>()] = g["type"].get<std::string>();
    }
  }
  HASE_ASSIGN_OR_RETURN(nlohmann::json tasks, client->Get("/v1/tasks?state=succeeded&limit=10000"));
  std::vector<MeasuredRun> out;
  for (const auto& t : tasks.value("tasks", nlohmann::json::array())) {
    if (!t.contains("actual") || !t["actual"].is_object() || !t.contains("gpu") || !t["gpu"].is_object()) continue;
    const double real_s = t["actual"].value("runtime_s", 0.0);
    const int64_t batches = t.value("num_batches", int64_t{1});
    auto type = type_of.find(t["gpu"].value("id", int64_t{-1}));
    if (real_s < 1e-3 || batches < 1 || type == type_of.end()) continue;  // as the daemon's own
    MeasuredRun r;                                                         // calibration skips them
    r.model = t.value("model", std::string());
    r.gpu = type->second;
    r.runtime = t.contains("runtime") && t["runtime"].is_string() ? t["runtime"].get<std::string>() : f.runtime;
    r.batch = t.value("batch_size", int64_t{1});
    if (t.contains("input_shape") && t["input_shape"].is_string()) {
      auto shape = ParseInputShape(t["input_shape"].get<std::string>());
      if (shape.ok()) r.input_shape = *shape;
    }
    r.latency_ms = real_s * 1000.0 / static_cast<double>(batches);
    r.where = fmt::format("{} task {}", f.daemon, t.value("id", int64_t{0}));
    if (!r.model.empty()) out.push_back(std::move(r));
  }
  if (out.empty()) {
    return Status::NotFound("the daemon has no succeeded task with a real run time", f.daemon,
                            "calibrate from measured rows (a CSV) instead, or after tasks have run");
  }
  return out;
}

struct Score {
  int n = 0;
  double ape_before = 0, ape_after = 0;
  int inside = 0;
};

void Add(Score& s, double measured, double predicted, const CalibratedLatency& c) {
  ++s.n;
  s.ape_before += std::fabs(predicted - measured) / measured;
  s.ape_after += std::fabs(c.latency_ms - measured) / measured;
  s.inside += (measured >= c.p10_ms && measured <= c.p90_ms) ? 1 : 0;
}

std::string ShowTable(const LatencyCalibration& cal, const std::string& path) {
  std::string out = fmt::format("calibration {}{}\n", path.empty() ? "(not saved)" : path,
                                cal.created.empty() ? "" : "   fitted " + cal.created);
  out += fmt::format("{:<24} {:<15} {:>5} {:>7} {:>8} {:>10} {:>7}   {}\n", "GPU", "RUNTIME", "RUNS", "MODELS",
                     "FACTOR", "RAW", "SIGMA", "P10–P90 (x prediction)");
  for (const auto& [key, e] : cal.entries()) {
    const CalibratedLatency c = cal.Apply(1.0, e.gpu, e.runtime);
    out += fmt::format("{:<24} {:<15} {:>5} {:>7} {:>8.3f} {:>10.3f} {:>7.3f}   {:.2f}–{:.2f}{}\n", e.gpu, e.runtime,
                       e.runs, e.models, e.factor, e.raw_factor, e.sigma, c.p10_ms, c.p90_ms,
                       e.raw_factor != e.factor ? "   (clamped: the prediction is more than 2x off)" : "");
  }
  const CalibratedLatency u = LatencyCalibration::Uncalibrated(1.0);
  out += fmt::format("any other GPU type x runtime: factor 1, p10–p90 {:.2f}–{:.2f} x prediction\n", u.p10_ms,
                     u.p90_ms);
  return out;
}

nlohmann::json EntriesJson(const LatencyCalibration& cal) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [key, e] : cal.entries()) {
    a.push_back({{"gpu", e.gpu}, {"runtime", e.runtime}, {"factor", e.factor}, {"raw_factor", e.raw_factor},
                 {"sigma", e.sigma}, {"runs", e.runs}, {"models", e.models}});
  }
  return a;
}

int Run(const CalibrateFlags& f) {
  const bool fitting = !f.rows.empty() || !f.daemon.empty();
  if (!fitting && f.check.empty() && !f.show) {
    return Fail(Status::InvalidArgument("nothing to do", "hase calibrate",
                                        "give measured rows (ROWS.csv, --daemon URL), --check ROWS.csv or --show"));
  }
  if (fitting && !f.calibration.empty()) {
    return Fail(Status::InvalidArgument("--calibration names a calibration to use; this run fits a new one",
                                        "--calibration", "use --out FILE to say where to save it"));
  }
  const std::string out_path = f.out.empty() ? DefaultCalibrationPath() : f.out;
  if (f.show && !fitting) {
    const std::string path = f.calibration.empty() ? out_path : f.calibration;
    auto cal = LoadCalibration(path);
    if (!cal.ok()) return Fail(cal.status());
    if (f.format == "json") {
      std::printf("%s\n", nlohmann::json({{"path", path}, {"created", cal->created}, {"entries", EntriesJson(*cal)}})
                              .dump(2)
                              .c_str());
    } else {
      std::fputs(ShowTable(*cal, path).c_str(), stdout);
    }
    if (f.check.empty()) return 0;
  }
  auto catalog = GpuCatalog::Load(f.catalog);
  if (!catalog.ok()) return Fail(catalog.status());

  LatencyCalibration cal;
  nlohmann::json report = nlohmann::json::object();
  std::string text;
  if (fitting) {
    std::vector<MeasuredRun> runs;
    for (const std::string& file : f.rows) {
      auto r = ReadMeasuredRuns(file);
      if (!r.ok()) return Fail(r.status());
      runs.insert(runs.end(), r->begin(), r->end());
    }
    if (!f.daemon.empty()) {
      auto r = DaemonRuns(f);
      if (!r.ok()) return Fail(r.status());
      runs.insert(runs.end(), r->begin(), r->end());
    }
    auto scored = PredictAll(runs, f, *catalog, nullptr);
    if (!scored.ok()) return Fail(scored.status());
    std::vector<CalibrationPoint> points;
    for (const Scored& s : *scored) {
      const double ratio = s.run.latency_ms / s.predicted_ms;
      if (ratio > LatencyCalibration::kMaxRowRatio || ratio < 1 / LatencyCalibration::kMaxRowRatio) {
        const std::string what = fmt::format("{} on {}: measured {} ms per batch where hase predicts {:.4g} ms, "
                                             "{:.3g}x off", s.run.model, s.gpu_id, s.run.latency_ms, s.predicted_ms,
                                             ratio);
        // A daemon task that hung or waited on something else is not a correction: skip it.
        if (!f.daemon.empty() && s.run.where.rfind(f.daemon, 0) == 0) {
          std::fprintf(stderr, "hase: warning: %s: %s; not used\n", s.run.where.c_str(), what.c_str());
          continue;
        }
        return Fail(Status::InvalidArgument(
            what, s.run.where,
            fmt::format("rows more than {}x from the prediction are refused: is it ms per batch, at this batch "
                        "size and runtime? drop the row if the measurement is right", LatencyCalibration::kMaxRowRatio)));
      }
      points.push_back({s.run.model, s.gpu_id, s.runtime, s.predicted_ms, s.run.latency_ms});
    }
    auto fitted = FitCalibration(points);
    if (!fitted.ok()) return Fail(fitted.status());
    // Merge: the entries fitted now replace theirs; the others stay (--replace: start empty).
    if (!f.replace && !out_path.empty()) {
      auto old = LoadCalibration(out_path);
      if (old.ok()) {
        cal = *old;
      } else if (!old.status().IsNotFound()) {
        return Fail(old.status().WithContext("merging into --out (pass --replace to overwrite it)"));
      }
    }
    for (const auto& [key, e] : fitted->entries()) cal.Set(e);
    cal.created = fitted->created;
    std::map<std::pair<std::string, std::string>, Score> in_sample;
    for (const Scored& s : *scored) {
      Add(in_sample[{s.gpu_id, s.runtime}], s.run.latency_ms, s.predicted_ms, cal.Apply(s.predicted_ms, s.gpu_id, s.runtime));
    }
    text += fmt::format("fitted on {} measured runs ({} GPU type x runtime groups)\n", scored->size(),
                        fitted->entries().size());
    text += fmt::format("{:<24} {:<15} {:>5}  {:>17}  {:>9}\n", "GPU", "RUNTIME", "RUNS", "MAPE BEFORE->AFTER",
                        "IN P10–P90");
    nlohmann::json fit_rows = nlohmann::json::array();
    for (const auto& [key, s] : in_sample) {
      text += fmt::format("{:<24} {:<15} {:>5}  {:>7.1f} -> {:>5.1f} %  {:>8.0f} %\n", key.first, key.second, s.n,
                          100 * s.ape_before / s.n, 100 * s.ape_after / s.n, 100.0 * s.inside / s.n);
      fit_rows.push_back({{"gpu", key.first}, {"runtime", key.second}, {"runs", s.n},
                          {"mape_before", s.ape_before / s.n}, {"mape_after", s.ape_after / s.n},
                          {"coverage_p10_p90", static_cast<double>(s.inside) / s.n}});
    }
    text += "(in-sample: the runs the factors were fitted on; score held-out runs with --check)\n\n";
    report["fit"] = fit_rows;
    if (f.dry_run || out_path.empty()) {
      if (!f.dry_run) {
        return Fail(Status::InvalidArgument("no place to save the calibration: HOME is not set", "--out",
                                            "pass --out FILE (or --dry-run)"));
      }
    } else {
      if (Status s = SaveCalibration(cal, out_path); !s.ok()) return Fail(s);
      cal.source = out_path;
    }
    text += ShowTable(cal, f.dry_run ? "" : out_path);
    report["path"] = f.dry_run ? nlohmann::json(nullptr) : nlohmann::json(out_path);
    report["entries"] = EntriesJson(cal);
  } else if (!f.check.empty()) {
    auto loaded = f.calibration.empty() ? LoadCalibration(out_path) : LoadCalibration(f.calibration);
    if (!loaded.ok()) return Fail(loaded.status().WithContext("--check"));
    cal = *loaded;
  }

  if (!f.check.empty()) {
    std::vector<MeasuredRun> runs;
    for (const std::string& file : f.check) {
      auto r = ReadMeasuredRuns(file);
      if (!r.ok()) return Fail(r.status().WithContext("--check"));
      runs.insert(runs.end(), r->begin(), r->end());
    }
    auto scored = PredictAll(runs, f, *catalog, nullptr);
    if (!scored.ok()) return Fail(scored.status().WithContext("--check"));
    std::map<std::string, Score> by_gpu;
    Score all;
    for (const Scored& s : *scored) {
      const CalibratedLatency c = cal.Apply(s.predicted_ms, s.gpu_id, s.runtime);
      Add(by_gpu[s.gpu_id + " " + s.runtime + (c.calibrated ? "" : " (no entry)")], s.run.latency_ms,
          s.predicted_ms, c);
      Add(all, s.run.latency_ms, s.predicted_ms, c);
    }
    text += fmt::format("\ncheck on {} held-out runs\n{:<40} {:>5}  {:>17}  {:>9}\n", all.n, "GPU RUNTIME", "RUNS",
                        "MAPE BEFORE->AFTER", "IN P10–P90");
    nlohmann::json check = nlohmann::json::array();
    by_gpu["all"] = all;
    for (const auto& [key, s] : by_gpu) {
      text += fmt::format("{:<40} {:>5}  {:>7.1f} -> {:>5.1f} %  {:>8.0f} %\n", key, s.n, 100 * s.ape_before / s.n,
                          100 * s.ape_after / s.n, 100.0 * s.inside / s.n);
      check.push_back({{"group", key}, {"runs", s.n}, {"mape_before", s.ape_before / s.n},
                       {"mape_after", s.ape_after / s.n}, {"coverage_p10_p90", static_cast<double>(s.inside) / s.n}});
    }
    report["check"] = check;
  }
  if (f.format == "json") {
    std::printf("%s\n", report.dump(2).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  return 0;
}

}  // namespace

Command AddCalibrateCommand(CLI::App& parent) {
  auto f = std::make_shared<CalibrateFlags>();
  Command c;
  c.app = parent.add_subcommand(
      "calibrate", "Fit a per-GPU-type x runtime correction of predictions from measured runs; every command uses it");
  c.app->add_option("rows", f->rows,
                    "measured runs: CSV with model,gpu,batch,latency_ms[,runtime,precision,input_shape], "
                    "or hase-probe's --model-out CSV");
  c.app->add_option("--daemon", f->daemon, "also learn from the succeeded tasks of a running hase serve (http://HOST:PORT)");
  c.app->add_option("--token-file", f->token_file, "bearer token file for --daemon (as `hase serve --token-file`)");
  c.app->add_option("--runtime", f->runtime, "runtime of daemon tasks that name none (the daemon's --runtime)")
      ->capture_default_str();
  c.app->add_option("--out", f->out, "where to save it (default: $HASE_CALIBRATION, else "
                                     "$XDG_STATE_HOME/hase/calibration.json, else ~/.local/state/hase/calibration.json)");
  c.app->add_flag("--replace", f->replace, "drop the entries already saved (default: keep those of other GPU types/runtimes)");
  c.app->add_flag("--dry-run", f->dry_run, "fit and print, save nothing");
  c.app->add_option("--check", f->check, "score the calibration on held-out measured runs (same CSV formats)");
  c.app->add_option("--calibration", f->calibration, "calibration file for --check/--show (default: the saved one)");
  c.app->add_flag("--show", f->show, "print the saved calibration");
  c.app->add_option("--models", f->models_dir, "directory of zoo models (default: the installed zoo)");
  c.app->add_option("--catalog", f->catalog, "GPU catalog YAML (default: built-in)");
  c.app->add_option("--format", f->format, "table (default) or json")->check(CLI::IsMember({"table", "json"}));
  c.run = [f] { return Run(*f); };
  return c;
}

}  // namespace hase::cli
