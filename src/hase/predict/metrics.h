// Accuracy metrics for latency predictors, over paired (measured, predicted) values.
//
// APE_i = |predicted_i − measured_i| / measured_i (a fraction; printed ×100 as %).
// MAPE = mean APE; median and p90 APE use the nearest-rank definition on the sorted APEs
// (p-th percentile = value at rank ceil(p/100 · n), 1-based), so they are always observed values.
// R² = 1 − Σ(m − p)² / Σ(m − mean(m))², on the raw (not log) latencies; R² is NaN when fewer than
// two values or when every measured value is equal.
#pragma once

#include <span>

namespace hase::predict {

struct ErrorMetrics {
  size_t count = 0;
  double mape = 0;        // fraction, e.g. 0.082 = 8.2 %
  double median_ape = 0;  // fraction
  double p90_ape = 0;     // fraction
  double r2 = 0;          // coefficient of determination (NaN when undefined)
};

// REQUIRES: measured.size() == predicted.size(); every measured value > 0.
// Returns a zero-count ErrorMetrics for empty input.
ErrorMetrics ComputeErrorMetrics(std::span<const double> measured,
                                 std::span<const double> predicted);

}  // namespace hase::predict
