// Issue #26 item 2: a full disk loses nothing and strands nothing. `hase serve --executor` with
// its --state on a real 2 MiB tmpfs (needs root to mount; skipped otherwise — the injected
// failure is ApiGuard.FullDiskAnswers503AndHealthzSaysWhy): the disk is filled, submits are
// refused with 503 and the reason, /healthz is degraded naming the journal, no task is
// "running" without a process; once space returns /healthz recovers by itself and every
// accepted task runs exactly once.
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
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

// Fills the filesystem of `path` with one file until ENOSPC.
void Fill(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::vector<char> block(4096, 'x');
  while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
  }
  std::fclose(f);
}

TEST(FullDisk, RefusedWith503NothingStrandedRecoversByItself) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs";
  const std::string dir = hase::testing::FreshDir("fulldisk");
  const std::string state = dir + "/state";
  std::filesystem::create_directories(state);
  if (::mount("tmpfs", state.c_str(), "tmpfs", 0, "size=2m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs: " << std::strerror(errno);
  }
  std::ofstream(dir + "/cluster.yaml")
      << "name: fd\nnodes:\n  - name: a\n    gpus:\n      - {type: A100-SXM4-40GB, count: 2}\n";
  std::ofstream(dir + "/latency.csv") << "resnet50,A100-SXM4-40GB,10,0.8,2000\n";
  const std::string out = dir + "/serve.out";
  auto r = hase::testing::RunCommand("(exec " + hase::testing::HaseBin() + " serve --config " + dir +
                                     "/cluster.yaml --listen 127.0.0.1:0 --state " + state + " --latency-table " + dir +
                                     "/latency.csv --executor > " + out + " 2>&1) & echo $! > " + dir + "/pid");
  ASSERT_EQ(r.exit_code, 0);
  const int pid = std::atoi(hase::testing::ReadFileForTest(dir + "/pid").c_str());
  int port = 0;
  for (int i = 0; i < 1500 && port == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::string text = hase::testing::ReadFileForTest(out);
    const size_t p = text.find("hase serve: listening on 127.0.0.1:");
    if (p != std::string::npos) port = std::atoi(text.c_str() + p + 35);
  }
  ASSERT_GT(port, 0) << hase::testing::ReadFileForTest(out);
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  const std::string log = dir + "/runs.log";  // outside the full filesystem
  auto submit = [&](int i) {
    json body = {{"key", "t" + std::to_string(i)}, {"model", "resnet50"},
                 {"command", "echo $HASE_TASK_ID >> " + log + "; sleep 0.3"}};
    return c.Post("/v1/tasks", body.dump(), "application/json");
  };
  ASSERT_EQ(submit(0)->status, 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  Fill(state + "/filler");
  std::map<int, int> status;  // key index → HTTP status
  std::string refusal;
  for (int i = 1; i <= 30; ++i) {
    auto a = submit(i);
    ASSERT_TRUE(a);
    status[i] = a->status;
    if (a->status == 503 && refusal.empty()) refusal = a->body;
  }
  int refused = 0, accepted_full = 0;
  for (const auto& [i, s] : status) {
    refused += s == 503;
    accepted_full += s == 201;
    EXPECT_TRUE(s == 201 || s == 503) << "key t" << i << ": " << s;
  }
  std::printf("disk full: %d submits refused with 503, %d accepted (into the journal's existing pages)\n", refused,
              accepted_full);
  ASSERT_GT(refused, 0);
  EXPECT_NE(refusal.find("database or disk is full"), std::string::npos) << refusal;
  json h = json::parse(c.Get("/healthz")->body);
  EXPECT_EQ(h["status"], "degraded") << h.dump();
  EXPECT_NE(h.dump().find("journal"), std::string::npos) << h.dump();
  // Nothing "running" without a process: every running task has its pid file and a live pid.
  for (int round = 0; round < 10; ++round) {
    json tasks = json::parse(c.Get("/v1/tasks")->body)["tasks"];
    for (const json& t : tasks) {
      if (t["state"] != "running") continue;
      const std::string pidfile =
          state + "/exec/" + std::to_string(t["id"].get<int64_t>()) + "-" + std::to_string(t["attempts"].get<int>()) +
          ".pid";
      const std::string text = hase::testing::ReadFileForTest(pidfile);
      if (text.empty()) continue;  // ended meanwhile and the daemon has not seen it yet
      EXPECT_TRUE(::kill(std::atoi(text.c_str()), 0) == 0 ||
                  json::parse(c.Get("/v1/tasks/" + std::to_string(t["id"].get<int64_t>()))->body)["state"] !=
                      "running")
          << t.dump();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // Space returns: /healthz recovers without any write request.
  std::filesystem::remove(state + "/filler");
  bool ok = false;
  for (int i = 0; i < 100 && !ok; ++i) {  // bounded: 5 s
    ok = json::parse(c.Get("/healthz")->body)["status"] == "ok";
    if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(ok) << c.Get("/healthz")->body;
  // Retry the refused ones (as a client would on 503); every key then runs exactly once.
  for (const auto& [i, s] : status) {
    if (s == 503) {
      auto a = submit(i);
      ASSERT_TRUE(a);
      EXPECT_EQ(a->status, 201) << a->body;
    }
  }
  json tasks;
  for (int i = 0; i < 400; ++i) {  // bounded: 20 s
    tasks = json::parse(c.Get("/v1/tasks")->body)["tasks"];
    int done = 0;
    for (const json& t : tasks) done += t["state"] == "succeeded";
    if (done == 31) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(tasks.size(), 31u);
  for (const json& t : tasks) EXPECT_EQ(t["state"], "succeeded") << t.dump();
  std::map<int, int> runs;
  std::ifstream f(log);
  for (int id = 0; f >> id;) ++runs[id];
  EXPECT_EQ(runs.size(), 31u);
  for (const auto& [id, n] : runs) EXPECT_EQ(n, 1) << "task " << id << " ran " << n << " times";
  ::kill(pid, SIGKILL);
  for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i) {
    ::waitpid(pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::umount2(state.c_str(), MNT_DETACH);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
