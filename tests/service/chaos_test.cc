// Issue #26 item 3: chaos. `hase serve --executor --standby` ×2 on one --state (a supervisor
// keeps two alive, as systemd's Restart=always would) under a stream of submits and cancels
// from a client that retries what was not acknowledged, while random faults hit: kill -9 of
// the active daemon, a clean handover to the standby (SIGTERM), kill -9 of a running task, its
// dcgm-exporter (--dcgm) down for 3 s, and (as root, the state on a tmpfs) a full disk for 2 s.
// At the end every acknowledged task must have run exactly once (or been cancelled, or failed
// by a fault that hit it) and prints
//   chaos: faults=…, tasks acknowledged=…, lost=…, duplicated=…, stuck=…
// Short form by default (ctest, CI); the long form: tools/chaos.sh (HASE_CHAOS_FAULTS,
// HASE_CHAOS_SEED, HASE_CHAOS_INTERVAL_S). The same against Slurm: chaos_slurm_test.cc.
#include <sys/mount.h>

#include <algorithm>

#include "../telemetry/fake_dcgm_exporter.h"
#include "chaos_fixture.h"
#include "service_fixture.h"

namespace hase::service {
namespace {

using namespace hase::testing::chaos;
using hase::testing::FakeDcgmExporter;

// A running task's process (from its pid file), or 0.
int RunningTaskPid(const std::string& state, std::mt19937& rng) {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(state + "/exec", ec)) {
    if (e.path().extension() != ".pid") continue;
    const int pid = std::atoi(hase::testing::ReadFileForTest(e.path().string()).c_str());
    if (Alive(pid)) pids.push_back(pid);
  }
  if (pids.empty()) return 0;
  return pids[std::uniform_int_distribution<size_t>(0, pids.size() - 1)(rng)];
}

void KillTasks(const std::string& state) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(state + "/exec", ec)) {
    if (e.path().extension() == ".pid") {
      const int pid = std::atoi(hase::testing::ReadFileForTest(e.path().string()).c_str());
      if (pid > 0) ::kill(-pid, SIGKILL);
    }
  }
}

// Node a's dcgm-exporter: two A100s, idle but for 2 GiB each.
std::unique_ptr<FakeDcgmExporter> Exporter(int port) {
  std::vector<FakeDcgmExporter::Gpu> gpus(2);
  for (int i = 0; i < 2; ++i) {
    gpus[i].uuid = "GPU-chaos-a" + std::to_string(i);
    gpus[i].gauges = {{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.1}, {"DCGM_FI_PROF_DRAM_ACTIVE", 0.05},
                      {"DCGM_FI_DEV_FB_USED", 2048},          {"DCGM_FI_DEV_FB_FREE", 38912},
                      {"DCGM_FI_DEV_GPU_UTIL", 10},           {"DCGM_FI_DEV_SM_CLOCK", 1410}};
  }
  return std::make_unique<FakeDcgmExporter>("a", gpus, port);
}

