// sched::PlanQueue (the daemon's live plan) is the policy's own code path: with truth equal to
// the prediction, the simulator does exactly what the plan made at t = 0 says — every task's
// GPU, start and end, and the makespan (issue #23 item 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "hase/sched/queue_plan.h"
#include "hase/sched/registry.h"
#include "hase/sched/team_config.h"
#include "hase/sim/analytic_truth.h"
#include "hase/sim/simulator.h"

namespace hase::sim {
namespace {

TEST(QueuePlan, EqualsTheSimulatorUnderPerfectTruth) {
  sched::Cluster c;
  c.name = "plan";
  c.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}, {"T4", 15360, 8.1, 320}, {"V100", 16384, 15.7, 900}};
  const int types[] = {0, 0, 1, 1, 1, 2};
  for (int i = 0; i < 6; ++i) c.gpus.push_back({i, "n" + std::to_string(i / 2), i % 2, types[i], c.types[types[i]].memory_mib, 2});
  auto o = std::make_shared<sched::TableOracle>();
  const char* models[] = {"resnet50", "vgg16", "densenet121", "yolov8s"};
  for (int m = 0; m < 4; ++m) {
    o->Set(models[m], "A100-SXM4-40GB", 4.0 + 3 * m, 0.4 + 0.15 * m, 2000 + 3000 * m);
    o->Set(models[m], "T4", 15.0 + 9 * m, 0.4 + 0.15 * m, 2000 + 3000 * m);
    o->Set(models[m], "V100", 7.0 + 5 * m, 0.4 + 0.15 * m, 2000 + 3000 * m);
  }
  std::mt19937_64 rng(7);
  std::vector<sched::Task> tasks;
  for (int i = 0; i < 60; ++i) {
    sched::Task t;
    t.id = i;
    t.name = "t" + std::to_string(i);
    t.model = models[rng() % 4];
    t.num_batches = 50 + static_cast<int64_t>(rng() % 400);
    tasks.push_back(t);
  }
  for (const std::string policy : {"hase", "fastest-gpu", "gavel-like", "eft-share"}) {
    SCOPED_TRACE(policy);
    sched::PolicyConfig pc;
    pc.oracle = o;
    pc.cluster = &c;
    auto planner = sched::MakePolicy(policy, pc);
    ASSERT_TRUE(planner.ok());
    sched::ClusterState state(c, (*planner)->options().max_tasks_per_gpu);
    for (int g = 0; g < 6; ++g) (*planner)->OnGpuChanged(state, g);
    std::vector<double> key(tasks.size());
    for (const sched::Task& t : tasks) key[t.id] = (*planner)->QueueKey(t, c);
    std::vector<sched::Task> queue = tasks;
    std::stable_sort(queue.begin(), queue.end(),
                     [&](const sched::Task& a, const sched::Task& b) { return key[a.id] > key[b.id]; });
    sched::QueuePlanOptions po;
    po.budget_ms = 1e12;
    auto plan = sched::PlanQueue(state, **planner, queue, po);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_TRUE(plan->complete);
    auto policy_run = sched::MakePolicy(policy, pc);
    ASSERT_TRUE(policy_run.ok());
    const AnalyticTruth perfect(o, {1, 0.0, 0.0});
    SimOptions so;
    so.measure_decisions = false;
    auto real = Simulate(c, tasks, **policy_run, perfect, so);
    ASSERT_TRUE(real.ok());
    EXPECT_NEAR(plan->eta_ms, real->makespan_ms, 1e-6 * real->makespan_ms);
    for (const sched::PlannedTask& p : plan->tasks) {
      const TaskOutcome& r = real->tasks[p.task_id];
      SCOPED_TRACE(p.task_id);
      EXPECT_EQ(p.outcome, sched::PlannedTask::Outcome::kPlanned);
      EXPECT_EQ(p.gpu, r.gpu);
      EXPECT_NEAR(p.start_ms, r.start_ms, 1e-6 * std::max(1.0, r.end_ms));
      EXPECT_NEAR(p.end_ms, r.end_ms, 1e-6 * r.end_ms);
    }
    // The critical path ends at the ETA on one GPU, each task starting when the one before ends.
    ASSERT_FALSE(plan->critical_path.empty());
    const TaskOutcome& last = real->tasks[plan->critical_path.back()];
    EXPECT_NEAR(last.end_ms, real->makespan_ms, 1e-6 * real->makespan_ms);
    EXPECT_EQ(last.gpu, plan->critical_gpu);
  }
}

