// RooflineBaseline: the two-parameter baseline every learned or analytic accuracy figure is
// compared with (`hase eval` prints it beside the learned model; docs/predictor-learned.md).
//
// Per op family (KernelFamily; timings with host copies, includes_transfer = 1, get their own
// pair, as the learned model gets its own booster):
//   time_ms = c · flops / peak + d · bytes / dram_bw
// peak and dram_bw are the GPU's datasheet figures of the sample's precision (FixedRoofline,
// features.h: FP32; float16 conv/gemm on tensor cores → tensor FP16 peak; other float16 →
// max(FP16, FP32)). c and d are fitted by least squares on the training rows' relative residuals,
//   min Σ_i ((c·x_i + d·y_i) / t_i − 1)²,   x = compute_ms, y = memory_ms, t = measured ms,
// so that small kernels count as much as large ones (plain squared error in ms would fit only the
// few longest kernels; the scores are relative errors). c, d ≥ 0: when the joint solution has a
// negative coefficient the better one-coefficient fit is kept. No intercept: the baseline knows
// nothing of dispatch floors, algorithms or tiles — that is what the models must beat.
#pragma once

#include <map>
#include <utility>
#include <string>
#include <vector>

#include "hase/hw/gpu_spec.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

// The fit behind the baseline, for any pair of roofline terms (kernel level here, model level in
// tools/timm_check): Add(x / t, y / t) per row, then Solve() returns the (c, d) ≥ 0 minimising
// Σ (c·a + d·b − 1)² — the joint least-squares solution when both are ≥ 0, else the better
// one-coefficient fit; (0, 0) without usable rows.
struct RelativeLeastSquares {
  double aa = 0, ab = 0, bb = 0, a = 0, b = 0;
  size_t n = 0;
  void Add(double a_i, double b_i);
  std::pair<double, double> Solve() const;
};

class RooflineBaseline {
 public:
  struct Coefficients {
    double c = 0;  // multiplies flops / peak (dimensionless; 1/c = fraction of peak reached)
    double d = 0;  // multiplies bytes / bandwidth (1/d = fraction of bandwidth reached)
    size_t rows = 0;
  };

  // Fits one (c, d) per family key on `rows` (gpus[i] = spec of rows[i]); rows with latency ≤ 0
  // or zero roofline terms are skipped. REQUIRES: rows.size() == gpus.size().
  static RooflineBaseline Fit(const std::vector<KernelSample>& rows,
                              const std::vector<const GpuSpec*>& gpus);

  // Predicted ms of `s` on `gpu`; NaN when its family key had no training row.
  double Predict(const KernelSample& s, const GpuSpec& gpu) const;

  // "conv", "gemm+transfer", … → coefficients (sorted by key).
  const std::map<std::string, Coefficients>& coefficients() const { return coef_; }

  // The key of a sample: KernelFamilyName, plus "+transfer" when it includes host copies.
  static std::string Key(const KernelSample& s);

 private:
  std::map<std::string, Coefficients> coef_;
};

}  // namespace hase::predict
