#include "hase/hw/l2_residency.h"

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"

namespace hase {
namespace {

TEST(L2Residency, HitFraction) {
  // L4: 48 MiB L2 (Ada whitepaper), half usable = 24 MiB.
  EXPECT_DOUBLE_EQ(L2HitFraction(48, 12 * 1048576.0), 1.0);
  EXPECT_DOUBLE_EQ(L2HitFraction(48, 48 * 1048576.0), 0.5);
  EXPECT_DOUBLE_EQ(L2HitFraction(48, 0), 1.0);
  EXPECT_DOUBLE_EQ(L2HitFraction(0, 1e6), 0.0);
}

TEST(L2Residency, MemoryTimeOnL4) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  const GpuSpec& l4 = **cat->Find("L4");
  const MicrobenchmarkProfile p = DerivedProfile(l4);  // DRAM 255 GB/s, L2 900 GB/s
  ASSERT_DOUBLE_EQ(p.dram_bandwidth_gbps, 0.85 * 300);
  ASSERT_DOUBLE_EQ(p.l2_bandwidth_gbps, 3.0 * 300);
  // 16 MiB of activations fit (24 MiB usable): all at L2 bandwidth.
  const double act = 16 * 1048576.0;
  EXPECT_NEAR(MemoryTimeMs(p, l4.l2_mib, act, 0, 1.0), act / 900e6, 1e-12);
  // Weights always come from DRAM.
  EXPECT_NEAR(MemoryTimeMs(p, l4.l2_mib, 0, act, 1.0), act / 255e6, 1e-12);
  // 96 MiB of activations: a quarter hits.
  const double big = 96 * 1048576.0;
  EXPECT_NEAR(MemoryTimeMs(p, l4.l2_mib, big, 0, 1.0), big * (0.25 / 900e6 + 0.75 / 255e6),
              1e-12);
  // Efficiency scales both bandwidths; no L2 figure = DRAM only.
  EXPECT_NEAR(MemoryTimeMs(p, l4.l2_mib, act, 0, 0.5), 2 * act / 900e6, 1e-12);
  MicrobenchmarkProfile no_l2 = p;
  no_l2.l2_bandwidth_gbps = 0;
  EXPECT_NEAR(MemoryTimeMs(no_l2, l4.l2_mib, act, 0, 1.0), act / 255e6, 1e-12);
  EXPECT_DOUBLE_EQ(MemoryTimeMs(p, l4.l2_mib, 0, 0, 1.0), 0.0);
  no_l2.dram_bandwidth_gbps = 0;
  EXPECT_DOUBLE_EQ(MemoryTimeMs(no_l2, l4.l2_mib, act, 0, 1.0), 0.0);
}

}  // namespace
}  // namespace hase
