// hase's indexed stage 1 (HasePlugin::Rank over ClusterState's candidate index) must decide
// exactly as the sweep over every GPU (HaseOptions::indexed = false), on random cluster states:
// several GPU types and per-GPU memory / slot limits (several classes per type), busy GPUs with
// 1–4 co-located tasks, claims, a reservation, background load on a few GPUs (irregular), and
// tasks of every size, including ones that must wait, reserve or cannot fit anywhere.
#include <gtest/gtest.h>

#include <random>

#include "hase/sched/registry.h"

namespace hase::sched {
namespace {

struct World {
  Cluster cluster;
  std::shared_ptr<TableOracle> oracle;
};

World MakeWorld(std::mt19937_64& rng, int gpus) {
  World w;
  w.cluster.name = "random";
  w.cluster.types = {{"A", 40960, 19.5, 1555}, {"B", 16384, 15.7, 900}, {"C", 24576, 35.6, 936}};
  for (int i = 0; i < gpus; ++i) {
    const int type = static_cast<int>(rng() % 3);
    double mem = w.cluster.types[type].memory_mib;
    if (rng() % 5 == 0) mem /= 2;  // a memory-limited GPU: another class of the same type
    const int slots = rng() % 4 == 0 ? 2 : 4;
    w.cluster.gpus.push_back({i, "n" + std::to_string(i / 4), i % 4, type, mem, slots});
  }
  w.oracle = std::make_shared<TableOracle>(ContentionModel{1.28});
  const char* models[] = {"small", "mid", "heavy", "huge", "giant"};
  const double per_batch[] = {1.0, 4.0, 9.0, 20.0, 5.0};
  const double demand[] = {0.2, 0.5, 0.9, 1.0, 1.0};
  const double memory[] = {800, 3000, 9000, 30000, 50000};  // giant fits no GPU: rejected
  const double speed[] = {1.0, 1.6, 1.2};
  for (int m = 0; m < 5; ++m) {
    for (int t = 0; t < 3; ++t) {
      w.oracle->Set(models[m], w.cluster.types[t].name, per_batch[m] * speed[t], demand[m],
                    memory[m]);
    }
  }
  return w;
}

Task MakeTask(int id, std::mt19937_64& rng, double now) {
  const char* models[] = {"small", "mid", "heavy", "huge", "giant"};
  Task t;
  t.id = id;
  t.name = "t" + std::to_string(id);
  t.model = models[rng() % 10 == 0 ? 4 : rng() % 4];
  t.num_batches = 1 + static_cast<int64_t>(rng() % 500);
  // Some tasks have waited long (reservation / start-anywhere paths), some just arrived.
  t.arrival_ms = rng() % 2 ? now : now - static_cast<double>(rng() % 100000);
  return t;
}

// Fills `state` at now = 1e6 ms: about 60 % of GPUs busy, a few with background load, a few
// claims, and (every other seed) one reservation held by another task.
void Populate(ClusterState& state, std::mt19937_64& rng, const Policy& policy) {
  state.now_ms = 1e6;
  int id = 1000000;
  for (GpuState& g : state.gpus) {
    if (rng() % 10 < 4) continue;
    const int n = 1 + static_cast<int>(rng() % static_cast<uint64_t>(g.max_tasks));
    double mem = 0;
    for (int k = 0; k < n; ++k) {
      const double m = 500 + static_cast<double>(rng() % 4000);
      if (mem + m > g.memory_mib) break;
      mem += m;
      g.running.push_back({id++, m, 0.1 + 0.1 * static_cast<double>(rng() % 9), 9e5,
                           100.0 + static_cast<double>(rng() % 200000), 1e6,
                           rng() % 2 ? 0.8 : 0.0});
    }
    if (rng() % 15 == 0) g.claims.push_back({id++, 1000, 0.5, 5000, 1e6 + 2000});
    if (rng() % 20 == 0) {
      LoadSnapshot bg = LoadSnapshot::Idle();
      bg.sm_active = 0.3;
      g.background = bg;
    }
  }
  const int r = static_cast<int>(rng() % state.gpus.size());
  if (rng() % 2 == 0) state.gpus[r].reservation = Reservation{999, 1e6 + 50000, 4000, 0.7, 30000, 9e5};
  if (state.gpus[r].reservation) state.reservation_of_task[999] = r;
  for (size_t g = 0; g < state.gpus.size(); ++g) policy.OnGpuChanged(state, static_cast<int>(g));
}

TEST(HaseIndexTest, IndexedRankDecidesLikeTheSweep) {
  int compared = 0, binds = 0, waits = 0, reserves = 0, rejects = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const World w = MakeWorld(rng, 8 + static_cast<int>(rng() % 120));
    PolicyConfig pc;
    pc.oracle = w.oracle;
    pc.cluster = &w.cluster;
    pc.max_reservations = 1 + static_cast<int>(seed % 2);  // 2: reserve beside a held one
    pc.hase.indexed = true;
    auto indexed = MakePolicy("hase", pc);
    pc.hase.indexed = false;
    auto sweep = MakePolicy("hase", pc);
    ASSERT_TRUE(indexed.ok() && sweep.ok());
    ClusterState state(w.cluster);
    Populate(state, rng, **indexed);
    for (int i = 0; i < 40; ++i) {
      const Task t = MakeTask(i, rng, state.now_ms);
      CycleState ca, cb;
      auto a = (*indexed)->Schedule(t, state, ca);
      auto b = (*sweep)->Schedule(t, state, cb);
      ASSERT_TRUE(a.ok() && b.ok());
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " task " << i << " " << t.model
                                        << " x" << t.num_batches);
      ASSERT_EQ(static_cast<int>(a->kind), static_cast<int>(b->kind)) << a->reason << " | "
                                                                      << b->reason;
      ++compared;
      switch (a->kind) {
        case Decision::Kind::kReject: ++rejects; continue;
        case Decision::Kind::kBind: ++binds; break;
        case Decision::Kind::kWait:
          ++waits;
          EXPECT_EQ(a->claim_gpu, b->claim_gpu);
          EXPECT_EQ(a->reserve, b->reserve);
          if (a->reserve) ++reserves;
          break;
      }
      EXPECT_EQ(a->gpu, b->gpu);
      EXPECT_DOUBLE_EQ(a->start_ms, b->start_ms);
      EXPECT_DOUBLE_EQ(a->end_ms, b->end_ms);
      // Commit the same decision to the shared state now and then, so that later tasks see
      // the claims and binds (and the index follows them).
      if (i % 3 == 0) (*indexed)->Commit(t, *a, ca, state);
    }
  }
  // The random states exercise every outcome.
  EXPECT_GT(binds, 100);
  EXPECT_GT(waits, 100);
  EXPECT_GT(reserves, 0);
  EXPECT_GT(rejects, 10);
  EXPECT_EQ(compared, binds + waits + rejects);
}

}  // namespace
}  // namespace hase::sched
