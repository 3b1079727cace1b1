// Teams: the config file, quotas, the team pass order and fair share (docs/teams.md).
#include <cmath>

#include <gtest/gtest.h>

#include "hase/sched/fair_share.h"
#include "hase/sched/quota.h"
#include "hase/sched/team_config.h"
#include "hase/sched/registry.h"
#include "hase/sched/team_queue.h"
#include "hase/sched/team_reclaim.h"

namespace hase::sched {
namespace {

constexpr const char* kConfig = R"(
name: c
teams:
  - {name: flood, guaranteed_gpus: 2, max_gpus: 6}
  - {name: vision, guaranteed_gpus: 2, max_gpus: 4, shares: 2, slurm_account: vis, namespaces: [vision-prod]}
  - {name: nlp, guaranteed_gpus: 1}
fair_share: {half_life_s: 3600, reference: A100-SXM4-40GB}
preemption: {enabled: true, max_per_task: 3, min_run_s: 30}
)";

TEST(TeamConfig, ParsesTeamsAndAddsTheDefaultTeam) {
  Result<TeamConfig> c = ParseTeamConfig(kConfig, "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->teams.size(), 4u);  // + default
  EXPECT_EQ(c->teams[1].name, "vision");
  EXPECT_EQ(c->teams[1].guaranteed_gpus, 2);
  EXPECT_EQ(c->teams[1].max_gpus, 4);
  EXPECT_DOUBLE_EQ(c->teams[1].shares, 2);
  EXPECT_EQ(c->teams[1].slurm_account, "vis");
  EXPECT_TRUE(c->teams[2].unlimited());
  EXPECT_EQ(c->teams[3].name, "default");
  EXPECT_EQ(c->teams[3].guaranteed_gpus, 0);
  EXPECT_EQ(c->Find(""), 3);
  EXPECT_EQ(c->Find("nope"), -1);
  EXPECT_EQ(c->TeamOfNamespace("vision-prod"), "vision");
  EXPECT_EQ(c->TeamOfNamespace("other"), "");
  EXPECT_DOUBLE_EQ(c->fair_share.half_life_s, 3600);
  EXPECT_TRUE(c->preemption.enabled);
  EXPECT_EQ(c->preemption.max_per_task, 3);
  EXPECT_DOUBLE_EQ(c->preemption.min_run_s, 30);
}

TEST(TeamConfig, NoTeamsKeyIsDisabledNotAnError) {
  Result<TeamConfig> c = ParseTeamConfig("name: c\nnodes: []\n", "c.yaml");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->enabled());
}

TEST(TeamConfig, BadFilesGiveOneErrorWithTheLine) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"teams:\n  - {name: a, guaranteed_gpus: 3, max_gpus: 2}\n", "below guaranteed_gpus"},
      {"teams:\n  - {name: a}\n  - {name: a}\n", "listed twice"},
      {"teams:\n  - {name: 'a b'}\n", "a team needs a 'name'"},
      {"teams:\n  - {name: a, quota: 2}\n", "unknown team key 'quota'"},
      {"teams:\n  - {name: a, shares: 0}\n", "shares must be"},
      {"teams:\n  - {name: a, guaranteed_gpus: -1}\n", "guaranteed_gpus must be"},
      {"teams:\n  - {name: a, namespaces: [x]}\n  - {name: b, namespaces: [x]}\n", "namespace 'x' is mapped"},
      {"teams: []\n", "non-empty list"},
      {"fair_share: {half_life_s: -1}\n", "half_life_s"},
      {"preemption: {max_per_task: -2}\n", "max_per_task"},
  };
  for (const Case& c : cases) {
    Result<TeamConfig> r = ParseTeamConfig(c.text, "t.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_TRUE(r.status().IsInvalidArgument()) << c.text;
    EXPECT_NE(r.status().ToString().find(c.says), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().ToString().find("t.yaml:"), std::string::npos) << r.status().ToString();
  }
}

TEST(TeamConfig, GuaranteesMustFitTheCluster) {
  Result<TeamConfig> c = ParseTeamConfig(kConfig, "c.yaml");
  ASSERT_TRUE(c.ok());
  Cluster four;
  four.gpus.resize(4);
  Status st = c->CheckAgainst(four);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.ToString().find("add up to 5, the cluster has 4 GPUs"), std::string::npos) << st.ToString();
  Cluster eight;
  eight.gpus.resize(8);
  EXPECT_TRUE(c->CheckAgainst(eight).ok());
  Task t;
  t.name = "t3";
  t.team = "physics";
  Status bad = c->CheckTasks({t});
  EXPECT_NE(bad.ToString().find("task t3 names team 'physics'"), std::string::npos) << bad.ToString();
}

