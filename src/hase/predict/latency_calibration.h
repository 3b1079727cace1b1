// LatencyCalibration: a bounded per-GPU-type × runtime correction of model-level predictions,
// fitted from a few measured runs (`hase calibrate`), plus the p10–p90 interval every prediction
// carries.
//
// Fit (FitCalibration), per (GPU type, runtime) group of measured runs:
//   r_i     = ln(measured_ms_i / predicted_ms_i)             (predicted: uncalibrated PredictModel)
//   m_j     = mean of r_i over the runs of model j           (each model counts once, whatever
//                                                             its number of batch sizes)
//   factor  = clamp(exp(mean_j m_j), kMinFactor, kMaxFactor)
//   sigma   = sqrt((kPriorWeight·kPriorSigma² + Σ_i (r_i − ln factor)²) / (kPriorWeight + n − 1))
//             (the spread of what is left, shrunk towards the prior with few runs)
// Apply: latency_ms = factor × predicted; interval
//   p10, p90 = latency_ms × exp(∓ kZ80 · sigma)
// (sigma is taken around the mean of the model means, so it already holds the between-model
// spread; widening it further by sqrt(1 + 1/models) covered 87 % of held-out timm runs, not 80).
// A GPU type × runtime without an entry keeps factor 1 and the uncalibrated interval
// [exp(kUncalibratedLogP10), exp(kUncalibratedLogP90)] × predicted: quantiles of
// ln(measured / predicted) over the whole-model sets of ../shared. Constants, and the coverage
// each interval reaches on held-out measurements: docs/predictor.md, "Calibration and error bars".
//
// The file (JSON, SaveCalibration) lives at DefaultCalibrationPath() unless a command is told
// another one; `hase predict`, `simulate` and `serve` load it when it exists.
// Thread-safety: a const LatencyCalibration is safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hase/base/status.h"

namespace hase {

// One measured whole-model run beside hase's uncalibrated prediction of it.
struct CalibrationPoint {
  std::string model;          // zoo name or ONNX path (counted per distinct value)
  std::string gpu;            // GpuSpec::id (canonical catalog id)
  std::string runtime;        // RuntimeProfile::name
  double predicted_ms = 0;    // uncalibrated PredictModel latency per batch, > 0
  double measured_ms = 0;     // measured latency per batch, > 0
};

// What one GPU type × runtime learned.
struct CalibrationEntry {
  std::string gpu;            // GpuSpec::id
  std::string runtime;        // RuntimeProfile::name
  double factor = 1;          // measured / predicted, in [kMinFactor, kMaxFactor]
  double sigma = 0;           // spread of ln(measured / (factor × predicted)), see file comment
  int runs = 0;               // measured runs fitted
  int models = 0;             // distinct models among them
  double raw_factor = 1;      // exp(mean_j m_j) before the clamp (a value outside the bounds
                              // says the world model is off: a wrong catalog entry or runtime)
};

// A calibrated prediction of one batch.
struct CalibratedLatency {
  double latency_ms = 0;      // factor × predicted
  double p10_ms = 0;          // 10th percentile of the measured latency, ms
  double p90_ms = 0;          // 90th percentile, ms
  double factor = 1;          // the factor applied (1 = no entry)
  bool calibrated = false;    // an entry for this GPU type × runtime was used
};

class LatencyCalibration {
 public:
  static constexpr double kMinFactor = 0.5;   // the same bounds as the daemon's live factor
  static constexpr double kMaxFactor = 2.0;   // (service/calibration.h): > 2× off is a bug
  // FitCalibration refuses a row more than this far from its prediction (a unit or batch
  // mix-up, not a correction); it also keeps sigma well inside what LoadCalibration accepts.
  static constexpr double kMaxRowRatio = 10.0;
  static constexpr double kZ80 = 1.2815516;   // standard normal 90th percentile
  // Prior spread of ln(measured / calibrated) and its weight in runs: the rms of
  // ln(measured / calibrated) on held-out timm models after a 3-model calibration is 0.133
  // (tools/calibration_check; docs/predictor.md, "Calibration and error bars").
  static constexpr double kPriorSigma = 0.13;
  static constexpr double kPriorWeight = 4;
  // p10 and p90 of ln(measured / uncalibrated prediction) over the 352 runs of the ../shared
  // whole-model sets (timm, cpn_controller solo, nvidia_dle; tools/calibration_check, same
  // section): -0.131 and 0.779. The interval of a GPU type × runtime nobody calibrated.
  static constexpr double kUncalibratedLogP10 = -0.13;
  static constexpr double kUncalibratedLogP90 = 0.78;

  LatencyCalibration() = default;

  // Corrects one uncalibrated per-batch prediction (predicted_ms > 0) of a model run by
  // `runtime` on GPU type `gpu` (GpuSpec::id).
  CalibratedLatency Apply(double predicted_ms, const std::string& gpu, const std::string& runtime) const;

  // The uncalibrated prediction with its interval (what Apply gives without an entry).
  static CalibratedLatency Uncalibrated(double predicted_ms);

  // The entry for (gpu, runtime), or nullptr.
  const CalibrationEntry* Find(const std::string& gpu, const std::string& runtime) const;
  const std::map<std::pair<std::string, std::string>, CalibrationEntry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  // Adds or replaces the entry of (entry.gpu, entry.runtime). REQUIRES factor in the bounds.
  void Set(const CalibrationEntry& entry);

  std::string source;         // where it was loaded from ("" = built in memory)
  std::string created;        // ISO 8601 UTC time it was fitted ("" = unknown)

 private:
  std::map<std::pair<std::string, std::string>, CalibrationEntry> entries_;
};

// Fits one entry per (gpu, runtime) of `points` (file comment). Errors: InvalidArgument for an
// empty list, a point with predicted_ms or measured_ms not > 0, or one more than kMaxRowRatio
// from its prediction (naming the model and GPU).
Result<LatencyCalibration> FitCalibration(const std::vector<CalibrationPoint>& points);

// JSON file: {"version": 1, "created": "...", "entries": [{"gpu", "runtime", "factor", "sigma",
// "runs", "models", "raw_factor"}, ...]}. Errors: NotFound (no file), IO, Parse (not that
// format, a factor outside the bounds, a negative sigma), each naming the file.
Result<LatencyCalibration> LoadCalibration(const std::string& path);
// Writes the file, creating its directory. Errors: IO naming the path.
Status SaveCalibration(const LatencyCalibration& calibration, const std::string& path);

// Where the calibration lives unless a command is given another file: $HASE_CALIBRATION when
// set, else $XDG_STATE_HOME/hase/calibration.json, else $HOME/.local/state/hase/calibration.json
// ("" when none of these is set).
std::string DefaultCalibrationPath();

// The calibration a command uses: `flag` "none" = none (empty); a path = that file (it must
// exist); "" = DefaultCalibrationPath() when that file exists, else none. Errors: as
// LoadCalibration, with the flag as context.
Result<LatencyCalibration> LoadCalibrationFlag(const std::string& flag);

}  // namespace hase
