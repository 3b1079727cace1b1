// Issue #26 item 3 against the real Slurm: two `hase serve --backend slurm --standby` on one
// --state (kept alive by a supervisor) in front of the Slurm 22.05 of tools/ci/slurm-up.sh
// (started here on private ports, stopped at the end), a stream of submits and cancels from a
// client that retries what was not acknowledged, and random faults: kill -9 of the active hase
// (the standby takes over and re-attaches to the running jobs), a clean handover (SIGTERM),
// kill -9 of slurmctld (restarted 2-12 s later as slurm-up.sh runs it, without -c: it recovers its
// state), scancel of a running job from outside, kill -9 of a job's process, the daemon's
// --prometheus (a real Prometheus scraping stand-in dcgm-exporters) down for 4 s, and (root, the
// state on a tmpfs) a full disk for 2 s. At the end every acknowledged task ran exactly once,
// judged by its job's own log line and by Slurm's job completion record (jobcomp/filetxt), or
// was cancelled, or failed because a fault hit its job. Prints
//   chaos[slurm]: faults=…, tasks acknowledged=…, lost=…, duplicated=…, stuck=…
// Short form by default (ctest; 8 faults); long form: tools/chaos.sh --slurm.
// Skipped with a message only where Slurm cannot be installed or started (slurm-up.sh exit 2)
// or prometheus is not installed (then without that fault); under CI=true both fail instead.
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>

#include <regex>
#include <sstream>

#include <algorithm>

#include "../telemetry/fake_dcgm_exporter.h"
#include "chaos_fixture.h"
#include "hase/service/slurm_text.h"
#include "service_fixture.h"

