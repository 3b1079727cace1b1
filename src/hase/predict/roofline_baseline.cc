#include "hase/predict/roofline_baseline.h"

#include <cmath>
#include <limits>

#include "hase/predict/features.h"

namespace hase::predict {

namespace {

struct Sums {
  double aa = 0, ab = 0, bb = 0, a = 0, b = 0;
  size_t n = 0;
};

// Sum of squared relative residuals for coefficients (c, d), from the sums:
// Σ (c a + d b − 1)² = c² aa + 2 c d ab + d² bb − 2 c a − 2 d b + n.
double Loss(const Sums& s, double c, double d) {
  return c * c * s.aa + 2 * c * d * s.ab + d * d * s.bb - 2 * c * s.a - 2 * d * s.b +
         static_cast<double>(s.n);
}

}  // namespace

std::string RooflineBaseline::Key(const KernelSample& s) {
  return std::string(KernelFamilyName(s.family)) + (s.includes_transfer ? "+transfer" : "");
}

RooflineBaseline RooflineBaseline::Fit(const std::vector<KernelSample>& rows,
                                       const std::vector<const GpuSpec*>& gpus) {
  std::map<std::string, Sums> sums;
  for (size_t i = 0; i < rows.size() && i < gpus.size(); ++i) {
    const KernelSample& s = rows[i];
    if (!(s.latency_ms > 0) || gpus[i] == nullptr) continue;
    const Roofline r = FixedRoofline(s, *gpus[i]);
    if (!(r.compute_ms > 0) && !(r.memory_ms > 0)) continue;
    const double a = r.compute_ms / s.latency_ms, b = r.memory_ms / s.latency_ms;
    Sums& q = sums[Key(s)];
    q.aa += a * a;
    q.ab += a * b;
    q.bb += b * b;
    q.a += a;
    q.b += b;
    ++q.n;
  }
  RooflineBaseline out;
  for (const auto& [key, q] : sums) {
    Coefficients best;
    best.rows = q.n;
    double best_loss = std::numeric_limits<double>::infinity();
    auto consider = [&](double c, double d) {
      if (!(c >= 0) || !(d >= 0) || !std::isfinite(c) || !std::isfinite(d)) return;
      const double l = Loss(q, c, d);
      if (l < best_loss) {
        best_loss = l;
        best.c = c;
        best.d = d;
      }
    };
    const double det = q.aa * q.bb - q.ab * q.ab;
    if (det > 0) consider((q.a * q.bb - q.b * q.ab) / det, (q.b * q.aa - q.a * q.ab) / det);
    if (q.aa > 0) consider(q.a / q.aa, 0);
    if (q.bb > 0) consider(0, q.b / q.bb);
    out.coef_[key] = best;
  }
  return out;
}

double RooflineBaseline::Predict(const KernelSample& s, const GpuSpec& gpu) const {
  auto it = coef_.find(Key(s));
  if (it == coef_.end()) return std::numeric_limits<double>::quiet_NaN();
  const Roofline r = FixedRoofline(s, gpu);
  return it->second.c * r.compute_ms + it->second.d * r.memory_ms;
}

}  // namespace hase::predict
