#include "stress_level.h"

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

TEST(StressLevel, ParsesIdleAndPairs) {
  auto idle = ParseStressLevel("idle");
  ASSERT_TRUE(idle.ok());
  EXPECT_TRUE(idle->idle());
  EXPECT_EQ(idle->Name(), "idle");

  auto l = ParseStressLevel(" sm=0.5, occ=0.25 ,dram=0.3,tensor=1,period_ms=10");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_DOUBLE_EQ(l->sm, 0.5);
  EXPECT_DOUBLE_EQ(l->occupancy, 0.25);
  EXPECT_DOUBLE_EQ(l->dram, 0.3);
  EXPECT_DOUBLE_EQ(l->tensor, 1.0);
  EXPECT_DOUBLE_EQ(l->period_ms, 10.0);
  EXPECT_EQ(l->Name(), "sm=0.5,occ=0.25,dram=0.3,tensor=1,period_ms=10");
}

TEST(StressLevel, NameRoundTrips) {
  for (const char* text : {"idle", "sm=0.5", "dram=0.6", "tensor=0.6", "sm=1,occ=1,dram=0.25"}) {
    auto l = ParseStressLevel(text);
    ASSERT_TRUE(l.ok()) << text;
    EXPECT_EQ(l->Name(), text);
    auto again = ParseStressLevel(l->Name());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *l);
  }
  // All-zero pressures are idle whatever the other keys say.
  EXPECT_EQ(ParseStressLevel("sm=0,dram=0")->Name(), "idle");
}

TEST(StressLevel, RejectsBadInput) {
  EXPECT_TRUE(ParseStressLevel("").status().IsInvalidArgument());
  EXPECT_TRUE(ParseStressLevel("sm").status().IsInvalidArgument());
  EXPECT_TRUE(ParseStressLevel("sm=abc").status().IsInvalidArgument());
  EXPECT_TRUE(ParseStressLevel("sm=1.5").status().IsInvalidArgument());
  EXPECT_TRUE(ParseStressLevel("dram=-0.1").status().IsInvalidArgument());
  EXPECT_TRUE(ParseStressLevel("occ=0").status().IsInvalidArgument());
  EXPECT_TRUE(ParseStressLevel("period_ms=0").status().IsInvalidArgument());
  auto unknown = ParseStressLevel("smx=0.5");
  EXPECT_TRUE(unknown.status().IsInvalidArgument());
  EXPECT_NE(unknown.status().message().find("smx"), std::string::npos);
}

TEST(StressLevel, Schedule) {
  auto s = ParseStressSchedule("idle;sm=0.5;dram=0.6;tensor=0.6");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 4u);
  EXPECT_TRUE((*s)[0].idle());
  EXPECT_DOUBLE_EQ((*s)[1].sm, 0.5);
  EXPECT_DOUBLE_EQ((*s)[3].tensor, 0.6);
  auto bad = ParseStressSchedule("idle;sm=2");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().where().find("load level 2"), std::string::npos);
}

TEST(StressLevel, PersistentGridOnH100) {
  // H100 SXM: 132 SMs, 2048 resident threads per SM, 1024 threads per block.
  StressLevel l;
  l.sm = 0.5;
  l.occupancy = 0.25;
  auto g = PersistentGridFor(l, 132, 2048, 1024);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->blocks, 66);
  EXPECT_EQ(g->threads_per_block, 512);
  EXPECT_DOUBLE_EQ(g->achieved_sm, 0.5);
  EXPECT_DOUBLE_EQ(g->achieved_occupancy, 0.25);
  // Full occupancy needs 2048 threads but a block holds 1024: achieved 0.5.
  l.sm = 1;
  l.occupancy = 1;
  g = PersistentGridFor(l, 132, 2048, 1024);
  EXPECT_EQ(g->blocks, 132);
  EXPECT_EQ(g->threads_per_block, 1024);
  EXPECT_DOUBLE_EQ(g->achieved_occupancy, 0.5);
  // Tiny occupancy still gets one warp; T4 has 40 SMs, 1024 threads per SM.
  l.sm = 0.1;
  l.occupancy = 0.001;
  g = PersistentGridFor(l, 40, 1024, 1024);
  EXPECT_EQ(g->blocks, 4);
  EXPECT_EQ(g->threads_per_block, 32);
  l.sm = 0;
  EXPECT_EQ(PersistentGridFor(l, 40, 1024, 1024)->blocks, 0);
  EXPECT_TRUE(PersistentGridFor(l, 0, 1024, 1024).status().IsInvalidArgument());
}

TEST(StressLevel, BusyMs) { EXPECT_DOUBLE_EQ(BusyMs(0.3, 20), 6.0); }

}  // namespace
}  // namespace hase::probe