namespace hase::service {
namespace {

using namespace hase::testing::chaos;
using hase::testing::FakeDcgmExporter;
using hase::testing::RunCommand;

std::string FindPrometheus() {
  for (const char* p : {"/usr/bin/prometheus", "/usr/local/bin/prometheus"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// Stand-in dcgm-exporters for slurm-up.sh's three nodes, idle but for 2 GiB per GPU.
std::vector<std::unique_ptr<FakeDcgmExporter>> Exporters() {
  const std::vector<std::pair<std::string, std::vector<std::string>>> nodes = {
      {"a100-0", {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"}},
      {"t4-0", {"Tesla T4", "Tesla T4", "Tesla T4", "Tesla T4"}},
      {"mix-0", {"NVIDIA H100 80GB HBM3", "NVIDIA L4", "NVIDIA L4"}}};
  std::vector<std::unique_ptr<FakeDcgmExporter>> out;
  for (const auto& [node, models] : nodes) {
    std::vector<FakeDcgmExporter::Gpu> gpus(models.size());
    for (size_t i = 0; i < gpus.size(); ++i) {
      gpus[i].model_name = models[i];
      gpus[i].uuid = "GPU-" + node + "-" + std::to_string(i);
      gpus[i].gauges = {{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.1}, {"DCGM_FI_PROF_DRAM_ACTIVE", 0.05},
                        {"DCGM_FI_DEV_FB_USED", 2048},          {"DCGM_FI_DEV_FB_FREE", 13000},
                        {"DCGM_FI_DEV_GPU_UTIL", 10},           {"DCGM_FI_DEV_SM_CLOCK", 1410}};
    }
    out.push_back(std::make_unique<FakeDcgmExporter>(node, gpus));
  }
  return out;
}

// A real Prometheus on a fixed port scraping `targets` every second; Kill9() and Start() again
// (same port, same TSDB: it replays its WAL as after a crash).
class Prometheus {
 public:
  Prometheus(std::string binary, std::string dir, const std::vector<int>& targets, int port)
      : binary_(std::move(binary)), dir_(std::move(dir)), port_(port) {
    std::filesystem::create_directories(dir_ + "/data");
    std::ofstream cfg(dir_ + "/prometheus.yml");
    cfg << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
           "scrape_configs:\n  - job_name: dcgm-exporter\n    static_configs:\n      - targets: [";
    for (size_t i = 0; i < targets.size(); ++i) cfg << (i ? ", " : "") << "'127.0.0.1:" << targets[i] << "'";
    cfg << "]\n";
  }
  ~Prometheus() { Kill9(); }
  void Start() {
    auto r = RunCommand("(exec " + binary_ + " --config.file=" + dir_ + "/prometheus.yml --storage.tsdb.path=" + dir_ +
                        "/data --web.listen-address=127.0.0.1:" + std::to_string(port_) +
                        " --log.level=warn >> " + dir_ + "/prometheus.log 2>&1) & echo $!");
    pid_ = std::atoi(r.out.c_str());
  }
  void Kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  // Ready and holding samples of every target (bounded).
  bool WaitScraped(double limit_s) const {
    for (double t0 = Mono(); Mono() - t0 < limit_s;) {
      httplib::Client c("127.0.0.1", port_);
      c.set_connection_timeout(1, 0);
      auto r = c.Get("/api/v1/query?query=count(DCGM_FI_DEV_FB_USED)");
      if (r && r->status == 200) {
        const json j = json::parse(r->body, nullptr, false);
        if (j.is_object() && !j["data"]["result"].empty() && j["data"]["result"][0]["value"][1] == "9") return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  const std::string binary_, dir_;
  const int port_;
  int pid_ = 0;
};

// A port free now on 127.0.0.1 (bound, read back, closed).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

class ChaosSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = hase::testing::FreshDir("chaos_slurm_root");
    // Private ports (not slurm-up.sh's defaults, not SlurmE2E's 6917/17100). Finished jobs stay
    // known for 30 min (MinJobAge): a long run's hase never finds a job of its own forgotten.
    const std::string fix_hosts = hase::testing::InCi() ? "FIX_HOSTS=1 " : "";
    auto r = RunCommand(fix_hosts + "HASE_SLURM_ROOT=" + root_ + " CTLD_PORT=7017 SLURMD_PORT=17200 MIN_JOB_AGE=1800 " +
                        hase::testing::SourceDir() + "/tools/ci/slurm-up.sh");
    up_rc_ = r.exit_code;
    if (up_rc_ == 2) {
      if (hase::testing::InCi()) FAIL() << "Slurm could not be started under CI:\n" << r.out << r.err;
      GTEST_SKIP() << "Slurm cannot be installed/started here: " << r.out << r.err;
    }
    ASSERT_EQ(up_rc_, 0) << r.out << r.err;
    ::setenv("SLURM_CONF", (root_ + "/etc/slurm.conf").c_str(), 1);
  }
  void TearDown() override {
    if (up_rc_ == 0 || up_rc_ == 1) {
      RunCommand("scancel --me");  // only ever this private Slurm
      RunCommand(std::string(HasFailure() ? "KEEP=1 " : "") + "HASE_SLURM_ROOT=" + root_ + " " +
                 hase::testing::SourceDir() + "/tools/ci/slurm-down.sh");
    }
    if (!HasFailure()) std::filesystem::remove_all(root_);
  }
  // kill -9 of slurmctld; after `down_s` it is started again as slurm-up.sh starts it (same
  // slurm.conf) but without -c, so it recovers its jobs from StateSaveLocation.
  bool RestartCtld(Supervisor& sup, double down_s) {
    const int pid = std::atoi(hase::testing::ReadFileForTest(root_ + "/run/slurmctld.pid").c_str());
    if (pid <= 0) return false;
    ::kill(pid, SIGKILL);
    sup.Wait(down_s);
    RunCommand("slurmctld");
    for (double t0 = Mono(); Mono() - t0 < 30; sup.Wait(0.2)) {
      if (RunCommand("scontrol ping").out.find("is UP") != std::string::npos) return true;
    }
    return false;
  }

  // What an operator does after a slurmctld crash: slurmctld drains a node whose slurmd still
  // runs a job under an id the restarted slurmctld gave to a new job (its state was saved up to
  // a few seconds late), "Duplicate jobid"; resume those nodes. Returns how many it resumed.
  static int ResumeDuplicateJobidDrains() {
    int n = 0;
    std::istringstream in(RunCommand("sinfo -h -N -o '%N|%E'").out);
    for (std::string line; std::getline(in, line);) {
      const size_t bar = line.find('|');
      if (bar == std::string::npos || line.find("Duplicate jobid", bar) == std::string::npos) continue;
      n += RunCommand("scontrol update nodename=" + line.substr(0, bar) + " state=resume").exit_code == 0;
    }
    return n;
  }

  std::string root_;
  int up_rc_ = -1;
};

TEST_F(ChaosSlurm, EveryAcknowledgedTaskRunsOnceUnderRandomFaults) {
  const int faults_wanted = static_cast<int>(EnvOr("HASE_CHAOS_FAULTS", 8));
  const uint32_t seed = static_cast<uint32_t>(EnvOr("HASE_CHAOS_SEED", 26));
  const double interval_s = EnvOr("HASE_CHAOS_INTERVAL_S", 3);
  const std::string dir = hase::testing::FreshDir("chaos_slurm");
  for (const char* d : {"/state", "/out", "/pids", "/prom"}) std::filesystem::create_directories(dir + d);
  const bool tmpfs = ::geteuid() == 0 && ::mount("tmpfs", (dir + "/state").c_str(), "tmpfs", 0, "size=16m") == 0;
  std::ofstream(dir + "/latency.csv") << "# model,gpu_type,per_batch_ms,demand,memory_mib\n"
                                         "resnet50,A100-SXM4-40GB,10,0.8,2000\n"
                                         "resnet50,H100-SXM5-80GB,8,0.8,2000\n"
                                         "resnet50,L4,11,0.8,2000\n"
                                         "resnet50,T4,12,0.8,2000\n";
  const std::string log = dir + "/runs.log";  // one line per job that ran: key, Slurm job id

  // Load: a real Prometheus scraping the three nodes' exporters (else no telemetry fault).
  std::vector<std::unique_ptr<FakeDcgmExporter>> exporters = Exporters();
  std::vector<int> targets;
  for (const auto& e : exporters) targets.push_back(e->port());
  const std::string prom_bin = FindPrometheus();
  std::unique_ptr<Prometheus> prom;
  std::string load_args;
  if (prom_bin.empty()) {
    if (hase::testing::InCi()) FAIL() << "prometheus is not installed (CI=true): .ci/run installs it";
    std::printf("chaos[slurm]: prometheus not installed: no Prometheus-down faults\n");
  } else {
    prom = std::make_unique<Prometheus>(prom_bin, dir + "/prom", targets, FreePort());
    prom->Start();
    ASSERT_TRUE(prom->WaitScraped(60)) << hase::testing::ReadFileForTest(dir + "/prom/prometheus.log");
    load_args = " --prometheus " + prom->url() + " --prometheus-window 5 --scrape-interval 1 --scrape-timeout 1";
  }

  Supervisor sup(dir, "--backend slurm --latency-table " + dir + "/latency.csv --sync normal --slurm-poll 0.3 "
                      "--slurm-node-poll 1 --slurm-job-prefix cs --slurm-output " + dir + "/out" + load_args);
  sup.Supervise();
  for (double t0 = Mono(); sup.Active().second == 0 && Mono() - t0 < 60;) sup.Wait(0.2);
  ASSERT_GT(sup.Active().second, 0) << hase::testing::ReadFileForTest(dir + "/serve0.out");
  std::mt19937 rng(seed);
  Ledger ledger;
  Client client(sup, ledger, seed, 300, [&](const std::string& key) {
    const double s = 0.5 + static_cast<double>(std::hash<std::string>()(key) % 200) / 100;  // 0.5-2.5 s
    return json{{"key", key},
                {"model", "resnet50"},
                {"command", "echo " + key + " $SLURM_JOB_ID >> " + log + "; echo $$ > " + dir +
                                "/pids/$SLURM_JOB_ID; sleep " + std::to_string(s)}};
  });
  client.Start();

  std::map<std::string, int> faults;
  std::set<int64_t> hit_jobs;  // jobs a fault scancel'ed or killed
  std::vector<std::string> kinds = {"kill -9 hase", "handover", "kill -9 slurmctld", "scancel job", "kill -9 job"};
  if (prom) kinds.push_back("prometheus down");
  if (tmpfs) kinds.push_back("disk full");
  std::vector<Outage> outages;
  double ctld_down_s = 0;
  auto running_jobs = [] {
    std::vector<int64_t> ids;
    std::istringstream in(RunCommand("squeue --me -h -t R -o %i").out);
    for (int64_t id; in >> id;) ids.push_back(id);
    return ids;
  };
  const double t_start = Mono();
  int resumed = 0;
  sup.SetChore([&] { resumed += ResumeDuplicateJobidDrains(); });
  for (int i = 0; i < faults_wanted; ++i) {
    sup.Wait(interval_s);
    // Each kind once first (in a random order), so the short form covers them all.
    if (i == 0) std::shuffle(kinds.begin(), kinds.end(), rng);
    const std::string kind = i < static_cast<int>(kinds.size()) ? kinds[i] : kinds[rng() % kinds.size()];
    if (kind == "kill -9 hase" || kind == "handover") {
      const int pid = sup.Active().first;
      if (pid == 0) continue;
      ::kill(pid, kind == "handover" ? SIGTERM : SIGKILL);
    } else if (kind == "kill -9 slurmctld") {
      // Down 2-12 s: a Slurm client retries for about 9 s, so the longer outages make sbatch,
      // squeue and scancel fail ("Unable to contact slurm controller").
      const double down_s = 2 + static_cast<double>(rng() % 100) / 10;
      ctld_down_s += down_s;
      ASSERT_TRUE(RestartCtld(sup, down_s)) << "slurmctld did not come back:\n"
                                       << RunCommand("tail -n 20 " + root_ + "/log/slurmctld.log").out;
    } else if (kind == "scancel job" || kind == "kill -9 job") {
      std::vector<int64_t> ids = running_jobs();
      if (ids.empty()) continue;
      const int64_t job = ids[rng() % ids.size()];
      if (kind == "scancel job") {
        RunCommand("scancel " + std::to_string(job));
      } else {
        // Its batch shell, if the pid file is this job's (ids are reused after a slurmctld
        // restart that lost state, and pids after a process ends): its environment says so.
        const int pid = std::atoi(hase::testing::ReadFileForTest(dir + "/pids/" + std::to_string(job)).c_str());
        const std::string env = hase::testing::ReadFileForTest("/proc/" + std::to_string(pid) + "/environ");
        if (!Alive(pid) || env.find(std::string("SLURM_JOB_ID=") + std::to_string(job) + '\0') == std::string::npos) {
          continue;
        }
        ::kill(pid, SIGKILL);
      }
      hit_jobs.insert(job);
    } else if (kind == "prometheus down") {
      if (sup.Active().second == 0) continue;
      outages.push_back(TelemetryOutage(
          sup, [&] { prom->Kill9(); }, [&] { prom->Start(); }, "Prometheus " + prom->url(), 4, 30));
    } else {
      FillDisk(sup.state());
      sup.Wait(2);
      std::filesystem::remove(sup.state() + "/filler");
    }
    ++faults[kind];
  }
  client.Drain(sup, 60);
  // Every acknowledged task ends: stuck = no task ended for 30 s (and at most 300 s in all).
  const json tasks = WaitAllEnded(sup, ledger.acked.size(), 30, 300);
  const double secs = Mono() - t_start;
  sup.SetChore(nullptr);
  sup.KillAll();

  // What ran: each job's own log line (key, job id) ...
  std::map<std::string, int> runs;
  std::map<std::string, std::set<int64_t>> jobs_of_key;
  {
    std::ifstream f(log);
    std::string line;
    while (std::getline(f, line)) {
      std::istringstream in(line);
      std::string key;
      int64_t job = 0;
      if (!(in >> key >> job)) continue;
      ++runs[key];
      jobs_of_key[key].insert(job);
    }
  }
  // ... and Slurm's own record: every job slurmctld still holds (MinJobAge 30 min: all of
  // them, `squeue --states=all`), plus its job completion log (jobcomp/filetxt) for jobs a
  // slurmctld restart dropped. Job id → (name cs-<task>-<attempt>, state).
  // (job id, name) → states: ids are reused after a slurmctld restart that lost state.
  std::map<std::pair<int64_t, std::string>, std::set<std::string>> slurm_record;
  {
    std::istringstream in(RunCommand("squeue --me -h -t all -o '%i|%j|%T'").out);
    for (std::string line; std::getline(in, line);) {
      const size_t a = line.find('|'), b = line.rfind('|');
      if (a == std::string::npos || a == b) continue;
      slurm_record[{std::atoll(line.c_str()), line.substr(a + 1, b - a - 1)}].insert(line.substr(b + 1));
    }
    std::ifstream f(root_ + "/log/jobcomp.txt");
    for (std::string line; std::getline(f, line);) {
      std::map<std::string, std::string> kv = ParseSlurmRecord(line);
      // One job may show twice: its end lost by a slurmctld restart, later cancelled.
      slurm_record[{std::atoll(kv["JobId"].c_str()), kv["Name"]}].insert(kv["JobState"]);
    }
  }
  RunCommand("scancel --me");
  std::map<int64_t, int> completed_jobs, slurm_jobs;  // task → jobs COMPLETED, jobs in all
  for (const auto& [job, states] : slurm_record) {
    if (job.second.rfind("cs-", 0) != 0) continue;
    const int64_t task = std::atoll(job.second.c_str() + 3);
    ++slurm_jobs[task];
    completed_jobs[task] += states.count("COMPLETED");
  }
  int slurm_completed_twice = 0, slurm_disagrees = 0, slurm_forgot = 0;
  for (const json& t : tasks) {
    const int64_t id = t["id"];
    const int completed = completed_jobs[id];
    if (completed > 1) {
      ++slurm_completed_twice;
      ADD_FAILURE() << "task " << id << ": " << completed << " Slurm jobs COMPLETED: " << t.dump();
    }
    if (t["state"] == "succeeded" && completed != 1) {
      const std::string key = t["key"];
      const std::string exit_marker = dir + "/out/cs-" + std::to_string(id) + "-" +
                                      std::to_string(t["attempts"].get<int>()) + ".exit";
      if (completed == 0 && runs.count(key) && runs.at(key) == 1 &&
          hase::testing::ReadFileForTest(exit_marker) == "0\n") {
        // A slurmctld restart lost the job or its end (then hase cancelled the stale record):
        // the job's own log and exit-code marker say it ran once and succeeded.
        ++slurm_forgot;
        continue;
      }
      ++slurm_disagrees;
      ADD_FAILURE() << "task " << id << " succeeded in hase but Slurm's record has " << completed
                    << " COMPLETED jobs (of " << slurm_jobs[id] << "): " << t.dump();
    }
  }
  static const std::regex kJob("Slurm job ([0-9]+) ");
  const Tally n = Count(ledger, tasks, runs, [&](const json& t) {
    std::smatch m;
    const std::string reason = t["reason"];
    if (std::regex_search(reason, m, kJob) && hit_jobs.count(std::atoll(m[1].str().c_str()))) return true;
    return reason.find("No space") != std::string::npos;  // its launch met the full disk
  });
  int outages_ok = 0, placed_while_down = 0;
  double worst_degraded_s = 0, worst_recovered_s = 0;
  for (const Outage& o : outages) {
    EXPECT_TRUE(o.degraded_named) << "Prometheus down 4 s: /healthz never said degraded naming " << prom->url();
    EXPECT_TRUE(o.recovered) << "Prometheus back: /healthz still names it after 30 s: " << o.last_health;
    outages_ok += o.degraded_named && o.recovered;
    placed_while_down += o.placed_while_down;
    worst_degraded_s = std::max(worst_degraded_s, o.degraded_after_s);
    worst_recovered_s = std::max(worst_recovered_s, o.recovered_after_s);
  }
  // Launches sbatch could not confirm (slurmctld down longer than a client's ~9 s of retries).
  int unconfirmed = 0;
  for (int k = 0; k < sup.started(); ++k) {
    std::istringstream in(hase::testing::ReadFileForTest(dir + "/serve" + std::to_string(k) + ".out"));
    for (std::string line; std::getline(in, line);) unconfirmed += line.find(" not confirmed (") != std::string::npos;
  }
  int faults_total = 0;
  const std::string kinds_text = FaultsText(faults, &faults_total);
  size_t jobs_recorded = 0;
  for (const auto& [task, jobs] : slurm_jobs) jobs_recorded += jobs;
  std::printf("chaos[slurm]: faults=%d (%s), tasks acknowledged=%zu, lost=%d, duplicated=%d, stuck=%d "
              "(succeeded %d, cancelled %d, failed by a fault %d; submits %d, 503 %d; Slurm jobs %zu, "
              "completed twice %d, hase/Slurm disagree %d, job or end lost by slurmctld %d; slurmctld down %.0f s in all, "
              "nodes resumed after a duplicate job id %d, sbatch not confirmed %d; daemons started %d; %.0f s; seed %u%s)\n",
              faults_total, kinds_text.c_str(), ledger.acked.size(), n.lost, n.duplicated, n.stuck, n.succeeded,
              n.cancelled, n.failed_by_fault, ledger.submits.load(), ledger.refused.load(), jobs_recorded,
              slurm_completed_twice, slurm_disagrees, slurm_forgot, ctld_down_s, resumed, unconfirmed, sup.started(), secs, seed,
              tmpfs ? "" : "; no tmpfs: no disk-full faults");
  if (!outages.empty()) {
    std::printf("chaos[slurm]: Prometheus down %zu times: /healthz degraded naming it %d times (within %.1f s), ok "
                "again by itself (within %.1f s); %d tasks started while it was down\n",
                outages.size(), outages_ok, worst_degraded_s, worst_recovered_s, placed_while_down);
  }
  std::fflush(stdout);
  EXPECT_GT(ledger.acked.size(), 0u);
  EXPECT_EQ(n.lost + n.duplicated + n.stuck, 0);
  if (!outages.empty()) EXPECT_GT(placed_while_down, 0) << "nothing was placed while Prometheus was down";
  prom.reset();
  if (tmpfs) ::umount2((dir + "/state").c_str(), MNT_DETACH);
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