TEST(Quota, HoldsAtTheMaximumWithTheFigures) {
  Result<TeamConfig> c = ParseTeamConfig(kConfig, "c.yaml");
  ASSERT_TRUE(c.ok());
  QuotaLedger l(*c);
  for (int i = 0; i < 3; ++i) l.Hold(1);
  EXPECT_FALSE(l.BelowGuarantee(1));
  EXPECT_FALSE(l.Check(1).has_value());
  l.Hold(1);
  ASSERT_TRUE(l.Check(1).has_value());
  EXPECT_EQ(l.Check(1)->Text(),
            "team vision is at its maximum of 4 GPUs (4 in use, 2 guaranteed): waits until one of its tasks ends");
  l.Release(1);
  EXPECT_FALSE(l.Check(1).has_value());
  EXPECT_TRUE(l.BelowGuarantee(2));  // nlp: 0 of 1
}

TEST(TeamQueue, OwnersBelowGuaranteeGoFirstThenPriorityThenFairShare) {
  Result<TeamConfig> c = ParseTeamConfig(kConfig, "c.yaml");
  ASSERT_TRUE(c.ok());
  QuotaLedger l(*c);
  l.Hold(0);
  l.Hold(0);  // flood at its guarantee (2)
  // Queue order: flood ×3 (priority 5) first, then vision ×2, nlp ×1.
  std::vector<TeamQueue::Item> items = {{0, 5}, {0, 5}, {0, 5}, {1, 0}, {1, 0}, {2, 0}};
  TeamQueue q(l, {0.2, 1.0, 0.9, 1.0}, items);
  std::vector<int> order;
  for (int i; (i = q.Next()) >= 0;) {
    order.push_back(i);
    l.Hold(items[i].team);  // every offer binds
  }
  // vision (below its guarantee of 2, factor 1.0) ties with nlp (below 1, factor 0.9) on
  // priority: vision first and, still below (1 of 2), again; then nlp; then everyone is at or
  // above its guarantee: flood's priority 5 wins over flood's priority-0 rivals' empty queues.
  EXPECT_EQ(order, (std::vector<int>{3, 4, 5, 0, 1, 2}));
  l.Hold(0);  // flood at 6 = max
  TeamQueue q2(l, {}, {{0, 9}, {1, 0}});
  EXPECT_EQ(q2.Next(), 1);  // vision at 3 of max 4; flood held
  EXPECT_EQ(q2.Next(), -1);
}

TEST(FairShare, DecaysWithTheHalfLifeAndGivesSlurmsFactor) {
  Result<TeamConfig> c = ParseTeamConfig(kConfig, "c.yaml");
  ASSERT_TRUE(c.ok());
  FairShare fs(*c);
  fs.Charge(0, 0, 3600, 2.0);  // flood: one hour at 2 A100-equivalents per second
  std::vector<TeamUsage> u = fs.Snapshot(3600, {});
  // ∫_0^3600 2 · 2^(−(3600−τ)/3600) dτ = 2 · 3600/ln2 · (1 − 1/2)
  EXPECT_NEAR(u[0].usage_eq_s, 2 * 3600 / std::log(2.0) * 0.5, 1e-6);
  EXPECT_DOUBLE_EQ(u[0].raw_eq_s, 7200);
  EXPECT_DOUBLE_EQ(u[0].gpu_s, 3600);
  // One half-life later it is halved.
  EXPECT_NEAR(fs.Snapshot(7200, {})[0].usage_eq_s, u[0].usage_eq_s / 2, 1e-6);
  // All usage is flood's: U_norm 1, S_norm 1/5 (shares 1, 2, 1, 1) → F = 2^−5.
  EXPECT_NEAR(u[0].factor, std::exp2(-5.0), 1e-12);
  EXPECT_DOUBLE_EQ(u[1].factor, 1.0);
  // A running segment counts up to now: vision from 3600 at speed 1 for the next hour.
  std::vector<TeamUsage> r = fs.Snapshot(7200, {{1, 3600, 1.0}});
  EXPECT_NEAR(r[1].usage_eq_s, 3600 / std::log(2.0) * 0.5, 1e-6);
  EXPECT_DOUBLE_EQ(r[1].gpu_s, 3600);
}

