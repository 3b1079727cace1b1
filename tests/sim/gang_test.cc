// k-GPU tasks (Task::gpus > 1; sched/gang.h) in the simulator: placement on k GPUs of one type
// on one node, start together, reservations that small tasks cannot starve, backfilling that
// never delays them, policies that refuse, the workload file keys and the lower bound.
#include <gtest/gtest.h>

#include "hase/sched/gang.h"
#include "hase/sched/registry.h"
#include "hase/sched/workload_file.h"
#include "hase/sim/analytic_truth.h"
#include "hase/sim/lower_bound.h"
#include "hase/sim/simulator.h"

namespace hase::sim {
namespace {

using sched::Cluster;
using sched::ContentionModel;
using sched::TableOracle;
using sched::Task;

// Node "f": 4 fast GPUs (1 ms per batch of "m"); node "s": 4 slow GPUs (2 ms per batch).
// One task per GPU, so every time below is hand-computable.
Cluster FastAndSlowNodes(int fast = 4, int slow = 4) {
  Cluster c;
  c.name = "gang";
  c.types = {{"fast", 16384, 20, 1000}, {"slow", 16384, 10, 500}};
  int id = 0;
  for (int i = 0; i < fast; ++i) c.gpus.push_back({id++, "f", i, 0, 16384, 1});
  for (int i = 0; i < slow; ++i) c.gpus.push_back({id++, "s", i, 1, 16384, 1});
  return c;
}

std::shared_ptr<TableOracle> Oracle() {
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("m", "fast", 1.0, 1.0, 100);
  o->Set("m", "slow", 2.0, 1.0, 100);
  return o;
}

Task T(int id, int64_t batches, double arrival_ms, int gpus = 1) {
  Task t;
  t.id = id;
  t.name = "t" + std::to_string(id);
  t.model = "m";
  t.family = "m";
  t.num_batches = batches;
  t.arrival_ms = arrival_ms;
  t.gpus = gpus;
  return t;
}

Result<SimResult> RunGang(const std::string& policy, const Cluster& c, const std::vector<Task>& tasks,
                      std::shared_ptr<const sched::LatencyOracle> o) {
  sched::PolicyConfig pc;
  pc.oracle = o;
  pc.cluster = &c;
  pc.hase.objective = sched::Objective::kMakespan;
  auto p = sched::MakePolicy(policy, pc);
  if (!p.ok()) return p.status();
  const AnalyticTruth truth(o, {1, 0.0, 0.0});  // perfect: truth = prediction
  SimOptions so;
  so.measure_decisions = false;
  return Simulate(c, tasks, **p, truth, so);
}

TEST(GangTest, IsolatedTimeIsTheLargestShareOverEfficiency) {
  Task t = T(0, 10, 0, 4);
  EXPECT_DOUBLE_EQ(sched::GangIsolatedMs(t, 100.0), 30.0);  // ceil(10/4) = 3 of 10 batches
  t.parallel_efficiency = 0.75;
  EXPECT_DOUBLE_EQ(sched::GangIsolatedMs(t, 100.0), 40.0);
  t.gpus = 1;
  EXPECT_DOUBLE_EQ(sched::GangIsolatedMs(t, 100.0), 100.0);
}

// a (5 batches) starts on f/0 at 0 and ends at 5. G (4 GPUs, 40 batches) arrives at 1: the
// fast node frees all four at 5 and runs it in ceil(40/4) × 1 = 10 ms (end 15); the slow node
// could start it at 1 but needs 10 × 2 = 20 ms (end 21). So G waits for f/0..f/3, holding a
// reservation from 5 (central-queue policies) or queued on all four (eft), and runs 5–15.
// b (3 batches, at 2) ends at 5 on a reserved fast GPU: backfilled (hase, min-min). c (4
// batches, at 2.5) would end at 6.5 there, past G's start: it goes to a slow GPU (2.5–10.5).
TEST(GangTest, WaitsForTheFastNodeAndBackfillNeverDelaysIt) {
  const Cluster c = FastAndSlowNodes();
  const std::vector<Task> tasks = {T(0, 5, 0), T(1, 40, 1, 4), T(2, 3, 2), T(3, 4, 2.5)};
  for (const std::string policy : {"hase", "min-min", "eft", "max-min"}) {
    SCOPED_TRACE(policy);
    auto r = RunGang(policy, c, tasks, Oracle());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const TaskOutcome& g = r->tasks[1];
    ASSERT_FALSE(g.rejected) << g.reason;
    EXPECT_EQ(g.gpus, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(g.gpu, 0);
    EXPECT_DOUBLE_EQ(g.start_ms, 5.0);
    EXPECT_DOUBLE_EQ(g.end_ms, 15.0);
    EXPECT_DOUBLE_EQ(g.predicted_start_ms, 5.0);
    EXPECT_DOUBLE_EQ(r->tasks[3].end_ms, 10.5);  // slow GPU
    EXPECT_GE(c.gpus[r->tasks[3].gpu].type, 1);
    EXPECT_DOUBLE_EQ(r->makespan_ms, 15.0);
    // All four GPUs are busy exactly during G's run (plus a and b before it).
    EXPECT_DOUBLE_EQ(r->gpu_busy_ms[3], 10.0);
  }
  for (const std::string policy : {"hase", "min-min"}) {
    SCOPED_TRACE(policy);
    auto r = RunGang(policy, c, tasks, Oracle());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->tasks[1].reserved_gpu, 0);
    ASSERT_EQ(r->reservations.size(), 1u);
    EXPECT_DOUBLE_EQ(r->reservations[0].promised_start_ms, 5.0);
    EXPECT_DOUBLE_EQ(r->reservations[0].actual_start_ms, 5.0);
    EXPECT_DOUBLE_EQ(r->tasks[2].start_ms, 2.0);  // b backfilled on a reserved fast GPU
    EXPECT_DOUBLE_EQ(r->tasks[2].end_ms, 5.0);
    EXPECT_LT(r->tasks[2].gpu, 4);
  }
}

// A 4-GPU task on a node of 4 GPUs while 1-GPU tasks of 10 ms arrive every 3 ms (200 of
// them). At 5 ms (G's arrival) the tasks of 0 and 3 run until 10 and 13 and two GPUs are
// idle: G's shadow time is 13. Without a reservation the stream would keep one GPU busy until
// it ends; with it no later task may start on the node unless it ends by 13, so G starts at
// 13 and runs ceil(40/4) × 1 = 10 ms.
TEST(GangTest, StreamOfOneGpuTasksCannotStarveAFourGpuTask) {
  const Cluster c = FastAndSlowNodes(4, 0);
  std::vector<Task> tasks;
  for (int i = 0; i < 200; ++i) {
    const double at = 3.0 * i;
    if (at > 5 && tasks.size() == 2) tasks.push_back(T(2, 40, 5, 4));
    tasks.push_back(T(static_cast<int>(tasks.size()), 10, at));
  }
  ASSERT_EQ(tasks[2].gpus, 4);
  for (const std::string policy : {"hase", "min-min", "max-min", "eft", "eft-share", "fastest-gpu"}) {
    SCOPED_TRACE(policy);
    auto r = RunGang(policy, c, tasks, Oracle());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const TaskOutcome& g = r->tasks[2];
    ASSERT_FALSE(g.rejected) << g.reason;
    EXPECT_DOUBLE_EQ(g.start_ms, 13.0);
    EXPECT_DOUBLE_EQ(g.end_ms, 23.0);
    for (const TaskOutcome& o : r->tasks) {
      if (o.task_id == 2 || o.rejected) continue;
      // Nothing overlaps G's run on any GPU (it holds all four alone).
      EXPECT_TRUE(o.end_ms <= 13.0 + 1e-9 || o.start_ms >= 23.0 - 1e-9) << "t" << o.task_id;
    }
    if (policy != "eft" && policy != "eft-share") {
      ASSERT_FALSE(r->reservations.empty());
      EXPECT_EQ(r->reservations[0].task_id, 2);
      EXPECT_DOUBLE_EQ(r->reservations[0].promised_start_ms, 13.0);
    }
  }
}

TEST(GangTest, OneGpuPoliciesRejectWithOneReason) {
  const Cluster c = FastAndSlowNodes();
  const std::vector<Task> tasks = {T(0, 5, 0), T(1, 40, 1, 4)};
  for (const std::string policy : {"rr", "random", "least-loaded", "gavel-like"}) {
    SCOPED_TRACE(policy);
    auto r = RunGang(policy, c, tasks, Oracle());
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->tasks[0].rejected);
    ASSERT_TRUE(r->tasks[1].rejected);
    EXPECT_NE(r->tasks[1].reason.find("needs 4 GPUs at once, but policy '" + policy +
                                      "' places each task on one GPU"),
              std::string::npos)
        << r->tasks[1].reason;
  }
}

TEST(GangTest, MoreGpusThanAnyNodeHasIsRejectedWithTheLargestGroup) {
  const Cluster c = FastAndSlowNodes(2, 3);
  auto r = RunGang("hase", c, {T(0, 40, 0, 4)}, Oracle());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->tasks[0].rejected);
  EXPECT_NE(r->tasks[0].reason.find("needs 4 GPUs of one type on one node, but the most any node has that "
                                    "can host it is 3 (slow on node s)"),
            std::string::npos)
      << r->tasks[0].reason;
}

