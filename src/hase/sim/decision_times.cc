#include "hase/sim/decision_times.h"

#include <algorithm>
#include <cmath>

namespace hase::sim {
namespace {
constexpr double kMinUs = 0.01;
const double kLogStep = std::log(1.01);
}  // namespace

void DecisionTimes::Add(double us) {
  ++count_;
  sum_ += us;
  max_ = std::max(max_, us);
  int b = us <= kMinUs ? 0 : static_cast<int>(std::ceil(std::log(us / kMinUs) / kLogStep));
  buckets_[std::clamp(b, 0, kBuckets - 1)] += 1;
}

double DecisionTimes::Percentile(double q) const {
  if (count_ == 0) return 0;
  const int64_t rank =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(q * static_cast<double>(count_))), 1, count_);
  int64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= rank) return std::min(max_, kMinUs * std::exp(kLogStep * b));
  }
  return max_;
}

}  // namespace hase::sim
