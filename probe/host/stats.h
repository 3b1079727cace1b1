// Statistics over repeated timings: median, percentiles, mean, spread.
//
// Percentiles use linear interpolation between closest ranks (numpy's default "linear"
// method, Hyndman & Fan 1996 definition 7): for sorted x[0..n-1] and p in [0, 100], the rank is
// h = (n - 1) * p / 100 and the value x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]).
#pragma once

#include <span>

#include "hase/base/status.h"

namespace hase::probe {

// A summary of n samples in the samples' unit (the probe uses ms).
struct Summary {
  int n = 0;
  double min = 0;
  double p10 = 0;
  double median = 0;
  double p90 = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1 in the denominator); 0 when n == 1
};

// The p-th percentile (p in [0, 100]) of `samples` (any order).
// Errors: InvalidArgument when samples is empty, p is outside [0, 100] or a sample is NaN.
Result<double> Percentile(std::span<const double> samples, double p);

// The median (the 50th percentile; mean of the two middle values for even n).
Result<double> Median(std::span<const double> samples);

// All of Summary at once. Errors as Percentile.
Result<Summary> Summarize(std::span<const double> samples);

}  // namespace hase::probe
