#include "hase/predict/latency_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hase {
namespace {

std::string NowUtc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

const CalibrationEntry* LatencyCalibration::Find(const std::string& gpu,
                                                 const std::string& runtime) const {
  auto it = entries_.find({gpu, runtime});
  return it == entries_.end() ? nullptr : &it->second;
}

void LatencyCalibration::Set(const CalibrationEntry& entry) { entries_[{entry.gpu, entry.runtime}] = entry; }

CalibratedLatency LatencyCalibration::Uncalibrated(double predicted_ms) {
  CalibratedLatency c;
  c.latency_ms = predicted_ms;
  c.p10_ms = predicted_ms * std::exp(kUncalibratedLogP10);
  c.p90_ms = predicted_ms * std::exp(kUncalibratedLogP90);
  return c;
}

CalibratedLatency LatencyCalibration::Apply(double predicted_ms, const std::string& gpu,
                                            const std::string& runtime) const {
  const CalibrationEntry* e = Find(gpu, runtime);
  if (e == nullptr) return Uncalibrated(predicted_ms);
  CalibratedLatency c;
  c.calibrated = true;
  c.factor = e->factor;
  c.latency_ms = predicted_ms * e->factor;
  const double half = kZ80 * e->sigma;
  c.p10_ms = c.latency_ms * std::exp(-half);
  c.p90_ms = c.latency_ms * std::exp(half);
  return c;
}

Result<LatencyCalibration> FitCalibration(const std::vector<CalibrationPoint>& points) {
  if (points.empty()) {
    return Status::InvalidArgument("no measured runs to calibrate from", "",
                                   "give measured rows (model, gpu, batch, latency_ms)");
  }
  // (gpu, runtime) → model → log ratios
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> groups;
  for (const CalibrationPoint& p : points) {
    if (!(p.predicted_ms > 0) || !(p.measured_ms > 0) || !std::isfinite(p.predicted_ms) ||
        !std::isfinite(p.measured_ms)) {
      return Status::InvalidArgument(fmt::format("{} on {}: measured {} ms, predicted {} ms; both must be > 0",
                                                 p.model, p.gpu, p.measured_ms, p.predicted_ms));
    }
    const double ratio = p.measured_ms / p.predicted_ms;
    if (ratio > LatencyCalibration::kMaxRowRatio || ratio < 1 / LatencyCalibration::kMaxRowRatio) {
      return Status::InvalidArgument(
          fmt::format("{} on {} ({}): measured {} ms per batch where hase predicts {:.4g} ms, {:.3g}x off", p.model,
                      p.gpu, p.runtime, p.measured_ms, p.predicted_ms, ratio),
          "", fmt::format("rows more than {}x from the prediction are refused: is it ms per batch, this batch size "
                          "and this runtime? drop the row if the measurement is right",
                          LatencyCalibration::kMaxRowRatio));
    }
    groups[{p.gpu, p.runtime}][p.model].push_back(std::log(ratio));
  }
  LatencyCalibration cal;
  cal.created = NowUtc();
  for (const auto& [key, models] : groups) {
    double sum_means = 0;
    int runs = 0;
    for (const auto& [model, rs] : models) {
      double s = 0;
      for (double r : rs) s += r;
      sum_means += s / static_cast<double>(rs.size());
      runs += static_cast<int>(rs.size());
    }
    CalibrationEntry e;
    e.gpu = key.first;
    e.runtime = key.second;
    e.models = static_cast<int>(models.size());
    e.runs = runs;
    e.raw_factor = std::exp(sum_means / e.models);
    e.factor = std::clamp(e.raw_factor, LatencyCalibration::kMinFactor, LatencyCalibration::kMaxFactor);
    const double lf = std::log(e.factor);
    double ss = 0;
    for (const auto& [model, rs] : models) {
      for (double r : rs) ss += (r - lf) * (r - lf);
    }
    const double w = LatencyCalibration::kPriorWeight;
    e.sigma = std::sqrt((w * LatencyCalibration::kPriorSigma * LatencyCalibration::kPriorSigma + ss) /
                        (w + runs - 1));
    cal.Set(e);
  }
  return cal;
}

Result<LatencyCalibration> LoadCalibration(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound("no calibration file", path, "run `hase calibrate` to make one");
  }
  std::ifstream in(path);
  if (!in) return Status::IO("cannot read the calibration file", path);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto bad = [&](const std::string& what) {
    return Status::Parse(what, path, "write it with `hase calibrate`, or remove it");
  };
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("version") || j["version"] != 1) return bad("not a version 1 calibration file");
  if (!j.contains("entries") || !j["entries"].is_array()) return bad("no \"entries\" array");
  LatencyCalibration cal;
  cal.source = path;
  if (j.contains("created") && j["created"].is_string()) cal.created = j["created"].get<std::string>();
  int i = 0;
  for (const auto& e : j["entries"]) {
    const std::string at = fmt::format("entries[{}]", i++);
    if (!e.is_object() || !e.contains("gpu") || !e["gpu"].is_string() || !e.contains("runtime") ||
        !e["runtime"].is_string() || !e.contains("factor") || !e["factor"].is_number() ||
        !e.contains("sigma") || !e["sigma"].is_number()) {
      return bad(at + ": needs \"gpu\", \"runtime\" (strings), \"factor\" and \"sigma\" (numbers)");
    }
    CalibrationEntry ce;
    ce.gpu = e["gpu"].get<std::string>();
    ce.runtime = e["runtime"].get<std::string>();
    ce.factor = e["factor"].get<double>();
    ce.sigma = e["sigma"].get<double>();
    ce.runs = e.value("runs", 0);
    ce.models = e.value("models", 0);
    ce.raw_factor = e.value("raw_factor", ce.factor);
    if (!(ce.factor >= LatencyCalibration::kMinFactor && ce.factor <= LatencyCalibration::kMaxFactor)) {
      return bad(fmt::format("{}: factor {} outside [{}, {}]", at, ce.factor, LatencyCalibration::kMinFactor,
                             LatencyCalibration::kMaxFactor));
    }
    if (!(ce.sigma >= 0 && ce.sigma < 5)) return bad(fmt::format("{}: sigma {} not in [0, 5)", at, ce.sigma));
    cal.Set(ce);
  }
  return cal;
}

