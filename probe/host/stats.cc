#include "stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hase::probe {
namespace {

Status CheckSamples(std::span<const double> samples) {
  if (samples.empty()) {
    return Status::InvalidArgument("no samples", "statistics", "time at least one repetition");
  }
  for (double v : samples) {
    if (std::isnan(v)) return Status::InvalidArgument("a sample is NaN", "statistics");
  }
  return Status::OK();
}

// Percentile of already sorted, checked samples.
double SortedPercentile(const std::vector<double>& x, double p) {
  const double h = static_cast<double>(x.size() - 1) * p / 100.0;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, x.size() - 1);
  return x[lo] + (h - static_cast<double>(lo)) * (x[hi] - x[lo]);
}

}  // namespace

Result<double> Percentile(std::span<const double> samples, double p) {
  HASE_RETURN_IF_ERROR(CheckSamples(samples));
  if (!(p >= 0.0 && p <= 100.0)) {
    return Status::InvalidArgument("percentile must be in [0, 100]", "statistics");
  }
  std::vector<double> x(samples.begin(), samples.end());
  std::sort(x.begin(), x.end());
  return SortedPercentile(x, p);
}

Result<double> Median(std::span<const double> samples) { return Percentile(samples, 50.0); }

Result<Summary> Summarize(std::span<const double> samples) {
  HASE_RETURN_IF_ERROR(CheckSamples(samples));
  std::vector<double> x(samples.begin(), samples.end());
  std::sort(x.begin(), x.end());
  Summary s;
  s.n = static_cast<int>(x.size());
  s.min = x.front();
  s.max = x.back();
  s.p10 = SortedPercentile(x, 10);
  s.median = SortedPercentile(x, 50);
  s.p90 = SortedPercentile(x, 90);
  double sum = 0;
  for (double v : x) sum += v;
  s.mean = sum / s.n;
  if (s.n > 1) {
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / (s.n - 1));
  }
  return s;
}

}  // namespace hase::probe
