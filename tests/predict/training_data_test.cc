#include "hase/predict/training_data.h"

#include <map>

#include <gtest/gtest.h>

namespace hase::predict {
namespace {

KernelSample Gemm(const std::string& op, double flops, double latency_ms) {
  KernelSample s;
  s.source = "neusight";
  s.gpu = "A";
  s.family = KernelFamily::kGemm;
  s.op = op;
  s.flops = flops;
  s.latency_ms = latency_ms;
  return s;
}

KernelSample On(const std::string& gpu, KernelSample s) {
  s.gpu = gpu;
  return s;
}

// Five GPUs, 10 rows per (op, GPU) at 2e10 FLOP (one bin: floor(4 log10 2e10) = 41).
// linear / bmm FLOP/s: A, B, C 1.0; D 0.5; E 0.8. For D the other GPUs' median is 1.0 and
// 0.5 < 0.75 · 1.0: D's 10 linear rows are flagged. For E: others {0.5, 1, 1, 1}, median (lower)
// 1.0, and 0.8 >= 0.75: kept. bmm / linear is >= 1 on every GPU but A–C: nothing else flagged.
TEST(FlagSlowOpTest, FlagsAnOpThatIsRelativelySlowOnOneGpu) {
  std::vector<KernelSample> rows;
  const std::map<std::string, double> linear_ms = {{"A", 1.0}, {"B", 1.0}, {"C", 1.0},
                                                   {"D", 2.0}, {"E", 1.25}};
  for (const auto& [gpu, ms] : linear_ms) {
    for (int i = 0; i < 10; ++i) {
      rows.push_back(On(gpu, Gemm("bmm", 2e10, 1.0)));
      rows.push_back(On(gpu, Gemm("linear", 2e10, ms)));
    }
  }
  const size_t n_main = rows.size();
  KernelSample loaded = On("D", Gemm("linear", 2e10, 2.0));
  loaded.load.sm_active = 0.6;  // measured under load: not compared, not flagged
  rows.push_back(loaded);
  KernelSample copy = On("D", Gemm("linear", 2e10, 2.0));
  copy.includes_transfer = true;  // includes host copies: not compared, not flagged
  rows.push_back(copy);
  rows.push_back(On("D", Gemm("linear", 2e8, 2.0)));  // below 1e9 FLOP: never flagged
  for (int i = 0; i < 9; ++i) {  // F: 9 slow linear rows, fewer than 10: no median, kept
    rows.push_back(On("F", Gemm("bmm", 2e10, 1.0)));
    rows.push_back(On("F", Gemm("linear", 2e10, 4.0)));
  }

  EXPECT_EQ(FlagSlowOp(rows), 10u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool expect = i < n_main && rows[i].gpu == "D" && rows[i].op == "linear";
    EXPECT_EQ(rows[i].HasFlag("suspect_slow_op"), expect) << i << " " << rows[i].gpu;
    EXPECT_EQ(rows[i].Suspect(), expect) << i;
  }
  EXPECT_EQ(FlagSlowOp(rows), 0u);  // flagged rows are not counted twice
}

// Above the highest bin where an op can be compared (no other op that large), the verdict of
// that bin carries over: D's linear rows at 2e11 FLOP (bin 45, no bmm there) are flagged
// because D's linear was flagged at 2e10; A's are not.
TEST(FlagSlowOpTest, VerdictOfTheHighestComparableBinCarriesUpward) {
  std::vector<KernelSample> rows;
  const std::map<std::string, double> linear_ms = {{"A", 1.0}, {"B", 1.0}, {"C", 1.0}, {"D", 2.0}};
  for (const auto& [gpu, ms] : linear_ms) {
    for (int i = 0; i < 10; ++i) {
      rows.push_back(On(gpu, Gemm("bmm", 2e10, 1.0)));
      rows.push_back(On(gpu, Gemm("linear", 2e10, ms)));
    }
    rows.push_back(On(gpu, Gemm("linear", 2e11, 10.0 * ms)));
  }
  EXPECT_EQ(FlagSlowOp(rows), 11u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.HasFlag("suspect_slow_op"), r.gpu == "D" && r.op == "linear") << r.gpu << r.flops;
  }
}

TEST(FlagSlowOpTest, ThroughputComparableExcludesCopiesAndLoad) {
  KernelSample s = Gemm("linear", 1e10, 1.0);
  EXPECT_TRUE(ThroughputComparable(s));
  s.load.sm_active = 0.0;  // recorded idle
  EXPECT_TRUE(ThroughputComparable(s));
  s.load.dram_active = 0.3;
  EXPECT_FALSE(ThroughputComparable(s));
  KernelSample t = Gemm("linear", 1e10, 1.0);
  t.includes_transfer = true;
  EXPECT_FALSE(ThroughputComparable(t));
}

}  // namespace
}  // namespace hase::predict