Status SaveCalibration(const LatencyCalibration& cal, const std::string& path) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& [key, e] : cal.entries()) {
    entries.push_back({{"gpu", e.gpu},
                       {"runtime", e.runtime},
                       {"factor", e.factor},
                       {"sigma", e.sigma},
                       {"runs", e.runs},
                       {"models", e.models},
                       {"raw_factor", e.raw_factor}});
  }
  nlohmann::json j = {{"version", 1}, {"created", cal.created}, {"entries", entries}};
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return Status::IO("cannot create the directory: " + ec.message(), p.parent_path().string());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::IO("cannot write the calibration file", tmp);
    out << j.dump(2) << "\n";
    if (!out.flush()) return Status::IO("cannot write the calibration file", tmp);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IO("cannot replace the calibration file: " + ec.message(), path);
  return Status::OK();
}

std::string DefaultCalibrationPath() {
  if (const char* v = std::getenv("HASE_CALIBRATION"); v != nullptr && *v != '\0') return v;
  if (const char* v = std::getenv("XDG_STATE_HOME"); v != nullptr && *v != '\0') {
    return (std::filesystem::path(v) / "hase" / "calibration.json").string();
  }
  if (const char* v = std::getenv("HOME"); v != nullptr && *v != '\0') {
    return (std::filesystem::path(v) / ".local" / "state" / "hase" / "calibration.json").string();
  }
  return "";
}

Result<LatencyCalibration> LoadCalibrationFlag(const std::string& flag) {
  if (flag == "none") return LatencyCalibration{};
  if (!flag.empty()) {
    Result<LatencyCalibration> c = LoadCalibration(flag);
    if (!c.ok()) return c.status().WithContext("--calibration");
    return c;
  }
  const std::string path = DefaultCalibrationPath();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return LatencyCalibration{};
  Result<LatencyCalibration> c = LoadCalibration(path);
  if (!c.ok()) {
    return Status(c.status()).WithContext("the saved calibration (pass --calibration none to ignore it)");
  }
  return c;
}

}  // namespace hase