TEST(Chaos, EveryAcknowledgedTaskRunsOnceUnderRandomFaults) {
  const int faults_wanted = static_cast<int>(EnvOr("HASE_CHAOS_FAULTS", 8));
  const uint32_t seed = static_cast<uint32_t>(EnvOr("HASE_CHAOS_SEED", 26));
  const double interval_s = EnvOr("HASE_CHAOS_INTERVAL_S", 1.5);
  const std::string dir = hase::testing::FreshDir("chaos");
  std::filesystem::create_directories(dir + "/state");
  const bool tmpfs = ::geteuid() == 0 && ::mount("tmpfs", (dir + "/state").c_str(), "tmpfs", 0, "size=16m") == 0;
  std::ofstream(dir + "/cluster.yaml")
      << "name: chaos\nnodes:\n  - name: a\n    gpus:\n      - {type: A100-SXM4-40GB, count: 2}\n";
  std::ofstream(dir + "/latency.csv") << "resnet50,A100-SXM4-40GB,10,0.8,2000\n";
  const std::string log = dir + "/runs.log";  // one line per command run: its key

  std::unique_ptr<FakeDcgmExporter> exporter = Exporter(0);
  const int exporter_port = exporter->port();
  ASSERT_GT(exporter_port, 0);
  const std::string exporter_url = "http://127.0.0.1:" + std::to_string(exporter_port) + "/metrics";
  Supervisor sup(dir, "--config " + dir + "/cluster.yaml --latency-table " + dir + "/latency.csv --executor --dcgm " +
                          exporter_url + "=a --scrape-interval 0.5 --scrape-timeout 0.5");
  sup.Supervise();
  std::mt19937 rng(seed);
  Ledger ledger;
  Client client(sup, ledger, seed, 40, [&](const std::string& key) {
    const int ms = 50 + static_cast<int>(std::hash<std::string>()(key) % 300);
    return json{{"key", key}, {"model", "resnet50"},
                {"command", "echo " + key + " >> " + log + "; sleep " + std::to_string(ms / 1000.0)}};
  });
  client.Start();

  std::map<std::string, int> faults;
  std::vector<std::string> kinds = {"kill -9 hase", "handover", "kill -9 task", "exporter down"};
  if (tmpfs) kinds.push_back("disk full");
  std::vector<Outage> outages;
  for (int i = 0; i < faults_wanted; ++i) {
    sup.Wait(interval_s);
    // Each kind once first (in a random order), so the short form covers them all.
    if (i == 0) std::shuffle(kinds.begin(), kinds.end(), rng);
    const std::string kind = i < static_cast<int>(kinds.size()) ? kinds[i] : kinds[rng() % kinds.size()];
    if (kind == "kill -9 hase" || kind == "handover") {
      const int pid = sup.Active().first;
      if (pid == 0) continue;
      ::kill(pid, kind == "handover" ? SIGTERM : SIGKILL);
    } else if (kind == "kill -9 task") {
      const int pid = RunningTaskPid(sup.state(), rng);
      if (pid == 0) continue;
      ::kill(-pid, SIGKILL);
    } else if (kind == "exporter down") {
      if (sup.Active().second == 0) continue;
      outages.push_back(TelemetryOutage(
          sup, [&] { exporter.reset(); }, [&] { exporter = Exporter(exporter_port); }, exporter_url, 3, 15));
      EXPECT_GT(exporter->port(), 0) << "the exporter could not listen on port " << exporter_port << " again";
    } else {
      FillDisk(sup.state());
      sup.Wait(2);
      std::filesystem::remove(sup.state() + "/filler");
    }
    ++faults[kind];
  }
  client.Drain(sup, 30);  // the client retries what is pending until acknowledged
  // Every acknowledged task ends: stuck = no task ended for 20 s (and at most 300 s in all).
  const json tasks = WaitAllEnded(sup, ledger.acked.size(), 20, 300);
  sup.KillAll();
  KillTasks(sup.state());

  std::map<std::string, int> runs;
  {
    std::ifstream f(log);
    for (std::string k; f >> k;) ++runs[k];
  }
  const Tally n = Count(ledger, tasks, runs, [](const json& t) {
    // its process was killed by a fault, or its launch met the full disk
    return t["exit_code"] == 137 || t["exit_code"] == -1 ||
           t["reason"].get<std::string>().find("No space") != std::string::npos;
  });
  int outages_ok = 0, placed_while_down = 0;
  double worst_degraded_s = 0, worst_recovered_s = 0;
  for (const Outage& o : outages) {
    EXPECT_TRUE(o.degraded_named) << "exporter down 3 s: /healthz never said degraded naming " << exporter_url;
    EXPECT_TRUE(o.recovered) << "exporter back: /healthz still names it after 15 s: " << o.last_health;
    outages_ok += o.degraded_named && o.recovered;
    placed_while_down += o.placed_while_down;
    worst_degraded_s = std::max(worst_degraded_s, o.degraded_after_s);
    worst_recovered_s = std::max(worst_recovered_s, o.recovered_after_s);
  }
  int faults_total = 0;
  const std::string kinds_text = FaultsText(faults, &faults_total);
  std::printf("chaos: faults=%d (%s), tasks acknowledged=%zu, lost=%d, duplicated=%d, stuck=%d "
              "(succeeded %d, cancelled %d, failed by a fault %d; submits %d, 503 %d; seed %u%s)\n",
              faults_total, kinds_text.c_str(), ledger.acked.size(), n.lost, n.duplicated, n.stuck, n.succeeded,
              n.cancelled, n.failed_by_fault, ledger.submits.load(), ledger.refused.load(), seed,
              tmpfs ? "" : "; no tmpfs: no disk-full faults");
  if (!outages.empty()) {
    std::printf("chaos: exporter down %zu times: /healthz degraded naming it %d times (within %.1f s), ok again by "
                "itself (within %.1f s); %d tasks started while it was down\n",
                outages.size(), outages_ok, worst_degraded_s, worst_recovered_s, placed_while_down);
  }
  std::fflush(stdout);
  EXPECT_GT(ledger.acked.size(), 0u);
  EXPECT_EQ(n.lost + n.duplicated + n.stuck, 0);
  if (!outages.empty()) EXPECT_GT(placed_while_down, 0) << "nothing was placed while the exporter was down";
  if (tmpfs) ::umount2((dir + "/state").c_str(), MNT_DETACH);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