TEST(GangTest, FastestGpuTakesTheFastestTypeEvenWhenLater) {
  // a holds f/0 until 50; G (4 GPUs, 40 batches): fast node at 50–60, slow node at 1–21.
  const Cluster c = FastAndSlowNodes();
  const std::vector<Task> tasks = {T(0, 50, 0), T(1, 40, 1, 4)};
  auto fastest = RunGang("fastest-gpu", c, tasks, Oracle());
  auto eft = RunGang("hase", c, tasks, Oracle());
  ASSERT_TRUE(fastest.ok() && eft.ok());
  EXPECT_EQ(fastest->tasks[1].gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(fastest->tasks[1].start_ms, 50.0);
  EXPECT_EQ(eft->tasks[1].gpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(eft->tasks[1].end_ms, 21.0);
}

TEST(GangTest, LowerBoundCountsAllItsGpus) {
  const Cluster c = FastAndSlowNodes(4, 0);
  auto o = Oracle();
  const AnalyticTruth truth(o, {1, 0.0, 0.0});
  // Two 4-GPU tasks of 10 ms each on the 4-GPU node: 20 ms of the whole node.
  auto lb = MakespanLowerBound(c, {T(0, 40, 0, 4), T(1, 40, 0, 4)}, {100, 100}, truth);
  ASSERT_TRUE(lb.ok());
  EXPECT_DOUBLE_EQ(lb->longest_task_ms, 10.0);
  EXPECT_NEAR(lb->value_ms(), 20.0, 1e-9);
  auto r = RunGang("hase", c, {T(0, 40, 0, 4), T(1, 40, 0, 4)}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->makespan_ms, 20.0);
}

// Split (Task::split): f/0 runs a batch in 1 ms, s/0 in 2 ms. 30 batches alone on f/0 end at
// 30; split 20 + 10 in proportion to speed (rates 1 and 0.5) both parts end at 20.
TEST(GangTest, SplitTaskRunsItsBatchesOnBothTypesInProportionToSpeed) {
  const Cluster c = FastAndSlowNodes(1, 1);
  Task t = T(0, 30, 0);
  t.split = true;
  auto r = RunGang("hase", c, {t}, Oracle());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tasks[0].gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->tasks[0].parts, (std::vector<int64_t>{20, 10}));
  EXPECT_DOUBLE_EQ(r->tasks[0].end_ms, 20.0);
  EXPECT_DOUBLE_EQ(r->tasks[0].predicted_end_ms, 20.0);
  EXPECT_EQ(r->tasks[0].runner_up_gpu, 0);  // hase's own one-GPU choice: f/0, ending at 30
  EXPECT_DOUBLE_EQ(r->tasks[0].runner_up_end_ms, 30.0);
  t.split = false;
  r = RunGang("hase", c, {t}, Oracle());
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->tasks[0].end_ms, 30.0);
  EXPECT_TRUE(r->tasks[0].gpus.empty());
  // eft does not split: one GPU, 30 ms.
  t.split = true;
  r = RunGang("eft", c, {t}, Oracle());
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->tasks[0].end_ms, 30.0);
  EXPECT_TRUE(r->tasks[0].parts.empty());
}

