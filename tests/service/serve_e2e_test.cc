// `hase serve` for real: spawn the binary, submit over HTTP, `kill -9` it at random moments,
// restart it on the same state directory, and compare — no accepted task lost or duplicated,
// running assignments recovered, executor processes adopted and never started twice.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "../telemetry/fixture.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using nlohmann::json;

struct Serve {
  int pid = 0;
  int port = 0;
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

class ServeE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = hase::testing::FreshDir("e2e");
    WriteFile(dir_ + "/cluster.yaml",
              "name: e2e\n"
              "nodes:\n"
              "  - name: a\n"
              "    gpus:\n"
              "      - {type: A100-SXM4-40GB, count: 2}\n"
              "  - name: b\n"
              "    gpus:\n"
              "      - {type: T4, count: 1}\n");
    WriteFile(dir_ + "/latency.csv",
              "# model,gpu_type,per_batch_ms,demand,memory_mib\n"
              "resnet50,A100-SXM4-40GB,10,0.8,2000\n"
              "resnet50,Tesla T4,40,0.8,2000\n");
  }
  void TearDown() override {
    for (int pid : started_) ::kill(pid, SIGKILL);
    std::filesystem::remove_all(dir_);
  }

  // Starts `hase serve` in the background; waits (bounded, 15 s) for its "listening on" line.
  Serve Start(const std::string& extra, int round) {
    const std::string out = dir_ + "/serve" + std::to_string(round) + ".out";
    const std::string cmd = "exec " + hase::testing::HaseBin() + " serve --config " + dir_ + "/cluster.yaml" +
                            " --listen 127.0.0.1:0 --state " + dir_ + "/state --latency-table " + dir_ +
                            "/latency.csv " + extra + " > " + out + " 2> " + out + ".err";
    const std::string pidfile = dir_ + "/pid";
    auto r = hase::testing::RunCommand("(" + cmd + ") & echo $! > " + pidfile);
    EXPECT_EQ(r.exit_code, 0);
    Serve s;
    for (int i = 0; i < 1500 && s.port == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::string text = hase::testing::ReadFileForTest(out);
      size_t p = text.find("listening on 127.0.0.1:");
      if (p != std::string::npos) s.port = std::atoi(text.c_str() + p + 23);
    }
    s.pid = std::atoi(hase::testing::ReadFileForTest(pidfile).c_str());
    if (s.pid > 0) started_.push_back(s.pid);
    EXPECT_GT(s.port, 0) << hase::testing::ReadFileForTest(out + ".err");
    return s;
  }
  void Kill9(const Serve& s) {
    ::kill(s.pid, SIGKILL);
    for (int i = 0; i < 500 && ::kill(s.pid, 0) == 0; ++i) {
      ::waitpid(s.pid, nullptr, WNOHANG);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  bool Available() {
    auto r = hase::testing::RunCommand(hase::testing::HaseBin() + " serve --config /nonexistent.yaml");
    return r.err.find("needs sched/cluster_file.h") == std::string::npos;
  }
  static json List(int port) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    auto r = c.Get("/v1/tasks?limit=10000");
    if (!r || r->status != 200) return json();
    return json::parse(r->body)["tasks"];
  }

  std::string dir_;
  std::vector<int> started_;
};

