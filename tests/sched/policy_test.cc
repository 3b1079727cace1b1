#include <gtest/gtest.h>

#include "hase/sched/registry.h"

namespace hase::sched {
namespace {

// Two types: "fast" (1 GPU) and "slow" (2 GPUs), 16 GiB each, one task per GPU.
Cluster SmallCluster() {
  Cluster c;
  c.name = "small";
  c.types = {{"fast", 16384, 20, 1000}, {"slow", 16384, 10, 500}};
  c.gpus = {{0, "n0", 0, 0, 16384, 1}, {1, "n1", 0, 1, 16384, 1}, {2, "n1", 1, 1, 16384, 1}};
  return c;
}

std::shared_ptr<TableOracle> Oracle();

PolicyConfig Config(const Cluster& c) {
  PolicyConfig pc;
  pc.oracle = Oracle();
  pc.cluster = &c;
  return pc;
}

std::shared_ptr<TableOracle> Oracle() {
  auto o = std::make_shared<TableOracle>(ContentionModel{1.0});
  o->Set("m", "fast", 1.0, 1.0, 1000);
  o->Set("m", "slow", 3.0, 1.0, 1000);
  o->Set("huge", "fast", 1.0, 1.0, 40000);
  o->Set("huge", "slow", 1.0, 1.0, 40000);
  return o;
}

Task MakeTask(int id, const std::string& model, int64_t batches) {
  Task t;
  t.id = id;
  t.name = "t" + std::to_string(id);
  t.model = model;
  t.num_batches = batches;
  return t;
}

TEST(RegistryTest, UnknownPolicyIsNotFoundAndListsNames) {
  const Cluster c = SmallCluster();
  auto p = MakePolicy("fifo", Config(c));
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(p.status().IsNotFound());
  EXPECT_NE(p.status().hint().find("hase"), std::string::npos);
  for (const std::string& name : PolicyNames()) EXPECT_TRUE(MakePolicy(name, Config(c)).ok());
}

TEST(PolicyTest, TaskLargerThanEveryGpuIsRejectedWithReason) {
  const Cluster c = SmallCluster();
  for (const std::string& name : PolicyNames()) {
    auto p = MakePolicy(name, Config(c));
    ASSERT_TRUE(p.ok());
    ClusterState state(c);
    CycleState cycle;
    auto d = (*p)->Schedule(MakeTask(0, "huge", 1), state, cycle);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_EQ(d->kind, Decision::Kind::kReject) << name;
    EXPECT_NE(d->reason.find("memory need exceeds"), std::string::npos) << d->reason;
    EXPECT_NE(d->reason.find("40000 MiB"), std::string::npos) << d->reason;
  }
}

TEST(PolicyTest, RoundRobinCyclesThroughGpus) {
  const Cluster c = SmallCluster();
  auto p = MakePolicy("rr", Config(c));
  ClusterState state(c);
  std::vector<int> chosen;
  for (int i = 0; i < 4; ++i) {
    CycleState cycle;
    Task t = MakeTask(i, "m", 10);
    auto d = (*p)->Schedule(t, state, cycle);
    ASSERT_TRUE(d.ok());
    ASSERT_EQ(d->kind, Decision::Kind::kBind);
    chosen.push_back(d->gpu);
    (*p)->Commit(t, *d, cycle, state);
  }
  EXPECT_EQ(chosen, (std::vector<int>{0, 1, 2, 0}));
  EXPECT_EQ(state.gpus[0].running.size(), 1u);
  EXPECT_EQ(state.gpus[0].queued.size(), 1u);
}

// hase: a 10-batch task takes 10 ms on fast, 30 ms on slow. With the fast GPU busy until 10,
// a second task waits for it (ends 20) rather than taking a slow GPU (ends 30).
TEST(HasePolicyTest, WaitsForFasterGpuThatFreesSoon) {
  const Cluster c = SmallCluster();
  auto p = MakePolicy("hase", Config(c));
  ClusterState state(c);
  CycleState c0;
  Task t0 = MakeTask(0, "m", 10);
  auto d0 = (*p)->Schedule(t0, state, c0);
  ASSERT_EQ(d0->kind, Decision::Kind::kBind);
  EXPECT_EQ(d0->gpu, 0);
  EXPECT_DOUBLE_EQ(d0->end_ms, 10);
  (*p)->Commit(t0, *d0, c0, state);
  CycleState c1;
  Task t1 = MakeTask(1, "m", 10);
  auto d1 = (*p)->Schedule(t1, state, c1);
  ASSERT_EQ(d1->kind, Decision::Kind::kWait);
  EXPECT_EQ(d1->gpu, 0);
  EXPECT_DOUBLE_EQ(d1->start_ms, 10);
  EXPECT_DOUBLE_EQ(d1->end_ms, 20);
  // A 2-batch task is better off on a slow GPU now (ends 6) than waiting (ends 12).
  CycleState c2;
  auto d2 = (*p)->Schedule(MakeTask(2, "m", 2), state, c2);
  ASSERT_EQ(d2->kind, Decision::Kind::kBind);
  EXPECT_EQ(d2->gpu, 1);
  EXPECT_DOUBLE_EQ(d2->end_ms, 6);
}

// hase: a reservation that comes due is taken at its own price. One fast GPU busy until 10:
// t1 reserves it; at 10 it is free, and in that pass t2 (offered first) waits behind the
// reservation and claims the GPU. t1 then binds and ends at 20 (10 ms, alone), not at 30 behind
// t2's claim, which only planned to follow it. (Priced behind the claim, the daemon's
// calibration learned a factor from a doubled prediction: Calibration.EtaConvergesOnTruthOverRest.)
TEST(HasePolicyTest, DueReservationIsPricedAheadOfClaimsBehindIt) {
  Cluster c;
  c.name = "one";
  c.types = {{"fast", 16384, 20, 1000}};
  c.gpus = {{0, "n0", 0, 0, 16384, 1}};
  PolicyConfig pc;
  pc.oracle = Oracle();
  pc.cluster = &c;
  auto p = MakePolicy("hase", pc);
  ASSERT_TRUE(p.ok());
  ClusterState state(c);
  Task t0 = MakeTask(0, "m", 10), t1 = MakeTask(1, "m", 10), t2 = MakeTask(2, "m", 10);
  CycleState c0;
  auto d0 = (*p)->Schedule(t0, state, c0);
  ASSERT_EQ(d0->kind, Decision::Kind::kBind);
  (*p)->Commit(t0, *d0, c0, state);
  CycleState c1;
  auto d1 = (*p)->Schedule(t1, state, c1);
  ASSERT_EQ(d1->kind, Decision::Kind::kWait);
  ASSERT_TRUE(d1->reserve);
  (*p)->Commit(t1, *d1, c1, state);
  ASSERT_EQ(state.ReservedGpuOf(1), 0);
  // t0 ends at 10; a new pass.
  state.now_ms = 10;
  state.gpus[0].running.clear();
  (*p)->OnGpuChanged(state, 0);
  (*p)->BeginPass(state);
  CycleState c2;
  auto d2 = (*p)->Schedule(t2, state, c2);
  ASSERT_EQ(d2->kind, Decision::Kind::kWait);
  EXPECT_DOUBLE_EQ(d2->start_ms, 20);  // behind the reserved t1
  (*p)->Commit(t2, *d2, c2, state);
  ASSERT_EQ(state.gpus[0].claims.size(), 1u);
  CycleState c3;
  auto d3 = (*p)->Schedule(t1, state, c3);
  ASSERT_EQ(d3->kind, Decision::Kind::kBind);
  EXPECT_EQ(d3->gpu, 0);
  EXPECT_DOUBLE_EQ(d3->start_ms, 10);
  EXPECT_DOUBLE_EQ(d3->end_ms, 20);
}

}  // namespace
}  // namespace hase::sched