// With f/0 busy until 10 (a 10-batch task), the split task arriving at 1 sees one idle GPU:
// no split; alone it would end at 40 on f/0 (61 on s/0), so it waits; at 10 both are idle and
// the split (20 + 10) ends at 30.
TEST(GangTest, SplitTaskWaitsUntilSplittingPays) {
  const Cluster c = FastAndSlowNodes(1, 1);
  Task t = T(1, 30, 1);
  t.split = true;
  auto r = RunGang("hase", c, {T(0, 10, 0), t}, Oracle());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->tasks[1].start_ms, 10.0);
  EXPECT_DOUBLE_EQ(r->tasks[1].end_ms, 30.0);
  EXPECT_EQ(r->tasks[1].parts, (std::vector<int64_t>{20, 10}));
  EXPECT_DOUBLE_EQ(r->makespan_ms, 30.0);
}

TEST(GangTest, WorkloadFileKeys) {
  auto w = sched::ParseWorkloadYaml(
      "tasks:\n  - {model: resnet50, gpus: 4, parallel_efficiency: 0.8, num_batches: 10}\n"
      "  - {model: resnet50}\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)[0].gpus, 4);
  EXPECT_DOUBLE_EQ((*w)[0].parallel_efficiency, 0.8);
  EXPECT_EQ((*w)[1].gpus, 1);
  auto csv = sched::ParseWorkloadCsv("model,gpus,num_batches\nresnet50,2,8\n", "w.csv");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  EXPECT_EQ((*csv)[0].gpus, 2);
  auto zero = sched::ParseWorkloadYaml("tasks:\n  - {model: resnet50, gpus: 0}\n", "w.yaml");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().ToString().find("gpus must be between 1 and 1024"), std::string::npos)
      << zero.status().ToString();
  auto eff = sched::ParseWorkloadYaml("tasks:\n  - {model: resnet50, parallel_efficiency: 0.5}\n", "w.yaml");
  ASSERT_FALSE(eff.ok());
  EXPECT_NE(eff.status().ToString().find("parallel_efficiency is given but gpus is 1"), std::string::npos);
  auto split = sched::ParseWorkloadYaml("tasks:\n  - {model: resnet50, split: true}\n", "w.yaml");
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_TRUE((*split)[0].split);
  EXPECT_FALSE(sched::ParseWorkloadYaml("tasks:\n  - {model: resnet50, split: true, gpus: 2}\n", "w.yaml").ok());
  auto bad = sched::ParseWorkloadYaml("tasks:\n  - {model: resnet50, gpus: 2, parallel_efficiency: 1.5}\n",
                                      "w.yaml");
  ASSERT_FALSE(bad.ok());
}

}  // namespace
}  // namespace hase::sim