TEST_F(ServeE2E, Kill9AtRandomMomentsLosesAndDuplicatesNothing) {
  if (!Available()) GTEST_SKIP() << "hase serve not built (cluster loader missing)";
  constexpr int kTasks = 120;
  constexpr int kRounds = 3;
  std::mt19937 rng(20261130);
  std::map<std::string, int64_t> accepted;  // key → id from a 200/201 answer
  std::map<int64_t, json> placed_before;    // id → last seen placement (running/bound)
  int next = 0;
  for (int round = 0; round < kRounds; ++round) {
    Serve s = Start("--policy rr", round);
    ASSERT_GT(s.port, 0);
    // Everything accepted so far is there, once, with its id; placements did not move.
    json tasks = List(s.port);
    ASSERT_TRUE(tasks.is_array());
    std::map<std::string, int> count;
    for (const json& t : tasks) {
      ++count[t["key"]];
      if (placed_before.count(t["id"])) {
        const json& b = placed_before[t["id"]];
        EXPECT_EQ(t["gpu"], b["gpu"]) << t.dump();
        EXPECT_EQ(t["times"]["started_s"], b["times"]["started_s"]) << t.dump();
      }
    }
    for (const auto& [key, id] : accepted) EXPECT_EQ(count[key], 1) << key;
    for (const auto& [key, n] : count) EXPECT_EQ(n, 1) << "duplicate " << key;
    // Submit (retrying every key not yet acknowledged, as a client would) until killed.
    const int kill_after_ms = std::uniform_int_distribution<int>(20, 250)(rng);
    std::atomic<bool> killed{false};
    std::thread killer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms));
      json snap = List(s.port);  // placements seen before the kill
      if (snap.is_array()) {
        for (const json& t : snap) {
          if (t["state"] == "running" || t["state"] == "bound") placed_before[t["id"]] = t;
        }
      }
      Kill9(s);
      killed = true;
    });
    httplib::Client c("127.0.0.1", s.port);
    c.set_connection_timeout(1, 0);
    c.set_read_timeout(2, 0);
    for (int i = 0; i < kTasks && !killed; ++i) {
      const std::string key = "k" + std::to_string((next + i) % kTasks);
      json body = {{"key", key}, {"model", "resnet50"}, {"num_batches", 100 + (next + i) % kTasks}};
      auto r = c.Post("/v1/tasks", body.dump(), "application/json");
      if (r && (r->status == 201 || r->status == 200)) {
        int64_t id = json::parse(r->body)["id"];
        if (accepted.count(key)) {
          EXPECT_EQ(accepted[key], id) << key;
        }
        accepted[key] = id;
      }
    }
    next += 40;
    killer.join();
  }
  // Final restart: resubmit every key; each maps to exactly one task.
  Serve s = Start("--policy rr", kRounds);
  ASSERT_GT(s.port, 0);
  httplib::Client c("127.0.0.1", s.port);
  for (int i = 0; i < kTasks; ++i) {
    json body = {{"key", "k" + std::to_string(i)}, {"model", "resnet50"}, {"num_batches", 100 + i}};
    auto r = c.Post("/v1/tasks", body.dump(), "application/json");
    ASSERT_TRUE(r);
    int64_t id = json::parse(r->body)["id"];
    if (accepted.count("k" + std::to_string(i))) {
      EXPECT_EQ(accepted["k" + std::to_string(i)], id);
    }
  }
  json tasks = List(s.port);
  ASSERT_EQ(tasks.size(), static_cast<size_t>(kTasks));
  std::set<std::string> keys;
  int running = 0;
  for (const json& t : tasks) {
    keys.insert(t["key"]);
    running += t["state"] == "running";
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(kTasks));
  EXPECT_EQ(running, 12);  // 3 GPUs × max_tasks 4; the rest wait in local queues (rr)
  EXPECT_GT(accepted.size(), 0u);
  Kill9(s);
}

