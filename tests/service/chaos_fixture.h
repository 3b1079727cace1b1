// Chaos harness shared by tests/service/chaos_test.cc (local executor) and
// chaos_slurm_test.cc (real Slurm), issue #26 item 3:
//  * Supervisor: two `hase serve --standby` on one --state, restarted when they die (as
//    systemd's Restart=always would); Active() is the daemon the lease record names.
//  * Client: a thread that submits a stream of tasks and cancels some, retrying every key not
//    yet acknowledged against whichever daemon is active (keys make retries idempotent).
//  * TelemetryOutage: takes the daemon's load source (--dcgm exporter, --prometheus) away for
//    some seconds; checks that /healthz turns degraded naming it, that tasks are still placed
//    meanwhile (on the last good, ageing load), and that /healthz is ok again by itself after
//    the source is back.
//  * Tally: every acknowledged task ran exactly once, was cancelled, or was failed by a fault
//    that hit its process; prints `chaos: faults=…, tasks acknowledged=…, lost=…, duplicated=…,
//    stuck=…`.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "../telemetry/fixture.h"
#include "hase/service/instance_lock.h"
#include "testing.h"

namespace hase::testing::chaos {

using nlohmann::json;

inline double Mono() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline double EnvOr(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

// A live process (a zombie is not).
inline bool Alive(int pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string a, b, st;
  return !(stat >> a >> b >> st) || st != "Z";
}

// Two `hase serve ARGS --standby --state DIR/state --listen 127.0.0.1:0` kept alive.
class Supervisor {
 public:
  Supervisor(std::string dir, std::string serve_args)
      : dir_(std::move(dir)), state_(dir_ + "/state"), args_(std::move(serve_args)) {}
  ~Supervisor() { KillAll(); }  // also when an assertion ends the test early

  // Reaps dead daemons and starts new ones until two are alive.
  void Supervise() {
    for (auto it = daemons_.begin(); it != daemons_.end();) {
      ::waitpid(*it, nullptr, WNOHANG);
      it = Alive(*it) ? std::next(it) : daemons_.erase(it);
    }
    while (daemons_.size() < 2) {
      const std::string tag = std::to_string(started_++);
      auto r = RunCommand("(exec " + HaseBin() + " serve " + args_ + " --listen 127.0.0.1:0 --state " + state_ +
                          " --standby > " + dir_ + "/serve" + tag + ".out 2>&1) & echo $!");
      daemons_.push_back(std::atoi(r.out.c_str()));
    }
  }
  // The serving daemon: pid and port from the lease record (0, 0 while none serves).
  std::pair<int, int> Active() const {
    auto h = service::InstanceLock::ReadHolder(state_);
    if (!h || h->released || !Alive(static_cast<int>(h->pid))) return {0, 0};
    const size_t colon = h->listen.rfind(':');
    const int port = colon == std::string::npos ? 0 : std::atoi(h->listen.c_str() + colon + 1);
    return {static_cast<int>(h->pid), port};
  }
  // Called about once a second while Wait supervises (an operator's routine).
  void SetChore(std::function<void()> chore) { chore_ = std::move(chore); }
  // Supervises for `s` seconds.
  void Wait(double s) {
    for (double t0 = Mono(); Mono() - t0 < s;) {
      Supervise();
      if (chore_ && Mono() - last_chore_ >= 1) {
        last_chore_ = Mono();
        chore_();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // GET `path` from the active daemon (null when none answers 200).
  json Get(const std::string& path, int timeout_s = 5) const {
    const int port = Active().second;
    if (!port) return json();
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(1, 0);
    c.set_read_timeout(timeout_s, 0);
    auto r = c.Get(path.c_str());
    if (!r || r->status != 200) return json();
    return json::parse(r->body, nullptr, false);
  }
  void KillAll() {
    for (int pid : daemons_) ::kill(pid, SIGKILL);
    for (int pid : daemons_) ::waitpid(pid, nullptr, 0);
    daemons_.clear();
  }
  const std::string& state() const { return state_; }
  int started() const { return started_; }

 private:
  const std::string dir_, state_, args_;
  std::vector<int> daemons_;
  int started_ = 0;
  std::function<void()> chore_;
  double last_chore_ = 0;
};

// The client's view of what it was told.
struct Ledger {
  std::mutex mu;
  std::map<std::string, int64_t> acked;  // key → id, from a 200/201
  std::set<std::string> pending;         // submitted, not acknowledged yet: retried
  std::set<int64_t> cancel_acked;        // ids whose cancel answered 200
  std::map<std::string, double> acked_at;  // key → wall time of its first acknowledgement
  std::atomic<int> submits{0}, refused{0};
};

// Submits key c<N> every `period_ms` (body from `make_body(key)`), re-sends a pending key half
// the time, cancels an acknowledged task one time in eight.
class Client {
 public:
  Client(const Supervisor& sup, Ledger& ledger, uint32_t seed, int period_ms,
         std::function<json(const std::string&)> make_body)
      : sup_(sup), l_(ledger), seed_(seed), period_ms_(period_ms), make_body_(std::move(make_body)) {}
  ~Client() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  // Stops submitting new keys; retries pending ones for up to `limit_s`; then stops.
  void Drain(Supervisor& sup, double limit_s) {
    draining_ = true;
    for (double t0 = Mono(); Mono() - t0 < limit_s;) {
      sup.Wait(0.2);
      std::lock_guard<std::mutex> lock(l_.mu);
      if (l_.pending.empty()) break;
    }
    Stop();
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    std::mt19937 r(seed_ + 1);
    std::unique_ptr<httplib::Client> c;
    int port = 0, next = 0;
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
      const int p = sup_.Active().second;
      if (p != port || !c) {
        c = p ? std::make_unique<httplib::Client>("127.0.0.1", p) : nullptr;
        port = p;
        if (c) {
          c->set_connection_timeout(1, 0);
          c->set_read_timeout(3, 0);
        }
      }
      if (!c) continue;
      std::string key;
      int64_t cancel_id = 0;
      {
        std::lock_guard<std::mutex> lock(l_.mu);
        if (!l_.pending.empty() && (draining_ || r() % 2 == 0)) {
          key = *l_.pending.begin();
        } else if (draining_) {
          continue;
        } else if (!l_.acked.empty() && r() % 8 == 0) {
          auto it = l_.acked.begin();
          std::advance(it, r() % l_.acked.size());
          cancel_id = it->second;
        } else {
          key = "c" + std::to_string(next++);
          l_.pending.insert(key);
        }
      }
      if (cancel_id) {
        auto a = c->Post("/v1/tasks/" + std::to_string(cancel_id) + "/cancel", "", "application/json");
        if (a && a->status == 200) {
          std::lock_guard<std::mutex> lock(l_.mu);
          l_.cancel_acked.insert(cancel_id);
        }
        continue;
      }
      ++l_.submits;
      auto a = c->Post("/v1/tasks", make_body_(key).dump(), "application/json");
      if (a && (a->status == 201 || a->status == 200)) {
        std::lock_guard<std::mutex> lock(l_.mu);
        const int64_t id = json::parse(a->body)["id"];
        auto [it, fresh] = l_.acked.emplace(key, id);
        EXPECT_EQ(it->second, id) << "key " << key << " acknowledged as two tasks";
        if (fresh) l_.acked_at[key] = WallNow();
        l_.pending.erase(key);
      } else if (a && a->status == 503) {
        ++l_.refused;
      }
    }
  }

  const Supervisor& sup_;
  Ledger& l_;
  const uint32_t seed_;
  const int period_ms_;
  std::function<json(const std::string&)> make_body_;
  std::atomic<bool> stop_{false}, draining_{false};
  std::thread thread_;
};

// One outage of the load source: `down()` takes it away, `up()` brings it back after
// `down_s`; `names` is a text /healthz must contain while it is down (its URL).
struct Outage {
  bool degraded_named = false;  // /healthz said degraded, naming the source
  double degraded_after_s = -1;
  int placed_while_down = 0;    // tasks that started while the source was down
  bool recovered = false;       // /healthz no longer names it, without a restart of hase
  double recovered_after_s = -1;
  std::string last_health;
};
inline bool NamesSource(const json& h, const std::string& names) {
  if (!h.is_object() || h.value("status", "") != "degraded" || !h.contains("reasons")) return false;
  for (const json& r : h["reasons"]) {
    if (r.is_string() && r.get<std::string>().find(names) != std::string::npos) return true;
  }
  return false;
}
inline Outage TelemetryOutage(Supervisor& sup, const std::function<void()>& down, const std::function<void()>& up,
                              const std::string& names, double down_s, double recover_limit_s) {
  Outage o;
  const double t0 = Mono(), w0 = WallNow();
  down();
  while (Mono() - t0 < down_s) {
    sup.Wait(0.2);
    const json h = sup.Get("/healthz", 2);
    if (!o.degraded_named && NamesSource(h, names)) {
      o.degraded_named = true;
      o.degraded_after_s = Mono() - t0;
    }
  }
  // Tasks that started during the outage (the load is the last good scrape, ageing).
  const json tasks = sup.Get("/v1/tasks?limit=10000", 10);
  const double w1 = WallNow();
  if (tasks.is_object()) {
    for (const json& t : tasks["tasks"]) {
      const json& v = t["times"]["started_s"];
      const double s = v.is_number() ? v.get<double>() : 0;
      o.placed_while_down += s >= w0 && s <= w1;
    }
  }
  up();
  const double t1 = Mono();
  while (Mono() - t1 < recover_limit_s) {
    sup.Wait(0.2);
    const json h = sup.Get("/healthz", 2);
    if (!h.is_object()) continue;
    o.last_health = h.dump();
    if (!NamesSource(h, names)) {
      o.recovered = true;
      o.recovered_after_s = Mono() - t1;
      break;
    }
  }
  return o;
}

// Waits until every task the active daemon lists has ended and it lists at least `acked`;
// gives up when no task ended for `quiet_s` (stuck) or after `limit_s`. Returns the last list.
inline json WaitAllEnded(Supervisor& sup, size_t acked, double quiet_s, double limit_s) {
  json tasks = json::array();
  size_t ended_before = 0;
  for (double t0 = Mono(), progress = Mono(); Mono() - progress < quiet_s && Mono() - t0 < limit_s;) {
    sup.Wait(0.3);
    const json l = sup.Get("/v1/tasks?limit=10000", 5);
    if (!l.is_object()) continue;
    tasks = l["tasks"];
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
    if (all && tasks.size() >= acked) break;
  }
  return tasks;
}

// The final count. `runs[key]`: how many times the task's command ran (its own log);
// `fault_ended(task)`: a failed task whose end a fault explains (its process killed, its
// launch on a full disk, its job scancel'ed from outside). Adds a test failure per lost,
// duplicated or stuck task.
struct Tally {
  int lost = 0, duplicated = 0, stuck = 0, succeeded = 0, cancelled = 0, failed_by_fault = 0;
};
inline Tally Count(const Ledger& l, const json& tasks, const std::map<std::string, int>& runs,
                   const std::function<bool(const json&)>& fault_ended) {
  std::map<std::string, std::vector<json>> by_key;
  for (const json& t : tasks) by_key[t["key"]].push_back(t);
  Tally n;
  for (const auto& [key, id] : l.acked) {
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      ++n.lost;
      ADD_FAILURE() << "lost: " << key << " (task " << id << ")";
      continue;
    }
    const json& t = it->second.front();
    const std::string s = t["state"];
    const int k = runs.count(key) ? runs.at(key) : 0;
    if (it->second.size() > 1 || k > 1) {
      ++n.duplicated;
      ADD_FAILURE() << "duplicated: " << key << " ran " << k << " times, " << it->second.size() << " rows: " << t.dump();
    } else if (s == "succeeded" && k == 1) {
      ++n.succeeded;
    } else if (s == "cancelled") {
      ++n.cancelled;
    } else if (s == "failed" && fault_ended(t)) {
      ++n.failed_by_fault;
    } else {
      ++n.stuck;
      ADD_FAILURE() << "stuck: " << key << " ran " << k << " times: " << t.dump();
    }
  }
  return n;
}

inline std::string FaultsText(const std::map<std::string, int>& faults, int* total) {
  std::string text;
  *total = 0;
  for (const auto& [k, n] : faults) {
    *total += n;
    text += (text.empty() ? "" : ", ") + k + " " + std::to_string(n);
  }
  return text;
}

// Fills the file system holding `dir` (a small tmpfs) until ENOSPC; `dir`/filler.
inline void FillDisk(const std::string& dir) {
  std::FILE* f = std::fopen((dir + "/filler").c_str(), "wb");
  std::vector<char> block(65536, 'x');
  while (f && std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
  }
  if (f) std::fclose(f);
}

}  // namespace hase::testing::chaos
