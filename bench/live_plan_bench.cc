// The daemon's live plan (sched::PlanQueue, live_plan.h): the whole `hase` policy run forward on
// a copy of the state, for 10 000 queued tasks on 1 000 GPUs (4 types, half busy with 1–3
// co-located tasks), as after every pass of `hase serve`.
//
//   build/bench/live_plan_bench
//
// BM_LivePlan/<budget_ms>: the plan under the daemon's budget (DaemonOptions::plan_budget_ms,
// 250 by default): wall time per plan, and counters `exact` (fraction of the queue the forward
// run placed before the budget; the rest is list-scheduled) and `decisions` (policy cycles).
// BM_LivePlanUnbounded: the same with no budget — the cost of planning all 10 000 exactly.
#include <benchmark/benchmark.h>

#include <random>

#include "hase/sched/queue_plan.h"
#include "hase/sched/registry.h"
#include "bench_fleet.h"

namespace hase::sched {
namespace {

struct Fixture {
  Cluster cluster;
  std::shared_ptr<TableOracle> oracle;
  std::unique_ptr<ClusterState> state;
  std::vector<Task> queue;
};

Fixture Make(int gpus, int tasks) {
  Fixture f;
  f.cluster = bench::FourTypeFleet(gpus);
  f.oracle = bench::FiveModelTable(f.cluster);
  f.state = std::make_unique<ClusterState>(f.cluster);
  f.state->now_ms = 1000;
  std::mt19937_64 rng(42);
  int id = 0;
  for (GpuState& g : f.state->gpus) {
    if (rng() % 2 == 0) continue;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < n; ++k) {
      g.running.push_back({id++, 1500, 0.3 + 0.1 * static_cast<double>(rng() % 7), 0,
                           1000.0 + static_cast<double>(rng() % 100000), 1000, 0});
    }
  }
  for (int i = 0; i < tasks; ++i) {
    Task t;
    t.id = 1000000 + i;
    t.name = "q" + std::to_string(i);
    t.model = bench::kFleetModels[i % 5];
    t.num_batches = 100 + static_cast<int64_t>(rng() % 2000);
    t.arrival_ms = 900;
    f.queue.push_back(t);
  }
  return f;
}

void Run(benchmark::State& st, double budget_ms) {
  Fixture f = Make(1000, 10000);
  PolicyConfig pc;
  pc.oracle = f.oracle;
  pc.cluster = &f.cluster;
  {
    auto p = std::move(MakePolicy("hase", pc)).value();
    for (int g = 0; g < 1000; ++g) p->OnGpuChanged(*f.state, g);
  }
  QueuePlanOptions o;
  o.budget_ms = budget_ms;
  double exact = 0, decisions = 0, eta = 0;
  for (auto _ : st) {
    auto policy = std::move(MakePolicy("hase", pc)).value();  // as the daemon: fresh per plan
    Result<QueuePlan> plan = PlanQueue(*f.state, *policy, f.queue, o);
    if (!plan.ok()) {
      st.SkipWithError(plan.status().ToString().c_str());
      return;
    }
    int n = 0;
    for (const PlannedTask& p : plan->tasks) n += p.outcome == PlannedTask::Outcome::kPlanned;
    exact = static_cast<double>(n) / static_cast<double>(plan->tasks.size());
    decisions = static_cast<double>(plan->decisions);
    eta = (plan->eta_ms - plan->now_ms) / 1000.0;
  }
  st.counters["exact"] = exact;
  st.counters["decisions"] = decisions;
  st.counters["eta_s"] = eta;
}

void BM_LivePlan(benchmark::State& st) { Run(st, static_cast<double>(st.range(0))); }
void BM_LivePlanUnbounded(benchmark::State& st) { Run(st, 1e12); }

BENCHMARK(BM_LivePlan)->Arg(250)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_LivePlanUnbounded)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace hase::sched

BENCHMARK_MAIN();
