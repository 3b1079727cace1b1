#include "hase/sched/contention_model.h"

#include <gtest/gtest.h>

namespace hase::sched {
namespace {

TEST(ContentionModel, SaturatingTasksTimeSlice) {
  const ContentionModel m{1.0};
  EXPECT_DOUBLE_EQ(m.Slowdown(1.0, 1.0), 2.0);  // two saturating tasks: each at half speed
  EXPECT_DOUBLE_EQ(m.Slowdown(1.0, 2.0), 3.0);  // three
  EXPECT_DOUBLE_EQ(ContentionModel{}.Slowdown(1.0, 1.0), 1.0 + kKappaGavel);
}

TEST(ContentionModel, LightTasksBarelySlowEachOther) {
  const ContentionModel m{1.0};
  // s = 1 + u·U / (1 − U): two host-bound tasks at demand 0.2 → 1 + 0.2·0.2/0.8 = 1.05.
  EXPECT_DOUBLE_EQ(m.Slowdown(0.2, 0.2), 1.05);
  EXPECT_DOUBLE_EQ(m.Slowdown(0.2, 0.4), 1.0 + 0.2 * 0.4 / 0.6);
  EXPECT_DOUBLE_EQ(m.Slowdown(0.5, 0.0), 1.0);  // alone
  // Continuous where the GPU saturates (u + U = 1): 1 + U.
  EXPECT_NEAR(m.Slowdown(0.3, 0.7), 1.7, 1e-12);
  EXPECT_NEAR(m.Slowdown(0.3 + 1e-9, 0.7), 1.7, 1e-6);
}

TEST(ContentionModel, MonotoneInBothDemands) {
  const ContentionModel m{};
  double prev = 1.0;
  for (double others = 0; others <= 2.0; others += 0.05) {
    const double s = m.Slowdown(0.3, others);
    EXPECT_GE(s, prev - 1e-12) << others;
    prev = s;
  }
  prev = 1.0;
  for (double own = 0; own <= 1.0; own += 0.05) {
    const double s = m.Slowdown(own, 0.4);
    EXPECT_GE(s, prev - 1e-12) << own;
    prev = s;
  }
}

}  // namespace
}  // namespace hase::sched
