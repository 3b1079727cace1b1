// Issue #26 item 3: chaos. `hase serve --executor --standby` ×2 on one --state (a supervisor
// keeps two alive, as systemd's Restart=always would) under a stream of submits and cancels
// from a client that retries what was not acknowledged, while random faults hit: kill -9 of
// the active daemon, a clean handover to the standby (SIGTERM), kill -9 of a running task, and
// (as root, the state on a tmpfs) a full disk for 2 s. At the end every acknowledged task must
// have run exactly once (or been cancelled, or failed by a fault that hit it) and prints
//   chaos: faults=…, tasks acknowledged=…, lost=…, duplicated=…, stuck=…
// Short form by default (ctest, CI); the long form: tools/chaos.sh (HASE_CHAOS_FAULTS,
// HASE_CHAOS_SEED, HASE_CHAOS_INTERVAL_S).
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "../telemetry/fixture.h"
#include "hase/service/instance_lock.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using nlohmann::json;

double Mono() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double EnvOr(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

bool Alive(int pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string a, b, st;
  return !(stat >> a >> b >> st) || st != "Z";
}

class Chaos {
 public:
  explicit Chaos(std::string dir) : dir_(std::move(dir)), state_(dir_ + "/state") {}

  // Two daemons alive (reaps and restarts the dead; the one that gets the lock serves).
  void Supervise() {
    for (auto it = daemons_.begin(); it != daemons_.end();) {
      ::waitpid(*it, nullptr, WNOHANG);
      it = Alive(*it) ? std::next(it) : daemons_.erase(it);
    }
    while (daemons_.size() < 2) {
      const std::string tag = std::to_string(started_++);
      auto r = hase::testing::RunCommand("(exec " + hase::testing::HaseBin() + " serve --config " + dir_ +
                                         "/cluster.yaml --listen 127.0.0.1:0 --state " + state_ + " --latency-table " +
                                         dir_ + "/latency.csv --executor --standby > " + dir_ + "/serve" + tag +
                                         ".out 2>&1) & echo $!");
      daemons_.push_back(std::atoi(r.out.c_str()));
    }
  }
  // The serving daemon: pid and port from the lease record (0, 0 while none serves).
  std::pair<int, int> Active() const {
    auto h = InstanceLock::ReadHolder(state_);
    if (!h || h->released || !Alive(static_cast<int>(h->pid))) return {0, 0};
    const size_t colon = h->listen.rfind(':');
    const int port = colon == std::string::npos ? 0 : std::atoi(h->listen.c_str() + colon + 1);
    return {static_cast<int>(h->pid), port};
  }
  void KillAll() {
    for (int pid : daemons_) ::kill(pid, SIGKILL);
    for (int pid : daemons_) ::waitpid(pid, nullptr, 0);
    daemons_.clear();
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(state_ + "/exec", ec)) {
      if (e.path().extension() == ".pid") {
        const int pid = std::atoi(hase::testing::ReadFileForTest(e.path().string()).c_str());
        if (pid > 0) ::kill(-pid, SIGKILL);
      }
    }
  }
  // A running task's process (from its pid file), or 0.
  int RunningTaskPid(std::mt19937& rng) const {
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(state_ + "/exec", ec)) {
      if (e.path().extension() != ".pid") continue;
      const int pid = std::atoi(hase::testing::ReadFileForTest(e.path().string()).c_str());
      if (Alive(pid)) pids.push_back(pid);
    }
    if (pids.empty()) return 0;
    return pids[std::uniform_int_distribution<size_t>(0, pids.size() - 1)(rng)];
  }
  const std::string& state() const { return state_; }

 private:
  const std::string dir_, state_;
  std::vector<int> daemons_;
  int started_ = 0;
};

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

  Chaos chaos(dir);
  chaos.Supervise();
  std::mt19937 rng(seed);

  std::mutex mu;                              // guards the client's view below
  std::map<std::string, int64_t> acked;       // key → id, from a 200/201
  std::set<std::string> pending;              // submitted, not acknowledged yet: retried
  std::set<int64_t> cancel_acked;             // ids whose cancel answered 200
  std::atomic<bool> stop{false};
  std::atomic<int> submits{0}, refused{0};
  auto client = [&](httplib::Client*& c, int& port) {
    const int p = chaos.Active().second;
    if (p != port || !c) {
      delete c;
      c = p ? new httplib::Client("127.0.0.1", p) : nullptr;
      port = p;
      if (c) {
        c->set_connection_timeout(1, 0);
        c->set_read_timeout(3, 0);
      }
    }
    return c;
  };
  std::thread submitter([&] {
    std::mt19937 r(seed + 1);
    httplib::Client* c = nullptr;
    int port = 0;
    int next = 0;
    while (!stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      if (!client(c, port)) continue;
      std::string key;
      int64_t cancel_id = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!pending.empty() && r() % 2 == 0) {
          key = *pending.begin();
        } else if (!acked.empty() && r() % 8 == 0) {
          auto it = acked.begin();
          std::advance(it, r() % acked.size());
          cancel_id = it->second;
        } else {
          key = "c" + std::to_string(next++);
          pending.insert(key);
        }
      }
      if (cancel_id) {
        auto a = c->Post("/v1/tasks/" + std::to_string(cancel_id) + "/cancel", "", "application/json");
        if (a && a->status == 200) {
          std::lock_guard<std::mutex> lock(mu);
          cancel_acked.insert(cancel_id);
        }
        continue;
      }
      const int ms = 50 + static_cast<int>(std::hash<std::string>()(key) % 300);
      json body = {{"key", key}, {"model", "resnet50"},
                   {"command", "echo " + key + " >> " + log + "; sleep " + std::to_string(ms / 1000.0)}};
      ++submits;
      auto a = c->Post("/v1/tasks", body.dump(), "application/json");
      if (a && (a->status == 201 || a->status == 200)) {
        std::lock_guard<std::mutex> lock(mu);
        const int64_t id = json::parse(a->body)["id"];
        auto [it, fresh] = acked.emplace(key, id);
        EXPECT_EQ(it->second, id) << "key " << key << " acknowledged as two tasks";
        pending.erase(key);
      } else if (a && a->status == 503) {
        ++refused;
      }
    }
    delete c;
  });

  std::map<std::string, int> faults;
  std::set<int> killed_task_pids;
  const std::vector<std::string> kinds = tmpfs ? std::vector<std::string>{"kill -9 hase", "handover", "kill -9 task",
                                                                          "disk full"}
                                               : std::vector<std::string>{"kill -9 hase", "handover", "kill -9 task"};
  auto wait = [&](double s) {
    for (double t0 = Mono(); Mono() - t0 < s;) {
      chaos.Supervise();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  for (int i = 0; i < faults_wanted; ++i) {
    wait(interval_s);
    const std::string kind = kinds[rng() % kinds.size()];
    if (kind == "kill -9 hase" || kind == "handover") {
      const int pid = chaos.Active().first;
      if (pid == 0) continue;
      ::kill(pid, kind == "handover" ? SIGTERM : SIGKILL);
    } else if (kind == "kill -9 task") {
      const int pid = chaos.RunningTaskPid(rng);
      if (pid == 0) continue;
      ::kill(-pid, SIGKILL);
      killed_task_pids.insert(pid);
    } else {
      {
        std::FILE* f = std::fopen((chaos.state() + "/filler").c_str(), "wb");
        std::vector<char> block(65536, 'x');
        while (f && std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
        }
        if (f) std::fclose(f);
      }
      wait(2);
      std::filesystem::remove(chaos.state() + "/filler");
    }
    ++faults[kind];
  }
  // Quiet: the client retries what is pending until acknowledged, then stops.
  for (double t0 = Mono(); Mono() - t0 < 30;) {
    wait(0.2);
    std::lock_guard<std::mutex> lock(mu);
    if (pending.empty()) break;
  }
  stop = true;
  submitter.join();
  // Every acknowledged task ends: stuck = no task ended for 20 s (and at most 300 s in all).
  json tasks;
  size_t ended_before = 0;
  for (double t0 = Mono(), progress = Mono(); Mono() - progress < 20 && Mono() - t0 < 300;) {
    wait(0.3);
    const int port = chaos.Active().second;
    if (!port) continue;
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(5, 0);
    auto r = c.Get("/v1/tasks?limit=10000");
    if (!r || r->status != 200) continue;
    tasks = json::parse(r->body)["tasks"];
    bool all = true;
    size_t ended = 0;
    for (const json& t : tasks) {
      const std::string s = t["state"];
      const bool end = s == "succeeded" || s == "failed" || s == "cancelled" || s == "rejected";
      all = all && end;
      ended += end;
    }
    if (ended > ended_before) progress = Mono();
    ended_before = ended;
    if (all && tasks.size() >= acked.size()) break;
  }
  chaos.KillAll();

  std::map<std::string, int> runs;
  {
    std::ifstream f(log);
    for (std::string k; f >> k;) ++runs[k];
  }
  std::map<std::string, std::vector<json>> by_key;
  for (const json& t : tasks) by_key[t["key"]].push_back(t);
  int lost = 0, duplicated = 0, stuck = 0, succeeded = 0, cancelled = 0, failed_by_fault = 0;
  for (const auto& [key, id] : acked) {
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      ++lost;
      ADD_FAILURE() << "lost: " << key << " (task " << id << ")";
      continue;
    }
    const json& t = it->second.front();
    const std::string s = t["state"];
    const int n = runs.count(key) ? runs[key] : 0;
    if (it->second.size() > 1 || n > 1) {
      ++duplicated;
      ADD_FAILURE() << "duplicated: " << key << " ran " << n << " times, " << it->second.size() << " rows";
    } else if (s == "succeeded" && n == 1) {
      ++succeeded;
    } else if (s == "cancelled") {
      ++cancelled;
    } else if (s == "failed" && (t["exit_code"] == 137 || t["exit_code"] == -1 || t["reason"].get<std::string>().find("No space") !=
                                                             std::string::npos)) {
      ++failed_by_fault;  // its process was killed by a fault, or its launch met the full disk
    } else {
      ++stuck;
      ADD_FAILURE() << "stuck: " << key << " ran " << n << " times: " << t.dump();
    }
  }
  int faults_total = 0;
  std::string kinds_text;
  for (const auto& [k, n] : faults) {
    faults_total += n;
    kinds_text += (kinds_text.empty() ? "" : ", ") + k + " " + std::to_string(n);
  }
  std::printf("chaos: faults=%d (%s), tasks acknowledged=%zu, lost=%d, duplicated=%d, stuck=%d "
              "(succeeded %d, cancelled %d, failed by a fault %d; submits %d, 503 %d; seed %u%s)\n",
              faults_total, kinds_text.c_str(), acked.size(), lost, duplicated, stuck, succeeded, cancelled,
              failed_by_fault, submits.load(), refused.load(), seed, tmpfs ? "" : "; no tmpfs: no disk-full faults");
  std::fflush(stdout);
  EXPECT_GT(acked.size(), 0u);
  EXPECT_EQ(lost + duplicated + stuck, 0);
  if (tmpfs) ::umount2((dir + "/state").c_str(), MNT_DETACH);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
