#include "hase/predict/metrics.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace hase::predict {
namespace {

// Hand-computed: measured {1,2,4,5,10}, predicted {1.1,1.8,5,5,8}.
// APE = {0.1, 0.1, 0.25, 0, 0.2}; MAPE = 0.65/5 = 0.13; sorted {0,0.1,0.1,0.2,0.25};
// median = rank ceil(2.5)=3 → 0.1; p90 = rank ceil(4.5)=5 → 0.25.
// mean(m) = 4.4; SS_tot = 11.56+5.76+0.16+0.36+31.36 = 49.2;
// SS_res = 0.01+0.04+1+0+4 = 5.05; R² = 1 − 5.05/49.2 = 0.897357…
TEST(MetricsTest, HandComputedValues) {
  std::vector<double> m = {1, 2, 4, 5, 10};
  std::vector<double> p = {1.1, 1.8, 5, 5, 8};
  ErrorMetrics e = ComputeErrorMetrics(m, p);
  EXPECT_EQ(e.count, 5u);
  EXPECT_NEAR(e.mape, 0.13, 1e-12);
  EXPECT_NEAR(e.median_ape, 0.1, 1e-12);
  EXPECT_NEAR(e.p90_ape, 0.25, 1e-12);
  EXPECT_NEAR(e.r2, 1.0 - 5.05 / 49.2, 1e-12);
}

TEST(MetricsTest, PerfectPredictionAndEdgeCases) {
  std::vector<double> m = {3, 4};
  ErrorMetrics e = ComputeErrorMetrics(m, m);
  EXPECT_EQ(e.mape, 0);
  EXPECT_EQ(e.r2, 1.0);
  EXPECT_EQ(ComputeErrorMetrics({}, {}).count, 0u);
  std::vector<double> same = {2, 2};
  std::vector<double> p = {1, 3};
  EXPECT_TRUE(std::isnan(ComputeErrorMetrics(same, p).r2));  // constant measured: undefined
  EXPECT_NEAR(ComputeErrorMetrics(same, p).mape, 0.5, 1e-12);
}

}  // namespace
}  // namespace hase::predict
