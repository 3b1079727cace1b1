#include "hase/predict/load_flag.h"

#include <gtest/gtest.h>

namespace hase {
namespace {

TEST(ParseLoadFlag, ParsesDcgmKeys) {
  auto s = ParseLoadFlag("sm_active=0.6,dram_active=0.4");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(*s->sm_active, 0.6);
  EXPECT_DOUBLE_EQ(*s->dram_active, 0.4);
  EXPECT_FALSE(s->sm_occupancy.has_value());  // unnamed fields stay unset
  EXPECT_DOUBLE_EQ(s->EffectiveSmOccupancy(), 0.3);

  auto t = ParseLoadFlag(" gr_engine_active = 1 , fb_used_mib=2048, sm_clock_mhz=1410 ");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_DOUBLE_EQ(t->EffectiveSmActive(), 1.0);
  EXPECT_DOUBLE_EQ(*t->fb_used_mib, 2048);

  auto idle = ParseLoadFlag("");
  ASSERT_TRUE(idle.ok());
  EXPECT_DOUBLE_EQ(*idle->sm_active, 0.0);
  EXPECT_TRUE(ParseLoadFlag("idle").ok());
}

TEST(ParseLoadFlag, RejectsMalformed) {
  for (const char* bad : {"sm_active", "sm_active=", "sm_active=abc", "sm_active=60",
                          "sm_active=-0.1", "foo=0.1", "sm_active=0.1,,dram_active=0.2",
                          "sm_active=0.1,sm_active=0.2", "fb_used_mib=-5", "sm_active=0.5x",
                          "sm_active=nan"}) {
    auto s = ParseLoadFlag(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_TRUE(s.status().IsInvalidArgument()) << bad;
    }
  }
  EXPECT_NE(ParseLoadFlag("foo=1").status().hint().find("sm_active"), std::string::npos);
}

}  // namespace
}  // namespace hase
