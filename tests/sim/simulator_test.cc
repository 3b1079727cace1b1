#include "hase/sim/simulator.h"

#include <gtest/gtest.h>

#include <random>

#include "hase/sched/registry.h"
#include "hase/sim/analytic_truth.h"
#include "hase/sim/experiment.h"
#include "hase/sim/lower_bound.h"
#include "hase/sim/report.h"

namespace hase::sim {
namespace {

using sched::Cluster;
using sched::ContentionModel;
using sched::Task;
using sched::TableOracle;

Cluster TwoTypes(int fast, int slow, int max_tasks, double slow_mem = 16384) {
  Cluster c;
  c.name = "test";
  c.types = {{"fast", 16384, 20, 1000}, {"slow", slow_mem, 10, 500}};
  int id = 0;
  for (int i = 0; i < fast; ++i) c.gpus.push_back({id++, "f", i, 0, 16384, max_tasks});
  for (int i = 0; i < slow; ++i) c.gpus.push_back({id++, "s", i, 1, slow_mem, max_tasks});
  return c;
}

Task T(int id, const std::string& model, int64_t batches, double arrival_ms = 0,
       double memory = 0) {
  Task t;
  t.id = id;
  t.name = "t" + std::to_string(id);
  t.model = model;
  t.family = sched::ModelFamily(model);
  t.num_batches = batches;
  t.arrival_ms = arrival_ms;
  t.memory_mib = memory;
  return t;
}

AnalyticTruth Perfect(std::shared_ptr<const sched::LatencyOracle> o) {
  return AnalyticTruth(std::move(o), {1, 0.0, 0.0});
}

Result<SimResult> RunPolicy(const std::string& policy, const Cluster& c, const std::vector<Task>& tasks,
                      std::shared_ptr<const sched::LatencyOracle> o, int max_res = 1) {
  sched::PolicyConfig pc;
  pc.oracle = o;
  pc.cluster = &c;
  // The hand-solved instances here are about makespan: hase's makespan objective (longest
  // first). The objectives' orders are tested in objective_test.cc.
  pc.hase.objective = sched::Objective::kMakespan;
  pc.max_reservations = max_res;
  auto p = sched::MakePolicy(policy, pc);
  if (!p.ok()) return p.status();
  const AnalyticTruth truth = Perfect(o);
  return Simulate(c, tasks, **p, truth, {});
}

// 1 fast + 1 slow GPU, one task at a time. Three equal tasks: 3 ms on fast, 6 ms on slow.
// Optimal: two on fast (0–3, 3–6), one on slow (0–6): makespan 6. rr puts 2 on fast and 1 on
// slow too; hase must find 6 although the greedy choice for the 2nd task is a tie.
TEST(SimulatorTest, HandSolvableThreeTasksOptimalSix) {
  const Cluster c = TwoTypes(1, 1, 1);
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("m", "fast", 1.0, 1.0, 100);
  o->Set("m", "slow", 2.0, 1.0, 100);
  const std::vector<Task> tasks = {T(0, "m", 3), T(1, "m", 3), T(2, "m", 3)};
  auto r = RunPolicy("hase", c, tasks, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->makespan_ms, 6.0);
  const AnalyticTruth truth = Perfect(o);
  auto lb = MakespanLowerBound(c, tasks, {100, 100, 100}, truth);
  ASSERT_TRUE(lb.ok());
  // LP: 9 ms of fast-work; slow is half as fast → C ≥ 9 / 1.5 = 6 — tight here.
  EXPECT_NEAR(lb->value_ms(), 6.0, 1e-9);
}

// The LP's graceful fallback (too many groups): the aggregate bound. Same 3 tasks: 9 ms of
// fast-work (the cheapest type for each) over 2 GPUs of capacity 1 → 4.5 (weaker than 6).
TEST(SimulatorTest, LowerBoundDegradesToAggregateWhenLpTooLarge) {
  const Cluster c = TwoTypes(1, 1, 1);
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("m", "fast", 1.0, 1.0, 100);
  o->Set("m", "slow", 2.0, 1.0, 100);
  const std::vector<Task> tasks = {T(0, "m", 3), T(1, "m", 3), T(2, "m", 3)};
  const AnalyticTruth truth = Perfect(o);
  auto lp = MakespanLowerBound(c, tasks, {100, 100, 100}, truth);
  auto agg = MakespanLowerBound(c, tasks, {100, 100, 100}, truth, /*max_lp_groups=*/0);
  ASSERT_TRUE(lp.ok() && agg.ok());
  EXPECT_TRUE(lp->lp_solved);
  EXPECT_FALSE(agg->lp_solved);
  EXPECT_EQ(agg->lp_groups, 1);
  EXPECT_NEAR(agg->lp_ms, 4.5, 1e-9);
  EXPECT_LE(agg->value_ms(), lp->value_ms());
}

// 1 fast + 2 slow; tasks A (4/12), B (4/12), C (2/4), D (2/4). Optimal 8: A, B on fast
// (0–8), C and D on the slow GPUs (0–4). rr: A→fast, B→slow (12) → 12. hase: 8.
TEST(SimulatorTest, HandSolvableHaseBeatsRoundRobin) {
  const Cluster c = TwoTypes(1, 2, 1);
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("big", "fast", 4.0, 1.0, 100);
  o->Set("big", "slow", 12.0, 1.0, 100);
  o->Set("small", "fast", 2.0, 1.0, 100);
  o->Set("small", "slow", 4.0, 1.0, 100);
  const std::vector<Task> tasks = {T(0, "big", 1), T(1, "big", 1), T(2, "small", 1),
                                   T(3, "small", 1)};
  auto hase = RunPolicy("hase", c, tasks, o);
  auto rr = RunPolicy("rr", c, tasks, o);
  ASSERT_TRUE(hase.ok() && rr.ok());
  EXPECT_DOUBLE_EQ(hase->makespan_ms, 8.0);
  EXPECT_DOUBLE_EQ(rr->makespan_ms, 12.0);
}

// Co-location by hand: one GPU, 2 slots, kappa 1. Two tasks of 10 ms with demand 0.5 each run
// together at slowdown 1.5 and both end at 15 (serially they would end at 20).
TEST(SimulatorTest, CoLocationFollowsContentionModel) {
  Cluster c = TwoTypes(1, 0, 2);
  c.types.resize(1);
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("m", "fast", 10.0, 0.5, 100);
  auto r = RunPolicy("hase", c, {T(0, "m", 1), T(1, "m", 1)}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->makespan_ms, 15.0);
  EXPECT_DOUBLE_EQ(r->tasks[1].start_ms, 0.0);
}

// A large task (needs the whole 16 GiB GPU) arrives at t = 5 ms while small 1 GiB tasks (10 ms
// each, 4 slots) keep arriving every 2 ms until t = 400. Without a reservation it would wait
// for the stream to end; with EASY it starts once the tasks running at t = 5 end: by 5 + 10
// plus the slowdown they suffer — at most 4 co-runners of demand 0.1 (kappa 1): ×1.3 → 18 ms.
TEST(SimulatorTest, LargeTaskIsNotStarved) {
  Cluster c = TwoTypes(1, 0, 4);
  c.types.resize(1);
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("small", "fast", 10.0, 0.1, 1024);
  o->Set("large", "fast", 50.0, 1.0, 16384);
  std::vector<Task> tasks;
  for (int i = 0; i <= 200; ++i) {
    tasks.push_back(T(0, "small", 1, 2.0 * i));
    if (i == 2) tasks.push_back(T(0, "large", 1, 5.0));
  }
  int large = -1;
  for (size_t i = 0; i < tasks.size(); ++i) {
    tasks[i].id = static_cast<int>(i);
    tasks[i].name = "t" + std::to_string(i);
    if (tasks[i].model == "large") large = static_cast<int>(i);
  }
  auto r = RunPolicy("hase", c, tasks, o);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r->tasks[large].start_ms, 5.0 + 18.0);
  EXPECT_GE(r->tasks[large].start_ms, 5.0);
  EXPECT_GE(r->reservations.size(), 1u);
  for (const TaskOutcome& t : r->tasks) EXPECT_FALSE(t.rejected);
}

// Property: with a perfect oracle, a reserved task never starts later than the start it was
// promised, whatever backfilled before it. Random clusters and workloads, 60 seeds.
TEST(SimulatorTest, BackfillingNeverDelaysAReservation) {
  int reservations = 0, backfills = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    auto u = [&](double lo, double hi) {
      return lo + (hi - lo) * (static_cast<double>(rng() >> 11) / 9007199254740992.0);
    };
    const int max_tasks = 1 + static_cast<int>(rng() % 3);
    const Cluster c = TwoTypes(1 + rng() % 2, 1 + rng() % 3, max_tasks);
    auto o = std::make_shared<TableOracle>(ContentionModel{u(0.5, 1.5)});
    const char* models[] = {"a", "b", "c", "big"};
    for (const char* m : models) {
      const bool big = std::string(m) == "big";
      const double fast = u(1, 10);
      o->Set(m, "fast", fast, u(0.1, 1.0), big ? 16000 : u(500, 6000));
      o->Set(m, "slow", fast * u(1.2, 3), u(0.1, 1.0), big ? 16000 : u(500, 6000));
    }
    std::vector<Task> tasks;
    double t = 0;
    for (int i = 0; i < 60; ++i) {
      t += u(0, 4);
      tasks.push_back(T(i, models[rng() % 4], 1 + rng() % 20, t));
    }
    for (int max_res : {1, 3}) {
      auto r = RunPolicy("hase", c, tasks, o, max_res);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (const ReservationRecord& rec : r->reservations) {
        ++reservations;
        ASSERT_GE(rec.actual_start_ms, 0) << "seed " << seed;
        EXPECT_LE(rec.actual_start_ms, rec.promised_start_ms + 1e-6)
            << "seed " << seed << " task " << rec.task_id;
      }
      backfills += r->backfills;
      for (const TaskOutcome& o2 : r->tasks) EXPECT_FALSE(o2.rejected) << "seed " << seed;
    }
  }
  EXPECT_GT(reservations, 20);  // the property was exercised
  EXPECT_GT(backfills, 20);
}