TEST(FairShare, EquivalentSpeedIsThePredictedSpeedRatio) {
  TableOracle oracle;
  oracle.Set("resnet50", "A100-SXM4-40GB", 10, 1, 1000);
  oracle.Set("resnet50", "T4", 40, 1, 1000);
  Task t;
  t.model = "resnet50";
  t.num_batches = 7;
  GpuType a100{"A100-SXM4-40GB", 40960, 19.5, 1555};
  GpuType t4{"T4", 15360, 8.1, 320};
  GpuType h100{"H100-SXM5-80GB", 81920, 67, 3350};
  EXPECT_DOUBLE_EQ(EquivalentSpeed(oracle, t, t4, a100), 0.25);
  EXPECT_DOUBLE_EQ(EquivalentSpeed(oracle, t, a100, a100), 1.0);
  EXPECT_DOUBLE_EQ(EquivalentSpeed(oracle, t, h100, a100), 67 / 19.5);  // no entry: datasheet ratio
}

TEST(TeamQueue, HeadIsTheNextItemOfATeam) {
  Result<TeamConfig> c = ParseTeamConfig(kConfig, "c.yaml");
  ASSERT_TRUE(c.ok());
  QuotaLedger l(*c);
  TeamQueue q(l, {}, {{0, 0}, {1, 0}, {0, 0}, {-1, 0}});
  EXPECT_EQ(q.Head(0), 0);
  EXPECT_EQ(q.Head(1), 1);
  EXPECT_EQ(q.Head(2), -1);   // nlp has nothing waiting
  EXPECT_EQ(q.Head(-1), 3);   // the teams not listed
  EXPECT_EQ(q.Next(), 0);     // flood and vision below their guarantees: flood's item came first
  EXPECT_EQ(q.Head(0), 2);
}

// Reservations follow the team order (team_reclaim.h): a holder whose team ranks below another
// waiting team loses its reservation; one that ranks first, or that is not waiting, keeps it.
TEST(TeamReclaim, ReservationsOfTasksNotOfferedFirstAreReleased) {
  Result<TeamConfig> c = ParseTeamConfig(kConfig, "c.yaml");
  ASSERT_TRUE(c.ok());
  Cluster cl;
  cl.name = "r";
  cl.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}};
  for (int i = 0; i < 3; ++i) cl.gpus.push_back({i, "n", i, 0, 40960, 1});
  auto o = std::make_shared<TableOracle>();
  o->Set("resnet50", "A100-SXM4-40GB", 10, 0.8, 2000);
  PolicyConfig pc;
  pc.oracle = o;
  pc.cluster = &cl;
  auto policy = MakePolicy("hase", pc);
  ASSERT_TRUE(policy.ok());
  ClusterState state(cl, 0);
  auto reserve = [&](int task, int gpu) {
    Reservation r;
    r.task_id = task;
    r.start_ms = 1000;
    state.gpus[gpu].reservation = r;
    state.reservation_of_task[task] = gpu;
  };
  reserve(10, 0);  // flood's task (flood holds 2 = its guarantee)
  reserve(11, 1);  // vision's task (vision holds 0 of 2: below its guarantee)
  reserve(99, 2);  // not a waiting task (the daemon's own): kept
  QuotaLedger l(*c);
  l.Hold(0);
  l.Hold(0);
  // Waiting: flood 10 (priority 5), vision 11, nlp 12 (below its guarantee too).
  const std::vector<TeamQueue::Item> items = {{0, 5}, {1, 0}, {2, 0}};
  const std::vector<int> ids = {10, 11, 12};
  auto released = YieldReservationsToTeamOrder(state, **policy, l, {1, 1, 1, 1}, items, ids);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0], (std::pair<int, int>{10, 0}));  // below-guarantee teams rank higher
  EXPECT_FALSE(state.gpus[0].reservation.has_value());
  EXPECT_TRUE(state.gpus[1].reservation.has_value());   // vision ties nlp on the key: kept
  EXPECT_TRUE(state.gpus[2].reservation.has_value());
  // Everyone at or above its guarantee: the higher fair-share factor ranks first.
  l.Hold(1);
  l.Hold(1);
  l.Hold(2);
  released = YieldReservationsToTeamOrder(state, **policy, l, {1, 0.2, 0.9, 1}, {{1, 0}, {2, 0}}, {11, 12});
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].first, 11);  // vision 0.2 < nlp 0.9
  EXPECT_TRUE(YieldReservationsToTeamOrder(state, **policy, l, {1, 1, 1, 1}, {}, {}).empty());  // 99: not waiting
}

}  // namespace
}  // namespace hase::sched
