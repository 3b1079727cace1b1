// One `hase` scheduling decision (Policy::Schedule: PreFilter → Filter → Score → Select) on
// clusters of 100, 1 000 and 10 000 GPUs, half of them busy with 1–3 co-located tasks and 2 %
// reserved. Targets (issue 4): p99 <= 1 ms at 1 000 GPUs, <= 10 ms at 10 000 GPUs.
//
//   build/bench/sched_decision_bench
//
// Reports the mean per decision (Google Benchmark's time) and p50_us / p99_us / max_us
// counters over every timed decision (steady_clock around each Policy::Schedule call).
// BM_HaseDecision uses the indexed stage 1 (the default); BM_HaseDecisionSweep the reference
// sweep over every GPU (HaseOptions::indexed = false), for comparison.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "hase/sched/registry.h"
#include "bench_fleet.h"

namespace hase::sched {
namespace {

struct Fixture {
  Cluster cluster;
  std::shared_ptr<TableOracle> oracle;
  std::unique_ptr<ClusterState> state;
  std::unique_ptr<Policy> policy;
  std::vector<Task> tasks;
};

Fixture Make(int gpus, bool indexed) {
  Fixture f;
  f.cluster = bench::FourTypeFleet(gpus);
  f.oracle = bench::FiveModelTable(f.cluster);
  f.state = std::make_unique<ClusterState>(f.cluster);
  PolicyConfig pc;
  pc.oracle = f.oracle;
  pc.cluster = &f.cluster;
  pc.hase.indexed = indexed;
  f.policy = std::move(MakePolicy("hase", pc)).value();
  std::mt19937_64 rng(42);
  f.state->now_ms = 1000;
  int id = 0;
  for (GpuState& g : f.state->gpus) {
    if (rng() % 2 == 0) continue;  // half idle
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < n; ++k) {
      g.running.push_back({id++, 1500, 0.3 + 0.1 * static_cast<double>(rng() % 7), 0,
                           1000.0 + static_cast<double>(rng() % 100000), 1000, 0.9});
    }
    if (rng() % 50 == 0) {
      g.reservation = Reservation{id, 5000, 2000, 0.8, 20000, 900};
      f.state->reservation_of_task[id++] = g.id;
    }
  }
  for (int i = 0; i < gpus; ++i) f.policy->OnGpuChanged(*f.state, i);
  for (int i = 0; i < 64; ++i) {
    Task t;
    t.id = 1000000 + i;
    t.name = "b" + std::to_string(i);
    t.model = bench::kFleetModels[i % 5];
    t.num_batches = 100 + 37 * i;
    t.arrival_ms = 900;
    f.tasks.push_back(t);
  }
  return f;
}

void Run(benchmark::State& state, bool indexed) {
  Fixture f = Make(static_cast<int>(state.range(0)), indexed);
  std::vector<double> us;
  us.reserve(1 << 20);
  size_t i = 0;
  for (auto _ : state) {
    CycleState cycle;
    const auto t0 = std::chrono::steady_clock::now();
    auto d = f.policy->Schedule(f.tasks[i++ % f.tasks.size()], *f.state, cycle);
    const auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(d);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  auto pct = [&](double q) { return us[static_cast<size_t>(q * static_cast<double>(us.size() - 1))]; };
  state.counters["p50_us"] = pct(0.50);
  state.counters["p99_us"] = pct(0.99);
  state.counters["max_us"] = us.back();
}

void BM_HaseDecision(benchmark::State& state) { Run(state, true); }
void BM_HaseDecisionSweep(benchmark::State& state) { Run(state, false); }
BENCHMARK(BM_HaseDecision)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HaseDecisionSweep)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hase::sched

BENCHMARK_MAIN();