// With teams (docs/teams.md) the plan's passes are team passes (TeamQueue order with the
// fair-share factor of each instant, max_gpus holds, reservations following the team order):
// under perfect truth the simulator's team run does exactly what the plan says, and the plan
// says which tasks the quota holds now.
TEST(QueuePlan, WithTeamsEqualsTheSimulatorUnderPerfectTruth) {
  sched::Cluster c;
  c.name = "plan-teams";
  c.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}, {"T4", 15360, 8.1, 320}};
  const int types[] = {0, 0, 1, 1, 1};
  for (int i = 0; i < 5; ++i) c.gpus.push_back({i, "n" + std::to_string(i), 0, types[i], c.types[types[i]].memory_mib, 1});
  auto o = std::make_shared<sched::TableOracle>();
  const char* models[] = {"resnet50", "vgg16", "densenet121"};
  for (int m = 0; m < 3; ++m) {
    o->Set(models[m], "A100-SXM4-40GB", 4.0 + 3 * m, 0.5, 2000);
    o->Set(models[m], "T4", 15.0 + 9 * m, 0.5, 2000);
  }
  Result<sched::TeamConfig> teams = sched::ParseTeamConfig(R"(
teams:
  - {name: flood, guaranteed_gpus: 1, max_gpus: 2}
  - {name: vision, guaranteed_gpus: 2, shares: 2}
  - {name: nlp, guaranteed_gpus: 1}
fair_share: {half_life_s: 60}
)", "teams.yaml");
  ASSERT_TRUE(teams.ok()) << teams.status().ToString();
  const char* team_of[] = {"flood", "flood", "flood", "vision", "nlp"};
  std::mt19937_64 rng(11);
  std::vector<sched::Task> tasks;
  for (int i = 0; i < 40; ++i) {
    sched::Task t;
    t.id = i;
    t.name = "t" + std::to_string(i);
    t.model = models[rng() % 3];
    t.team = i < 12 ? "flood" : team_of[rng() % 5];
    t.num_batches = 50 + static_cast<int64_t>(rng() % 400);
    tasks.push_back(t);
  }
  auto speed = [&](const sched::Task& t, int type) { return sched::EquivalentSpeed(*o, t, c.types[type], c.types[0]); };
  for (const std::string policy : {"hase", "fastest-gpu"}) {
    SCOPED_TRACE(policy);
    sched::PolicyConfig pc;
    pc.oracle = o;
    pc.cluster = &c;
    auto planner = sched::MakePolicy(policy, pc);
    ASSERT_TRUE(planner.ok());
    sched::ClusterState state(c, (*planner)->options().max_tasks_per_gpu);
    for (int g = 0; g < 5; ++g) (*planner)->OnGpuChanged(state, g);
    std::vector<double> key(tasks.size());
    for (const sched::Task& t : tasks) key[t.id] = (*planner)->QueueKey(t, c);
    std::vector<sched::Task> queue = tasks;
    std::stable_sort(queue.begin(), queue.end(),
                     [&](const sched::Task& a, const sched::Task& b) { return key[a.id] > key[b.id]; });
    sched::QueuePlanOptions po;
    po.budget_ms = 1e12;
    sched::QueuePlanTeams pt;
    pt.config = &*teams;
    pt.speed = speed;
    auto plan = sched::PlanQueue(state, **planner, queue, po, pt);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_TRUE(plan->complete);
    auto policy_run = sched::MakePolicy(policy, pc);
    ASSERT_TRUE(policy_run.ok());
    const AnalyticTruth perfect(o, {1, 0.0, 0.0});
    SimOptions so;
    so.measure_decisions = false;
    so.teams = &*teams;
    so.equivalent_speed = speed;
    auto real = Simulate(c, tasks, **policy_run, perfect, so);
    ASSERT_TRUE(real.ok()) << real.status().ToString();
    EXPECT_NEAR(plan->eta_ms, real->makespan_ms, 1e-6 * real->makespan_ms);
    int held = 0, overtaken = 0;
    for (const sched::PlannedTask& p : plan->tasks) {
      const TaskOutcome& r = real->tasks[p.task_id];
      SCOPED_TRACE(p.task_id);
      EXPECT_EQ(p.outcome, sched::PlannedTask::Outcome::kPlanned);
      EXPECT_EQ(p.gpu, r.gpu);
      EXPECT_NEAR(p.start_ms, r.start_ms, 1e-6 * std::max(1.0, r.end_ms));
      EXPECT_NEAR(p.end_ms, r.end_ms, 1e-6 * r.end_ms);
      if (p.first_hold) {
        ++held;
        EXPECT_EQ(p.first_hold->team, "flood");
        EXPECT_EQ(p.first_hold->used_gpus, 2);
        EXPECT_GT(p.start_ms, 0);
      }
      overtaken += p.overtaken_by >= 0;
    }
    // Flood filled its maximum of 2 at t = 0; its other queued tasks are held by the quota,
    // and the other teams' tasks went ahead of flood's queued-first ones.
    std::printf("%s: %d held by the quota at t = 0, %d overtaken by another team\n", policy.c_str(), held, overtaken);
    EXPECT_EQ(held, std::count_if(tasks.begin(), tasks.end(), [](const sched::Task& t) { return t.team == "flood"; }) - 2);
    EXPECT_GT(overtaken, 0);
    ASSERT_EQ(plan->team_gpus.size(), 4u);  // and the default team
    EXPECT_EQ(plan->team_gpus[0], 0);  // nothing placed at the start
  }
}

