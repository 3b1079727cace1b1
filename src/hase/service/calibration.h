// CalibratedOracle: a LatencyOracle that corrects another one with what really ran.
//
// When a task ends successfully, the daemon hands its real run time (end − start, wall s) and
// the run time it was placed with (predicted end − predicted start) to Observe. The ratio
// real / predicted, taken back to the uncorrected oracle (× the factor the placement used),
// feeds an exponentially weighted mean per model × GPU type; Profile then multiplies the
// wrapped oracle's isolated_ms by that factor, so the policy's decisions, `why` and the live
// plan (its ETAs) all see the corrected durations (the daemon also re-prices bound tasks and
// stretches running ones every pass, RefreshGpusLocked). Demand and memory are left as they are.
//
// The numbers, and why:
//   kMinSamples = 2     one run can be an outlier (a cold cache, a noisy neighbour); two that
//                       agree are a trend. Until then the factor is tracked but not applied.
//   kWeight = 0.3       the newest ratio's weight: a step change in the truth is 83 % absorbed
//                       after 5 completions (1 − 0.7^5), while one outlier moves the factor by
//                       at most 30 % of its own error. The first ratio seeds the mean.
//   [0.5, 2]            the factor's range: a world model more than 2× off is a bug to fix (a
//                       wrong catalog entry, a wrong runtime), not something to paper over, and
//                       a runaway ratio (a task stuck on I/O) must not make a GPU type look free
//                       or useless. Ratios are clamped to the same range before they enter.
// Keyed by the task's model name (TaskSpec::model; batch and input are not told apart) and the
// GPU type name. Tasks that failed, were cancelled, ran under 1 ms or have no prediction teach
// nothing. In memory; the daemon rebuilds it at Start() by replaying the journal's succeeded
// tasks in end order (their real times and predictions are journalled), so nothing extra is
// stored.
//
// Thread-safety: all methods are safe for concurrent use (one small mutex over the factors).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hase/sched/latency_oracle.h"

namespace hase::service {

class CalibratedOracle final : public sched::LatencyOracle {
 public:
  static constexpr int kMinSamples = 2;
  static constexpr double kWeight = 0.3;
  static constexpr double kMinFactor = 0.5;
  static constexpr double kMaxFactor = 2.0;

  // REQUIRES: base != null.
  explicit CalibratedOracle(std::shared_ptr<const sched::LatencyOracle> base) : base_(std::move(base)) {}

  // The wrapped oracle's profile with isolated_ms × Factor(task.model, type.name).
  Result<sched::TaskProfile> Profile(const sched::Task& task, const sched::GpuType& type) const override;
  const sched::ContentionModel& contention() const override { return base_->contention(); }
  Result<std::vector<int64_t>> DeclaredInputShape(const std::string& model) const override {
    return base_->DeclaredInputShape(model);
  }

  // What one model × GPU type has learned.
  struct Entry {
    std::string model, type;
    double factor = 1.0;      // the mean ratio real / uncorrected prediction, in [0.5, 2]
    int samples = 0;          // completions seen
    double last_ratio = 0;    // the newest one's ratio (clamped)
    bool applied() const { return samples >= kMinSamples; }
  };

  // Learns from one completed run of `task` on `type`: real_s its real run time, predicted_s
  // the run time it was placed with, placed_isolated_ms the (corrected) isolated_ms it was
  // priced at (TaskRecord::predicted_isolated_ms; 0 = unknown: taken as uncorrected). Returns
  // the entry after the update, or nothing when the run teaches nothing (see file comment).
  std::optional<Entry> Observe(const sched::Task& task, const sched::GpuType& type, double real_s,
                               double predicted_s, double placed_isolated_ms);

  // The factor Profile applies now: 1 until kMinSamples completions.
  double Factor(const std::string& model, const std::string& type) const;
  // Every entry seen, by (model, type).
  std::vector<Entry> Entries() const;
  // Changes each time a factor Profile applies changes (0 = none applies yet): callers that keep
  // prices re-price only when it moved.
  uint64_t generation() const {
    std::lock_guard<std::mutex> lock(mu_);
    return generation_;
  }

 private:
  const std::shared_ptr<const sched::LatencyOracle> base_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Entry> entries_;  // guarded by mu_
  uint64_t generation_ = 0;                                       // guarded by mu_
};

}  // namespace hase::service
