#include "hase/sched/timeline.h"

#include <cmath>

#include <gtest/gtest.h>

#include "hase/sched/backfill.h"

namespace hase::sched {
namespace {

GpuState TwoSaturatingTasks() {
  GpuState g;
  g.memory_mib = 1000;
  g.max_tasks = 2;
  g.running.push_back({1, 100, 1.0, 0, 10, 0, 0});
  g.running.push_back({2, 100, 1.0, 0, 20, 0, 0});
  return g;
}

// kappa = 1, demands 1: two tasks share the GPU evenly. Task 1 (10 ms of work) ends at 20;
// task 2 then has 10 ms left alone and ends at 30.
TEST(TimelineTest, ProcessorSharingByHand) {
  const ContentionModel model{1.0};
  const Timeline tl = PredictTimeline(TwoSaturatingTasks(), model, 0);
  ASSERT_EQ(tl.entries.size(), 2u);
  EXPECT_DOUBLE_EQ(tl.entries[0].end_ms, 20);
  EXPECT_DOUBLE_EQ(tl.entries[1].end_ms, 30);
  EXPECT_DOUBLE_EQ(tl.finish_ms, 30);
}

// A third task (10 ms alone) must wait for a slot (max_tasks 2): it starts at 20 beside task 2
// (10 ms left); both run at half speed and end at 40.
TEST(TimelineTest, ExtraTaskWaitsForSlot) {
  const ContentionModel model{1.0};
  ExtraTask x{3, 100, 1.0, 10, 0};
  const Timeline tl = PredictTimeline(TwoSaturatingTasks(), model, 0, x);
  ASSERT_TRUE(tl.extra);
  EXPECT_DOUBLE_EQ(tl.extra->start_ms, 20);
  EXPECT_DOUBLE_EQ(tl.extra->end_ms, 40);
  EXPECT_DOUBLE_EQ(tl.entries[1].end_ms, 40);
  EXPECT_DOUBLE_EQ(EarliestFitMs(TwoSaturatingTasks(), model, 0, 100), 20);
}

// Light tasks barely interfere: demand 0.2 each, kappa 1 → slowdown 1 + 0.2·0.2/0.8 = 1.05.
TEST(TimelineTest, LightTasksBarelyInterfere) {
  const ContentionModel model{1.0};
  GpuState g;
  g.memory_mib = 1000;
  g.max_tasks = 4;
  g.running.push_back({1, 100, 0.2, 0, 12, 0, 0});
  g.running.push_back({2, 100, 0.2, 0, 12, 0, 0});
  const Timeline tl = PredictTimeline(g, model, 0);
  EXPECT_DOUBLE_EQ(tl.finish_ms, 12.6);
}

TEST(TimelineTest, NeverFittingTaskIsInfiniteNotAHang) {
  const ContentionModel model{1.0};
  ExtraTask x{3, 5000, 1.0, 10, 0};
  const Timeline tl = PredictTimeline(TwoSaturatingTasks(), model, 0, x);
  EXPECT_TRUE(std::isinf(tl.extra->start_ms));
}

// Regression: at a large time base (1e9 ms, ~11.6 days of daemon uptime in ms) t + dt rounds
// to t for dt below ~1e-7 ms. The old loop subtracted work by (t + dt) − t and could spin
// forever; every step must now retire or start a task. Terminating is the assertion (no timer:
// a hang fails the test run), plus hand-checked ends relative to the start.
TEST(TimelineTest, LargeTimeBaseTerminates) {
  const ContentionModel model{1.0};
  const double t0 = 1e9;
  GpuState g;
  g.memory_mib = 1000;
  g.max_tasks = 4;
  // Remaining works that differ by far less than ulp(1e9) ≈ 1.2e-7 ms, plus a normal one.
  g.running.push_back({1, 100, 1.0, t0, 10.0, t0, 0});
  g.running.push_back({2, 100, 1.0, t0, 10.0 + 1e-9, t0, 0});
  g.running.push_back({3, 100, 1.0, t0, 10.0 + 3e-9, t0, 0});
  g.running.push_back({4, 100, 1.0, t0, 20.0, t0, 0});
  g.queued.push_back({5, 100, 1.0, 1e-8});  // a tiny queued task behind them
  const Timeline tl = PredictTimeline(g, model, t0);
  ASSERT_EQ(tl.entries.size(), 5u);
  // Four saturating tasks (kappa 1) each run at 1/4 speed: the three ~10 ms tasks end at
  // t0 + 40; task 4 then has 10 ms left, the tiny task joins it (1/2 speed each), and task 4
  // ends alone at t0 + 40 + 10 (+ the tiny task's negligible work).
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(tl.entries[i].end_ms - t0, 40.0, 1e-6);
  EXPECT_NEAR(tl.entries[3].end_ms - t0, 50.0, 1e-6);
  EXPECT_NEAR(tl.entries[4].end_ms - t0, 40.0, 1e-6);
  // The same at 1e12 ms, where ulp is ~1e-4 ms, with an extra task and a not-before.
  const double t1 = 1e12;
  for (RunningTask& r : g.running) r.started_ms = r.as_of_ms = t1;
  ExtraTask x{6, 100, 0.5, 1e-6, t1 + 1e-5};
  const Timeline tl2 = PredictTimeline(g, model, t1, x);
  ASSERT_TRUE(tl2.extra);
  EXPECT_TRUE(std::isfinite(tl2.extra->end_ms));
  EXPECT_TRUE(std::isfinite(tl2.finish_ms));
  EXPECT_GE(EarliestFitMs(g, model, t1, 900), t1);
}

// Reservation at t = 20 for a 950 MiB task: a 10 ms task may backfill only if the reserved
// task can still start at 20.
TEST(BackfillTest, AllowedOnlyWhenReservationKeeps) {
  const ContentionModel model{1.0};
  GpuState g;
  g.memory_mib = 1000;
  g.max_tasks = 4;
  g.running.push_back({1, 100, 0.0, 0, 20, 0, 0});  // demand 0: no slowdown
  g.reservation = Reservation{9, 20, 950, 1.0, 10, 0};
  // 5 ms with demand 0: ends at 5 < 20 → allowed.
  EXPECT_TRUE(BackfillAllowed(g, model, 0, ExtraTask{5, 500, 0.0, 5, 0}));
  // 30 ms: holds 500 MiB past 20 → 500 + 950 > 1000 → not allowed.
  EXPECT_FALSE(BackfillAllowed(g, model, 0, ExtraTask{6, 500, 0.0, 30, 0}));
  // 30 ms but only 10 MiB: the reserved task still fits at 20 → allowed.
  EXPECT_TRUE(BackfillAllowed(g, model, 0, ExtraTask{7, 0, 0.0, 30, 0}));
  // 10 ms, demand 1 slows task 1 (demand 0 but slowed by the newcomer): 1 → ends later than
  // 20 → not allowed.
  EXPECT_FALSE(BackfillAllowed(g, model, 0, ExtraTask{8, 500, 1.0, 10, 0}));
}

}  // namespace
}  // namespace hase::sched