// The hase policy's EASY reservation does not beat reclaim (docs/teams.md, team_reclaim.h):
// the flood's queued task reserved the only GPU before vision's task arrived; when the GPU
// frees, vision (below its guarantee) gets it, the flood's task goes after.
TEST(TeamsSim, ReclaimingTeamGetsTheGpuTheFloodHadReservedUnderPolicyHase) {
  sched::Cluster c;
  c.name = "one";
  c.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}};
  c.gpus.push_back({0, "n0", 0, 0, 40960, 1});
  auto o = std::make_shared<sched::TableOracle>();
  o->Set("resnet50", "A100-SXM4-40GB", 10, 0.8, 2000);
  Result<sched::TeamConfig> teams = sched::ParseTeamConfig(
      "teams:\n  - {name: flood}\n  - {name: vision, guaranteed_gpus: 1}\n", "teams.yaml");
  ASSERT_TRUE(teams.ok()) << teams.status().ToString();
  std::vector<sched::Task> tasks(3);
  for (int i = 0; i < 3; ++i) {
    tasks[i].id = i;
    tasks[i].name = "t" + std::to_string(i);
    tasks[i].model = "resnet50";
    tasks[i].num_batches = 1000;  // 10 s
  }
  tasks[0].team = tasks[1].team = "flood";
  tasks[2].team = "vision";
  tasks[2].arrival_ms = 2000;  // after flood's t1 reserved the GPU
  sched::PolicyConfig pc;
  pc.oracle = o;
  pc.cluster = &c;
  auto policy = sched::MakePolicy("hase", pc);
  ASSERT_TRUE(policy.ok());
  const AnalyticTruth perfect(o, {1, 0.0, 0.0});
  SimOptions so;
  so.measure_decisions = false;
  so.teams = &*teams;
  auto r = Simulate(c, tasks, **policy, perfect, so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->tasks[2].start_ms, 10000, 1e-6);  // vision, when t0 ends
  EXPECT_NEAR(r->tasks[1].start_ms, 20000, 1e-6);  // the flood's reserved task after it
  ASSERT_FALSE(r->reservations.empty());
  EXPECT_EQ(r->reservations.front().task_id, 1);  // t1 did hold the reservation first
}

}  // namespace
}  // namespace hase::sim