TEST_F(ServeE2E, ExecutorProcessesSurviveKill9AndRunExactlyOnce) {
  if (!Available()) GTEST_SKIP() << "hase serve not built (cluster loader missing)";
  Serve s = Start("--policy rr --executor", 0);
  ASSERT_GT(s.port, 0);
  httplib::Client c("127.0.0.1", s.port);
  constexpr int kTasks = 16;  // 12 run at once, 4 wait for a slot
  const std::string log = dir_ + "/runs.log";
  for (int i = 0; i < kTasks; ++i) {
    json body = {{"key", "x" + std::to_string(i)}, {"model", "resnet50"},
                 {"command", "echo $HASE_TASK_ID $CUDA_VISIBLE_DEVICES >> " + log + "; sleep 1.5"}};
    auto r = c.Post("/v1/tasks", body.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 201);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Kill9(s);  // 12 processes running, 4 bound
  s = Start("--policy rr --executor", 1);
  ASSERT_GT(s.port, 0);
  json tasks;
  for (int i = 0; i < 600; ++i) {  // bounded: 30 s
    tasks = List(s.port);
    int done = 0;
    for (const json& t : tasks) done += t["state"] == "succeeded";
    if (done == kTasks) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(tasks.size(), static_cast<size_t>(kTasks));
  for (const json& t : tasks) {
    EXPECT_EQ(t["state"], "succeeded") << t.dump();
    EXPECT_EQ(t["exit_code"], 0);
    EXPECT_EQ(t["attempts"], 1);
  }
  std::map<int, int> runs;
  std::ifstream f(log);
  int id = 0, cuda = 0;
  while (f >> id >> cuda) ++runs[id];
  EXPECT_EQ(runs.size(), static_cast<size_t>(kTasks));
  for (const auto& [tid, n] : runs) EXPECT_EQ(n, 1) << "task " << tid << " ran " << n << " times";
  Kill9(s);
}

// Issue #28 (2): a task asking for 2 GPUs runs on both A100s of node a (one type, one node),
// sees both in CUDA_VISIBLE_DEVICES, holds them alone (a 1-GPU task goes to the T4 meanwhile),
// keeps them across a kill -9 of the daemon, and a task asking for 3 is refused with 400.
// Predicted run: resnet50 at 10 ms per batch on an A100, 100 batches split 50 + 50 = 500 ms.
TEST_F(ServeE2E, TwoGpuTaskRunsOnBothGpusOfOneNodeAndSurvivesKill9) {
  if (!Available()) GTEST_SKIP() << "hase serve not built (cluster loader missing)";
  Serve s = Start("--policy hase --executor", 0);
  ASSERT_GT(s.port, 0);
  httplib::Client c("127.0.0.1", s.port);
  const std::string out = dir_ + "/gang.out";
  json body = {{"key", "gang"}, {"model", "resnet50"}, {"gpus", 2}, {"num_batches", 100},
               {"command", "echo $CUDA_VISIBLE_DEVICES > " + out + "; sleep 3"}};
  auto r = c.Post("/v1/tasks", body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  const int64_t id = json::parse(r->body)["id"].get<int64_t>();
  auto get = [&](int port, int64_t task) {
    httplib::Client g("127.0.0.1", port);
    g.set_read_timeout(10, 0);
    auto res = g.Get("/v1/tasks/" + std::to_string(task));
    return res && res->status == 200 ? json::parse(res->body) : json();
  };
  json t;
  for (int i = 0; i < 200 && (t.is_null() || t["state"] != "running"); ++i) {  // bounded: 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t = get(s.port, id);
  }
  ASSERT_EQ(t["state"], "running") << t.dump();
  EXPECT_EQ(t["gpus"], 2);
  EXPECT_EQ(t["gpu"]["node"], "a");
  EXPECT_EQ(t["gpu"]["ids"], json::array({0, 1}));
  EXPECT_EQ(t["gpu"]["indices"], json::array({0, 1}));
  EXPECT_NEAR(t["predicted"]["isolated_ms"].get<double>(), 500.0, 1e-6);
  // A 1-GPU task meanwhile: both A100s are held, so it runs on the T4 of node b.
  json one = {{"key", "one"}, {"model", "resnet50"}, {"num_batches", 1}, {"command", "true"}};
  r = c.Post("/v1/tasks", one.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  const int64_t one_id = json::parse(r->body)["id"].get<int64_t>();
  json o;
  for (int i = 0; i < 200 && (o.is_null() || o["gpu"].is_null()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    o = get(s.port, one_id);
  }
  EXPECT_EQ(o["gpu"]["node"], "b") << o.dump();
  // More than any node has of one type: 400 naming the limit, nothing journalled.
  json three = {{"model", "resnet50"}, {"gpus", 3}};
  r = c.Post("/v1/tasks", three.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("no node has that many GPUs of one type (at most 2)"), std::string::npos) << r->body;
  // kill -9 while it runs: the restarted daemon still has it on both GPUs.
  Kill9(s);
  s = Start("--policy hase --executor", 1);
  ASSERT_GT(s.port, 0);
  t = get(s.port, id);
  EXPECT_EQ(t["gpu"]["ids"], json::array({0, 1})) << t.dump();
  for (int i = 0; i < 300 && t["state"] != "succeeded"; ++i) {  // bounded: 15 s
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t = get(s.port, id);
  }
  EXPECT_EQ(t["state"], "succeeded") << t.dump();
  EXPECT_EQ(t["attempts"], 1);
  EXPECT_EQ(hase::testing::ReadFileForTest(out), "0,1\n");
  EXPECT_EQ(List(s.port).size(), 2u);
  Kill9(s);
}

// Issue #15 (8): `hase serve` listened on 0.0.0.0 with no door, --executor included. Without
// --token-file it refuses any address beyond loopback; a token file every user can read is
// refused with a chmod hint; with tokens it starts and guards its endpoints.
TEST_F(ServeE2E, RefusesToListenBeyondLoopbackWithoutTokens) {
  if (!Available()) GTEST_SKIP() << "hase serve not built (cluster loader missing)";
  const std::string base = hase::testing::HaseBin() + " serve --config " + dir_ + "/cluster.yaml --state " + dir_ +
                           "/state --latency-table " + dir_ + "/latency.csv";
  auto r = hase::testing::RunCommand(base + " --listen 0.0.0.0:0 --executor");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("refusing to listen on 0.0.0.0 without --token-file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run commands"), std::string::npos) << r.err;
  WriteFile(dir_ + "/tokens", "0123456789abcdef0123456789abcdef\n");
  ::chmod((dir_ + "/tokens").c_str(), 0644);
  r = hase::testing::RunCommand(base + " --listen 0.0.0.0:0 --token-file " + dir_ + "/tokens");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("chmod 600"), std::string::npos) << r.err;
  ::chmod((dir_ + "/tokens").c_str(), 0600);
  Serve s = Start("--token-file " + dir_ + "/tokens", 0);  // loopback with tokens
  ASSERT_GT(s.port, 0);
  httplib::Client c("127.0.0.1", s.port);
  EXPECT_EQ(c.Post("/v1/tasks", R"({"model":"resnet50","num_batches":1})", "application/json")->status, 401);
  httplib::Headers auth = {{"Authorization", "Bearer 0123456789abcdef0123456789abcdef"}};
  EXPECT_EQ(c.Post("/v1/tasks", auth, R"({"model":"resnet50","num_batches":1})", "application/json")->status, 201);
  Kill9(s);
}

// A port that a daemon holds is refused to the next one (cpp-httplib's SO_REUSEPORT let both
// listen and the kernel alternated connections between two queues); a port beyond 65535 is an
// error, not a silently wrapped one.
TEST_F(ServeE2E, SecondDaemonOnAHeldPortIsRefused) {
  if (!Available()) GTEST_SKIP() << "hase serve not built (cluster loader missing)";
  Serve s = Start("", 0);
  ASSERT_GT(s.port, 0);
  const std::string base = hase::testing::HaseBin() + " serve --config " + dir_ + "/cluster.yaml --state " + dir_ +
                           "/other --latency-table " + dir_ + "/latency.csv";
  auto r = hase::testing::RunCommand("timeout 20 " + base + " --listen 127.0.0.1:" + std::to_string(s.port));
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot listen on 127.0.0.1:" + std::to_string(s.port)), std::string::npos) << r.err;
  for (const char* bad : {"127.0.0.1:99999", "127.0.0.1:-5", "127.0.0.1:80x"}) {
    r = hase::testing::RunCommand("timeout 20 " + base + " --listen " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << r.err;
    EXPECT_NE(r.err.find("port must be 0 to 65535"), std::string::npos) << r.err;
  }
  r = hase::testing::RunCommand("timeout 20 " + base + " --listen 999.1.1.1:80");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'999.1.1.1' is not an IPv4 address"), std::string::npos) << r.err;
  EXPECT_TRUE(List(s.port).is_array());
  Kill9(s);
}

// The executor's process is hase's: POST /complete from outside is 409 (it freed the GPU while
// the command ran on and fed a false run time to calibration), and a cancel stops a command
// that ignores SIGTERM (the wrapper died of the SIGTERM; its group lived on, never SIGKILLed).
TEST_F(ServeE2E, ExecutorTasksEndOnlyByTheirProcessAndCancelKillsThem) {
  if (!Available()) GTEST_SKIP() << "hase serve not built (cluster loader missing)";
  Serve s = Start("--executor", 0);
  ASSERT_GT(s.port, 0);
  httplib::Client c("127.0.0.1", s.port);
  const std::string pid_file = dir_ + "/cmd.pid", log = dir_ + "/cmd.log";
  json body = {{"model", "resnet50"},
               {"command", "trap '' TERM; echo $$ > " + pid_file + "; sleep 6; echo end >> " + log}};
  auto r = c.Post("/v1/tasks", body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  const int64_t id = json::parse(r->body)["id"].get<int64_t>();
  int pid = 0;
  for (int i = 0; i < 300 && pid == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pid = std::atoi(hase::testing::ReadFileForTest(pid_file).c_str());
  }
  ASSERT_GT(pid, 0) << "the command never started";
  auto done = c.Post("/v1/tasks/" + std::to_string(id) + "/complete", R"({"exit_code":0})", "application/json");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 409) << done->body;
  EXPECT_NE(done->body.find("backend, which reports its end"), std::string::npos) << done->body;
  auto cancel = c.Delete("/v1/tasks/" + std::to_string(id));
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 200) << cancel->body;
  bool gone = false;
  for (int i = 0; i < 250 && !gone; ++i) {  // grace 2 s + a poll: bounded at 5 s
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gone = ::kill(pid, 0) != 0;
  }
  EXPECT_TRUE(gone) << "the command that ignores SIGTERM still runs 5 s after the cancel";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(hase::testing::ReadFileForTest(log), "");
  Kill9(s);
}

// A restart under an edited cluster file: a running task whose GPU the file lacks is not
// re-queued (its process still runs: it ran twice); the daemon refuses to start and says why.
// Reordered GPUs (ids renumbered) keep every task on the same node and index.
TEST_F(ServeE2E, RestartUnderAnEditedClusterFileRunsNothingTwice) {
  if (!Available()) GTEST_SKIP() << "hase serve not built (cluster loader missing)";
  Serve s = Start("--policy rr --executor", 0);
  ASSERT_GT(s.port, 0);
  httplib::Client c("127.0.0.1", s.port);
  const std::string log = dir_ + "/runs.log";
  for (int i = 0; i < 3; ++i) {  // one per GPU: a/0, a/1, b/0
    json body = {{"model", "resnet50"}, {"command", "echo $HASE_TASK_ID >> " + log + "; sleep 3"}};
    auto r = c.Post("/v1/tasks", body.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 201);
  }
  std::map<int64_t, std::pair<std::string, int>> where;
  for (int i = 0; i < 200 && where.size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    where.clear();
    for (const json& t : List(s.port)) {
      if (t["state"] == "running") where[t["id"]] = {t["gpu"]["node"], t["gpu"]["index"]};
    }
  }
  ASSERT_EQ(where.size(), 3u);
  Kill9(s);
  WriteFile(dir_ + "/smaller.yaml", "name: e2e\nnodes:\n  - name: a\n    gpus:\n      - {type: A100-SXM4-40GB, count: 1}\n"
                                     "  - name: b\n    gpus:\n      - {type: T4, count: 1}\n");
  auto r = hase::testing::RunCommand("timeout 30 " + hase::testing::HaseBin() + " serve --config " + dir_ +
                                     "/smaller.yaml --listen 127.0.0.1:0 --state " + dir_ + "/state --latency-table " +
                                     dir_ + "/latency.csv --policy rr --executor");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("running task(s) on GPUs this cluster file lacks"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("on a GPU 1"), std::string::npos) << r.err;
  // The same GPUs, b first: ids renumber, the tasks stay where they run.
  WriteFile(dir_ + "/cluster.yaml", "name: e2e\nnodes:\n  - name: b\n    gpus:\n      - {type: T4, count: 1}\n"
                                     "  - name: a\n    gpus:\n      - {type: A100-SXM4-40GB, count: 2}\n");
  s = Start("--policy rr --executor", 1);
  ASSERT_GT(s.port, 0);
  json tasks;
  for (int i = 0; i < 300; ++i) {  // bounded: 15 s
    tasks = List(s.port);
    int done = 0;
    for (const json& t : tasks) done += t["state"] == "succeeded";
    if (done == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(tasks.size(), 3u);
  for (const json& t : tasks) {
    EXPECT_EQ(t["state"], "succeeded") << t.dump();
    EXPECT_EQ(t["attempts"], 1) << t.dump();
    const auto& [node, index] = where[t["id"].get<int64_t>()];
    EXPECT_EQ(t["gpu"]["node"], node) << t.dump();
    EXPECT_EQ(t["gpu"]["index"], index) << t.dump();
    EXPECT_EQ(t["gpu"]["id"], node == "b" ? 0 : 1 + index) << t.dump();
  }
  std::map<int, int> runs;
  std::ifstream f(log);
  for (int id = 0; f >> id;) ++runs[id];
  EXPECT_EQ(runs.size(), 3u);
  for (const auto& [tid, n] : runs) EXPECT_EQ(n, 1) << "task " << tid << " ran " << n << " times";
  Kill9(s);
}

}  // namespace
}  // namespace hase::service
