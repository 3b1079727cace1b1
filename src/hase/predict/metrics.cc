#include "hase/predict/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hase/base/check.h"

namespace hase::predict {

namespace {
double NearestRank(const std::vector<double>& sorted, double p) {
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}
}  // namespace

ErrorMetrics ComputeErrorMetrics(std::span<const double> measured,
                                 std::span<const double> predicted) {
  ErrorMetrics m;
  const size_t n = std::min(measured.size(), predicted.size());
  m.count = n;
  if (n == 0) return m;
  std::vector<double> ape(n);
  double mean = 0;
  for (size_t i = 0; i < n; ++i) {
    ape[i] = std::fabs(predicted[i] - measured[i]) / measured[i];
    mean += measured[i];
  }
  mean /= static_cast<double>(n);
  double sum = 0, ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += ape[i];
    ss_res += (measured[i] - predicted[i]) * (measured[i] - predicted[i]);
    ss_tot += (measured[i] - mean) * (measured[i] - mean);
  }
  m.mape = sum / static_cast<double>(n);
  std::sort(ape.begin(), ape.end());
  m.median_ape = NearestRank(ape, 50);
  m.p90_ape = NearestRank(ape, 90);
  m.r2 = (n < 2 || ss_tot == 0) ? std::numeric_limits<double>::quiet_NaN() : 1.0 - ss_res / ss_tot;
  return m;
}

}  // namespace hase::predict
