// Shared fixtures for service tests: a small heterogeneous cluster, a table oracle with
// hand-set numbers, a fake clock and a fresh state directory.
#pragma once

#include <sqlite3.h>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "hase/sched/cluster.h"
#include "hase/sched/latency_oracle.h"
#include "hase/service/daemon.h"
#include "hase/service/task_record.h"

namespace hase::testing {

// Nodes "a" (2 × A100-SXM4-40GB) and "b" (1 × T4), co-location limit 2.
inline sched::Cluster SmallCluster() {
  sched::Cluster c;
  c.name = "test";
  c.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}, {"T4", 15360, 8.1, 320}};
  c.gpus = {{0, "a", 0, 0, 40960, 2}, {1, "a", 1, 0, 40960, 2}, {2, "b", 0, 1, 15360, 2}};
  return c;
}

// resnet50: 10 ms/batch on A100, 40 ms/batch on T4, demand 0.8, 2000 MiB.
// bigmodel: needs 30000 MiB (fits only A100s). vgg16: 20 / 80 ms, demand 1.0, 4000 MiB.
inline std::shared_ptr<const sched::LatencyOracle> SmallOracle() {
  auto o = std::make_shared<sched::TableOracle>();
  o->Set("resnet50", "A100-SXM4-40GB", 10, 0.8, 2000);
  o->Set("resnet50", "T4", 40, 0.8, 2000);
  o->Set("vgg16", "A100-SXM4-40GB", 20, 1.0, 4000);
  o->Set("vgg16", "T4", 80, 1.0, 4000);
  o->Set("bigmodel", "A100-SXM4-40GB", 50, 1.0, 30000);
  o->Set("bigmodel", "T4", 200, 1.0, 30000);
  return o;
}

struct FakeClock {
  std::atomic<double> now{1.7e9};
  std::function<double()> Fn() {
    return [this] { return now.load(); };
  }
};

// A fresh, unique directory under the system temp dir (removed by the caller if wanted).
inline std::string FreshDir(const std::string& tag) {
  std::random_device rd;
  auto p = std::filesystem::temp_directory_path() / ("hase_" + tag + "_" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// Overwrites the journalled spec of task `id` in `dir`/hase.db, as an older version or a hand
// edit could have left it (tests of validation at restart). Returns false on an SQLite error.
inline bool OverwriteJournalSpec(const std::string& dir, int64_t id, const std::string& spec) {
  sqlite3* db = nullptr;
  if (sqlite3_open((dir + "/hase.db").c_str(), &db) != SQLITE_OK) return false;
  sqlite3_stmt* st = nullptr;
  bool ok = sqlite3_prepare_v2(db, "UPDATE tasks SET spec = ?1 WHERE id = ?2;", -1, &st, nullptr) ==
            SQLITE_OK;
  if (ok) {
    sqlite3_bind_text(st, 1, spec.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, id);
    ok = sqlite3_step(st) == SQLITE_DONE;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return ok;
}

// GPU 0: node a, index 0, A100; GPU 1: node b, index 0, T4; one task at a time on each. The
// live plan, what-if and calibration tests work their plans out by hand on it.
inline sched::Cluster OneA100OneT4(const std::string& name) {
  sched::Cluster c;
  c.name = name;
  c.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}, {"T4", 15360, 8.1, 320}};
  c.gpus = {{0, "a", 0, 0, 40960, 1}, {1, "b", 0, 1, 15360, 1}};
  return c;
}

// resnet50: 10 ms/batch on the A100, 35 ms/batch on the T4 (1000 batches: 10 s / 35 s).
inline std::shared_ptr<sched::TableOracle> OneA100OneT4Table() {
  auto o = std::make_shared<sched::TableOracle>();
  o->Set("resnet50", "A100-SXM4-40GB", 10, 0.8, 2000);
  o->Set("resnet50", "T4", 35, 0.8, 2000);
  return o;
}

// A daemon on `clock` that passes only when asked (tick 1 h), journal without fsync.
inline service::DaemonOptions FakeClockOptions(const std::string& dir, FakeClock& clock) {
  service::DaemonOptions o;
  o.state_dir = dir;
  o.now_s = clock.Fn();
  o.tick_s = 3600;
  o.store.synchronous_full = false;
  return o;
}

// 1000 batches of resnet50 (10 s on the A100 of OneA100OneT4Table).
inline service::TaskSpec Resnet1000() {
  service::TaskSpec s;
  s.model = "resnet50";
  s.num_batches = 1000;
  return s;
}

}  // namespace hase::testing
