// hase's objective setting (sched/objective.h) end to end, and the JCT / slowdown figures of
// the simulate report (sim/report.h) on schedules small enough to compute by hand.
#include "hase/sched/objective.h"

#include <gtest/gtest.h>

#include "hase/sched/registry.h"
#include "hase/sim/analytic_truth.h"
#include "hase/sim/lower_bound.h"
#include "hase/sim/report.h"
#include "hase/sim/simulator.h"

namespace hase::sim {
namespace {

using sched::Cluster;
using sched::ContentionModel;
using sched::Objective;
using sched::QueueOrder;
using sched::TableOracle;
using sched::Task;

Cluster OneGpu() {
  Cluster c;
  c.name = "one";
  c.types = {{"fast", 16384, 20, 1000}};
  c.gpus.push_back({0, "f", 0, 0, 16384, 1});
  return c;
}

Task T(int id, int64_t batches) {
  Task t;
  t.id = id;
  t.name = "t" + std::to_string(id);
  t.model = "m";
  t.family = sched::ModelFamily("m");
  t.num_batches = batches;
  return t;
}

// Four tasks of 40, 10, 30 and 20 ms (1 ms per batch) arrive at 0 on one GPU that runs one at
// a time; the makespan is 100 ms whatever the order, the order alone sets the JCTs.
struct Outcome {
  PolicyReport report;
  std::vector<double> ends_ms;  // by task id
};

Outcome RunHase(Objective objective, double long_task_s = 20) {
  const Cluster c = OneGpu();
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("m", "fast", 1.0, 1.0, 100);
  const std::vector<Task> tasks = {T(0, 40), T(1, 10), T(2, 30), T(3, 20)};
  sched::PolicyConfig pc;
  pc.oracle = o;
  pc.cluster = &c;
  pc.hase.objective = objective;
  pc.hase.long_task_s = long_task_s;
  auto p = sched::MakePolicy("hase", pc);
  EXPECT_TRUE(p.ok());
  const AnalyticTruth truth(o, {1, 0.0, 0.0});
  auto r = Simulate(c, tasks, **p, truth, {});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<double> memory(tasks.size(), 100);
  auto lb = MakespanLowerBound(c, tasks, memory, truth);
  EXPECT_TRUE(lb.ok());
  const std::vector<double> fastest = FastestIsolatedMs(c, tasks, memory, truth);
  EXPECT_EQ(fastest, (std::vector<double>{40, 10, 30, 20}));
  Outcome out;
  out.report = Summarise(c, tasks, *r, *lb, 0, fastest);
  for (const TaskOutcome& t : r->tasks) out.ends_ms.push_back(t.end_ms);
  return out;
}

// Shortest first: ends 10, 30, 60, 100 → JCT (s) mean 0.05, p50 (2nd of 4) 0.03, p95 and p99
// (4th) 0.1; slowdown 1, 1.5, 2, 2.5 → mean 1.75, p50 1.5, p95 2.5.
TEST(ObjectiveTest, JctRunsShortestFirst) {
  const Outcome o = RunHase(Objective::kJct);
  EXPECT_EQ(o.ends_ms, (std::vector<double>{100, 10, 60, 30}));
  EXPECT_DOUBLE_EQ(o.report.makespan_s, 0.1);
  EXPECT_DOUBLE_EQ(o.report.jct_mean_s, 0.05);
  EXPECT_DOUBLE_EQ(o.report.jct_p50_s, 0.03);
  EXPECT_DOUBLE_EQ(o.report.jct_p95_s, 0.1);
  EXPECT_DOUBLE_EQ(o.report.jct_p99_s, 0.1);
  EXPECT_DOUBLE_EQ(o.report.slowdown_mean, 1.75);
  EXPECT_DOUBLE_EQ(o.report.slowdown_p50, 1.5);
  EXPECT_DOUBLE_EQ(o.report.slowdown_p95, 2.5);
}

// Longest first: ends 40, 70, 90, 100 → JCT mean 0.075 s, p50 0.07 s; slowdown 1, 7/3, 4.5,
// 10 → mean 4.4583…, p95 10.
TEST(ObjectiveTest, MakespanRunsLongestFirst) {
  const Outcome o = RunHase(Objective::kMakespan);
  EXPECT_EQ(o.ends_ms, (std::vector<double>{40, 100, 70, 90}));
  EXPECT_DOUBLE_EQ(o.report.jct_mean_s, 0.075);
  EXPECT_DOUBLE_EQ(o.report.jct_p50_s, 0.07);
  EXPECT_NEAR(o.report.slowdown_mean, (1 + 70.0 / 30 + 4.5 + 10) / 4, 1e-12);
  EXPECT_DOUBLE_EQ(o.report.slowdown_p95, 10);
}

// Balanced with "long" from 25 ms: 40 and 30 longest first, then 10 and 20 shortest first:
// ends 40, 70, 80, 100 → JCT mean 0.0725 s.
TEST(ObjectiveTest, BalancedRunsLongTasksFirstThenShortest) {
  const Outcome o = RunHase(Objective::kBalanced, 0.025);
  EXPECT_EQ(o.ends_ms, (std::vector<double>{40, 80, 70, 100}));
  EXPECT_DOUBLE_EQ(o.report.jct_mean_s, 0.0725);
}

TEST(ObjectiveTest, ParseNamesTheFlagAndTheChoices) {
  EXPECT_EQ(*sched::ParseObjective("jct", "--objective"), Objective::kJct);
  EXPECT_EQ(*sched::ParseObjective("makespan", "--objective"), Objective::kMakespan);
  EXPECT_EQ(*sched::ParseObjective("balanced", "--objective"), Objective::kBalanced);
  const auto bad = sched::ParseObjective("fast", "--objective");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  const std::string msg = bad.status().ToString();
  EXPECT_NE(msg.find("--objective"), std::string::npos) << msg;
  EXPECT_NE(msg.find("makespan, jct or balanced"), std::string::npos) << msg;
  EXPECT_EQ(sched::ObjectiveName(Objective::kBalanced), "balanced");
}

// Aging: a task 1 000 ms later overtakes under SPT only when shorter by more than aging × 1 000.
TEST(ObjectiveTest, QueueKeysAgeAndSplit) {
  QueueOrder spt{QueueOrder::Kind::kShortestFirst, 0.02, 0};
  EXPECT_GT(sched::QueueKeyOf(spt, 100, 0), sched::QueueKeyOf(spt, 85, 1000));  // 15 < 20
  EXPECT_LT(sched::QueueKeyOf(spt, 100, 0), sched::QueueKeyOf(spt, 75, 1000));  // 25 > 20
  QueueOrder split{QueueOrder::Kind::kSplit, 0.02, 500};
  EXPECT_GT(sched::QueueKeyOf(split, 500, 1e9), sched::QueueKeyOf(split, 1, 0));  // long first
  EXPECT_GT(sched::QueueKeyOf(split, 900, 0), sched::QueueKeyOf(split, 600, 0));
  EXPECT_GT(sched::QueueKeyOf(split, 10, 0), sched::QueueKeyOf(split, 400, 0));
  EXPECT_EQ(sched::QueueKeyOf(QueueOrder{}, 10, 5), 0);
}

}  // namespace
}  // namespace hase::sim
