// 10 000 task submissions to `hase serve`'s REST API over loopback (127.0.0.1, keep-alive
// HTTP/1.1, C client threads), with the daemon scheduling them concurrently (policy rr or hase
// on a 3-node, 24-GPU table-oracle cluster) and every submission committed to the SQLite WAL
// journal before its 201. Reports throughput (submissions/s) and the p50/p99/max latency of
// one POST /v1/tasks as seen by the client.
//
//   build/bench/serve_submit                             # all variants
//   build/bench/serve_submit --benchmark_filter=normal
//   build/bench/serve_submit --benchmark_filter='BM_Submit10k/0/1/4/'   # normal, hase: plan on/off
// Args: {sync full=1 / normal=0, policy rr=0 / hase=1, client threads, live plan on=1 / off=0,
// teams on=1 / off=0}. Teams (docs/teams.md): three teams of 8 guaranteed / 16 maximum GPUs,
// submissions round-robin over them; each pass then orders by sched::TeamQueue with fair-share
// factors from every journalled run, and the plan makes team passes:
//   build/bench/serve_submit --benchmark_filter='BM_Submit10k/0/1/4/1/'   # teams off vs on
// The live plan (DaemonOptions::plan_budget_ms, default 250 ms: on) is remade on its own thread
// after every pass that changed the queue; off = plan_budget_ms 0.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <httplib.h>

#include "hase/sched/cluster.h"
#include "hase/sched/latency_oracle.h"
#include "hase/sched/team_config.h"
#include "hase/service/api_server.h"
#include "hase/service/daemon.h"
#include "hase/service/extender.h"

namespace {

using namespace hase;
constexpr int kSubmissions = 10000;

sched::Cluster BenchCluster() {
  sched::Cluster c;
  c.name = "bench";
  c.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}, {"V100-SXM2-16GB", 16384, 15.7, 900}, {"T4", 15360, 8.1, 320}};
  int id = 0;
  for (int n = 0; n < 3; ++n) {
    for (int i = 0; i < 8; ++i) c.gpus.push_back({id++, "node" + std::to_string(n), i, n, c.types[n].memory_mib, 4});
  }
  return c;
}

std::shared_ptr<const sched::LatencyOracle> BenchOracle() {
  auto o = std::make_shared<sched::TableOracle>();
  const char* types[] = {"A100-SXM4-40GB", "V100-SXM2-16GB", "T4"};
  const double speed[] = {1.0, 1.6, 4.0};
  const char* models[] = {"resnet50", "vgg16", "mobilenet_v2", "yolov8n"};
  const double ms[] = {10, 20, 3, 6};
  for (int t = 0; t < 3; ++t) {
    for (int m = 0; m < 4; ++m) o->Set(models[m], types[t], ms[m] * speed[t], 0.6, 2000);
  }
  return o;
}

void BM_Submit10k(benchmark::State& state) {
  const bool full = state.range(0) == 1;
  const std::string policy = state.range(1) == 1 ? "hase" : "rr";
  const int clients = static_cast<int>(state.range(2));
  const bool plan = state.range(3) == 1;
  const bool teams = state.range(4) == 1;
  std::vector<double> latency_us;
  double seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const auto dir = std::filesystem::temp_directory_path() / ("hase_bench_" + std::to_string(std::random_device{}()));
    std::filesystem::remove_all(dir);
    service::DaemonOptions o;
    o.state_dir = dir.string();
    o.policy = policy;
    o.store.synchronous_full = full;
    o.tick_s = 0.5;
    if (!plan) o.plan_budget_ms = 0;
    if (teams) {
      auto t = sched::ParseTeamConfig(
          "teams:\n  - {name: a, guaranteed_gpus: 8, max_gpus: 16}\n  - {name: b, guaranteed_gpus: 8, max_gpus: 16}\n"
          "  - {name: c, guaranteed_gpus: 8, max_gpus: 16, shares: 2}\nfair_share: {half_life_s: 3600}\n",
          "bench");
      if (!t.ok()) {
        state.SkipWithError("teams");
        return;
      }
      o.teams = *t;
    }
    auto d = service::Daemon::Create(BenchCluster(), BenchOracle(), o, nullptr);
    if (!d.ok() || !(*d)->Start().ok()) {
      state.SkipWithError("daemon did not start");
      return;
    }
    service::Extender ext(**d);
    service::ApiServer api(**d, ext);
    const int port = *api.Bind("127.0.0.1", 0);
    api.Start();
    std::vector<std::vector<double>> per_thread(clients);
    std::atomic<int> next{0};
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client cli("127.0.0.1", port);
        cli.set_keep_alive(true);
        cli.set_tcp_nodelay(true);
        const char* models[] = {"resnet50", "vgg16", "mobilenet_v2", "yolov8n"};
        for (int i; (i = next++) < kSubmissions;) {
          std::string body = std::string(R"({"key":"b)") + std::to_string(i) + R"(","model":")" + models[i % 4] +
                             R"(","batch_size":8,"num_batches":)" + std::to_string(10 + i % 90) +
                             (teams ? std::string(R"(,"team":")") + "abc"[i % 3] + "\"" : std::string()) + "}";
          const auto s = std::chrono::steady_clock::now();
          auto r = cli.Post("/v1/tasks", body, "application/json");
          const auto e = std::chrono::steady_clock::now();
          if (!r || r->status != 201) continue;
          per_thread[c].push_back(std::chrono::duration<double, std::micro>(e - s).count());
        }
      });
    }
    for (auto& t : threads) t.join();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.PauseTiming();
    latency_us.clear();
    for (auto& v : per_thread) latency_us.insert(latency_us.end(), v.begin(), v.end());
    api.Stop();
    (*d)->Stop();
    d->reset();
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
  }
  std::sort(latency_us.begin(), latency_us.end());
  auto pct = [&](double p) {
    return latency_us.empty() ? 0.0 : latency_us[std::min(latency_us.size() - 1, static_cast<size_t>(p * latency_us.size()))];
  };
  state.counters["ok"] = static_cast<double>(latency_us.size());
  state.counters["submit_per_s"] = latency_us.size() / seconds;
  state.counters["p50_us"] = pct(0.50);
  state.counters["p99_us"] = pct(0.99);
  state.counters["max_us"] = latency_us.empty() ? 0 : latency_us.back();
  state.SetLabel(std::string(full ? "sync=full " : "sync=normal ") + "policy=" + policy + (plan ? " plan=on" : " plan=off") +
                 (teams ? " teams=3" : ""));
}

BENCHMARK(BM_Submit10k)
    ->ArgsProduct({{1, 0}, {0, 1}, {4}, {1, 0}, {0}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Submit10k)
    ->ArgsProduct({{0}, {1}, {4}, {1, 0}, {1}})  // teams on (off: the rows above)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
