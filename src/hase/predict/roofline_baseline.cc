#include "hase/predict/roofline_baseline.h"

#include <cmath>
#include <limits>
#include <tuple>

#include "hase/predict/features.h"

namespace hase::predict {

void RelativeLeastSquares::Add(double a_i, double b_i) {
  aa += a_i * a_i;
  ab += a_i * b_i;
  bb += b_i * b_i;
  a += a_i;
  b += b_i;
  ++n;
}

std::pair<double, double> RelativeLeastSquares::Solve() const {
  // Σ (c a + d b − 1)² = c² aa + 2 c d ab + d² bb − 2 c a − 2 d b + n.
  auto loss = [&](double c, double d) {
    return c * c * aa + 2 * c * d * ab + d * d * bb - 2 * c * a - 2 * d * b;
  };
  std::pair<double, double> best{0, 0};
  double best_loss = std::numeric_limits<double>::infinity();
  auto consider = [&](double c, double d) {
    if (!(c >= 0) || !(d >= 0) || !std::isfinite(c) || !std::isfinite(d)) return;
    const double l = loss(c, d);
    if (l < best_loss) {
      best_loss = l;
      best = {c, d};
    }
  };
  const double det = aa * bb - ab * ab;
  if (det > 0) consider((a * bb - b * ab) / det, (b * aa - a * ab) / det);
  if (aa > 0) consider(a / aa, 0);
  if (bb > 0) consider(0, b / bb);
  return best;
}

std::string RooflineBaseline::Key(const KernelSample& s) {
  return std::string(KernelFamilyName(s.family)) + (s.includes_transfer ? "+transfer" : "");
}

RooflineBaseline RooflineBaseline::Fit(const std::vector<KernelSample>& rows,
                                       const std::vector<const GpuSpec*>& gpus) {
  std::map<std::string, RelativeLeastSquares> sums;
  for (size_t i = 0; i < rows.size() && i < gpus.size(); ++i) {
    const KernelSample& s = rows[i];
    if (!(s.latency_ms > 0) || gpus[i] == nullptr) continue;
    const Roofline r = FixedRoofline(s, *gpus[i]);
    if (!(r.compute_ms > 0) && !(r.memory_ms > 0)) continue;
    sums[Key(s)].Add(r.compute_ms / s.latency_ms, r.memory_ms / s.latency_ms);
  }
  RooflineBaseline out;
  for (const auto& [key, q] : sums) {
    Coefficients& c = out.coef_[key];
    std::tie(c.c, c.d) = q.Solve();
    c.rows = q.n;
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
