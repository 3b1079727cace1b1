#include "stats.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

TEST(Stats, MedianOddAndEven) {
  const std::vector<double> odd = {5, 1, 3};
  EXPECT_DOUBLE_EQ(*Median(odd), 3.0);
  const std::vector<double> even = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*Median(even), 2.5);  // mean of the two middle values
}

TEST(Stats, PercentileLinearInterpolationMatchesNumpy) {
  // numpy.percentile([1,2,3,4,5,6,7,8,9,10], [10, 90, 25]) == [1.9, 9.1, 3.25]
  std::vector<double> x;
  for (int i = 10; i >= 1; --i) x.push_back(i);
  EXPECT_NEAR(*Percentile(x, 10), 1.9, 1e-12);
  EXPECT_NEAR(*Percentile(x, 90), 9.1, 1e-12);
  EXPECT_NEAR(*Percentile(x, 25), 3.25, 1e-12);
  EXPECT_DOUBLE_EQ(*Percentile(x, 0), 1.0);
  EXPECT_DOUBLE_EQ(*Percentile(x, 100), 10.0);
}

TEST(Stats, SummarizeHandComputed) {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  auto s = Summarize(x);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->n, 8);
  EXPECT_DOUBLE_EQ(s->mean, 5.0);
  EXPECT_DOUBLE_EQ(s->median, 4.5);
  EXPECT_DOUBLE_EQ(s->min, 2.0);
  EXPECT_DOUBLE_EQ(s->max, 9.0);
  // Sample variance: sum of squared deviations 32 over n - 1 = 7.
  EXPECT_NEAR(s->stddev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(s->p90, 7.6, 1e-12);  // h = 6.3 → 7 + 0.3 × (9 − 7)
}

TEST(Stats, SingleSampleHasZeroSpread) {
  const std::vector<double> x = {0.125};
  auto s = Summarize(x);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->median, 0.125);
  EXPECT_DOUBLE_EQ(s->p10, 0.125);
  EXPECT_DOUBLE_EQ(s->stddev, 0.0);
}

TEST(Stats, Errors) {
  const std::vector<double> empty;
  EXPECT_TRUE(Median(empty).status().IsInvalidArgument());
  const std::vector<double> x = {1, 2};
  EXPECT_TRUE(Percentile(x, 101).status().IsInvalidArgument());
  EXPECT_TRUE(Percentile(x, -1).status().IsInvalidArgument());
  const std::vector<double> nan = {1, std::nan("")};
  EXPECT_TRUE(Summarize(nan).status().IsInvalidArgument());
}

}  // namespace
}  // namespace hase::probe