// A task larger than every GPU is rejected with a reason; the others still run (no hang).
TEST(SimulatorTest, OversizedTaskRejectedNotHung) {
  const Cluster c = TwoTypes(1, 1, 2);
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("m", "fast", 1.0, 1.0, 100);
  o->Set("m", "slow", 2.0, 1.0, 100);
  for (const std::string& policy : sched::PolicyNames()) {
    auto r = RunPolicy(policy, c, {T(0, "m", 2), T(1, "m", 2, 0, 50000), T(2, "m", 2)}, o);
    ASSERT_TRUE(r.ok()) << policy;
    EXPECT_TRUE(r->tasks[1].rejected) << policy;
    EXPECT_NE(r->tasks[1].reason.find("memory need exceeds"), std::string::npos) << policy;
    EXPECT_FALSE(r->tasks[0].rejected);
    EXPECT_FALSE(r->tasks[2].rejected);
  }
}

// Same seed → byte-identical report; another seed changes the analytic truth.
TEST(SimulatorTest, SameSeedByteIdenticalReport) {
  const Cluster c = TwoTypes(2, 3, 3);
  auto o = std::make_shared<TableOracle>(ContentionModel{1.28});
  o->Set("resnet50", "fast", 3.0, 0.8, 2000);
  o->Set("resnet50", "slow", 7.0, 0.9, 2000);
  o->Set("vgg16", "fast", 9.0, 1.0, 6000);
  o->Set("vgg16", "slow", 20.0, 1.0, 6000);
  o->Set("mobilenet_v2", "fast", 1.0, 0.2, 800);
  o->Set("mobilenet_v2", "slow", 1.5, 0.3, 800);
  std::vector<Task> tasks;
  const char* m[] = {"resnet50", "vgg16", "mobilenet_v2"};
  for (int i = 0; i < 80; ++i) tasks.push_back(T(i, m[i % 3], 5 + (i * 7) % 30, i * 3.0));
  auto catalog = GpuCatalog::Builtin();
  ASSERT_TRUE(catalog.ok());
  ExperimentOptions eo;
  eo.seed = 7;
  auto a = RunExperiment(c, tasks, o, *catalog, eo);
  auto b = RunExperiment(c, tasks, o, *catalog, eo);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ReportJson(a->report, false), ReportJson(b->report, false));
  EXPECT_EQ(ReportCsv(a->report, false), ReportCsv(b->report, false));
  for (size_t i = 0; i < a->runs.size(); ++i) {
    EXPECT_EQ(TasksCsv(c, tasks, a->runs[i]), TasksCsv(c, tasks, b->runs[i]));
    EXPECT_EQ(GanttSvg(c, tasks, a->runs[i]), GanttSvg(c, tasks, b->runs[i]));
  }
  eo.seed = 8;
  auto d = RunExperiment(c, tasks, o, *catalog, eo);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(ReportJson(a->report, false), ReportJson(d->report, false));
}

TEST(Report, GanttTimeAxisHasRoundTicks) {
  Cluster c;
  SimResult r;
  r.policy = "hase";
  r.makespan_ms = 337'000;  // 337 s: ticks every 50 s (≤ 10 intervals), makespan at the end
  const std::string svg = GanttSvg(c, {}, r);
  for (const char* t : {">0 s<", ">50 s<", ">150 s<", ">300 s<", ">337.0 s<"}) {
    EXPECT_NE(svg.find(t), std::string::npos) << t;
  }
  EXPECT_EQ(svg.find(">350 s<"), std::string::npos);
  r.makespan_ms = 2'400;  // 2.4 s: ticks every 0.5 s
  const std::string small = GanttSvg(c, {}, r);
  EXPECT_NE(small.find(">0.5 s<"), std::string::npos);
  EXPECT_NE(small.find(">2 s<"), std::string::npos);
}

}  // namespace
}  // namespace hase::sim
