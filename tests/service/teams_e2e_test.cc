// Teams in the live daemon (docs/teams.md), for real: spawn `hase serve` with a cluster file
// that lists teams, submit over HTTP, read /v1/tasks, /v1/usage, /metrics and `hase usage`,
// kill -9 and restart on the same journal.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

class TeamsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = hase::testing::FreshDir("teams");
    std::ofstream(dir_ + "/cluster.yaml") << "name: teams\n"
                                             "max_tasks_per_gpu: 1\n"
                                             "nodes:\n"
                                             "  - name: a\n"
                                             "    gpus:\n"
                                             "      - {type: A100-SXM4-40GB, count: 2}\n"
                                             "  - name: b\n"
                                             "    gpus:\n"
                                             "      - {type: T4, count: 1}\n"
                                             "teams:\n"
                                             "  - {name: flood, guaranteed_gpus: 1, max_gpus: 2, slurm_account: fl, namespaces: [flood-ns]}\n"
                                             "  - {name: vision, guaranteed_gpus: 1, shares: 2}\n"
                                             "fair_share: {half_life_s: 3600, reference: A100-SXM4-40GB}\n";
    // resnet50 4x slower on the T4: one T4 second is 0.25 A100-equivalent seconds.
    std::ofstream(dir_ + "/latency.csv") << "# model,gpu_type,per_batch_ms,demand,memory_mib\n"
                                            "resnet50,A100-SXM4-40GB,10,0.8,2000\n"
                                            "resnet50,Tesla T4,40,0.8,2000\n";
  }
  void TearDown() override {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
    std::filesystem::remove_all(dir_);
  }
  int Start(int round, const std::string& extra = "") {
    const std::string out = dir_ + "/serve" + std::to_string(round) + ".out";
    const std::string cmd = "exec " + hase::testing::HaseBin() + " serve --config " + dir_ +
                            "/cluster.yaml --listen 127.0.0.1:0 --state " + dir_ + "/state --latency-table " + dir_ +
                            "/latency.csv " + extra + " > " + out + " 2>&1";
    hase::testing::RunCommand("(" + cmd + ") & echo $! > " + dir_ + "/pid");
    int port = 0;
    for (int i = 0; i < 1500 && port == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const std::string text = hase::testing::ReadFileForTest(out);
      const size_t p = text.find("listening on 127.0.0.1:");
      if (p != std::string::npos) port = std::atoi(text.c_str() + p + 23);
    }
    pid_ = std::atoi(hase::testing::ReadFileForTest(dir_ + "/pid").c_str());
    EXPECT_GT(port, 0) << hase::testing::ReadFileForTest(out);
    return port;
  }
  static std::pair<int, json> Call(int port, const std::string& method, const std::string& path,
                                   const json& body = json()) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    auto r = method == "GET" ? c.Get(path) : c.Post(path, body.dump(), "application/json");
    if (!r) return {0, json()};
    json j = json::parse(r->body, nullptr, false);
    return {r->status, j};
  }
  // Polls task `id` until `pred` holds (bounded: 5 s).
  template <typename P>
  static json WaitTask(int port, int64_t id, P pred) {
    json t;
    for (int i = 0; i < 500; ++i) {
      t = Call(port, "GET", "/v1/tasks/" + std::to_string(id)).second;
      if (pred(t)) return t;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return t;
  }
  static json TeamOf(const json& usage, const std::string& team) {
    for (const json& t : usage["teams"]) {
      if (t["team"] == team) return t;
    }
    return json();
  }

  std::string dir_;
  int pid_ = 0;
};

TEST_F(TeamsE2E, QuotaHoldsTheFloodAndTheOtherTeamRunsAtOnce) {
  int port = Start(0);
  ASSERT_GT(port, 0);
  // Flood tasks run 1000 s on an A100 (100 000 batches of 10 ms); vision's 1 s (100 batches).
  const json task{{"model", "resnet50"}, {"batch_size", 8}, {"num_batches", 100000}};
  std::vector<int64_t> flood;
  for (int i = 0; i < 4; ++i) {
    json b = task;
    b["team"] = "flood";
    auto [code, t] = Call(port, "POST", "/v1/tasks", b);
    ASSERT_EQ(code, 201) << t.dump();
    EXPECT_EQ(t["team"], "flood");
    flood.push_back(t["id"].get<int64_t>());
  }
  // A pod of namespace flood-ns is team flood; a task naming none is the default team.
  json pod = task;
  pod["pod"] = "flood-ns/p1";
  auto [pc, pt] = Call(port, "POST", "/v1/tasks", pod);
  ASSERT_EQ(pc, 201) << pt.dump();
  EXPECT_EQ(pt["team"], "flood");
  // An unknown team: one 400 naming the field and the teams.
  json bad = task;
  bad["team"] = "nobody";
  auto [bc, be] = Call(port, "POST", "/v1/tasks", bad);
  EXPECT_EQ(bc, 400);
  EXPECT_EQ(be["error"]["where"], "task field 'team'") << be.dump();
  EXPECT_NE(be["error"]["hint"].get<std::string>().find("flood, vision, default"), std::string::npos) << be.dump();

  // Two flood tasks run (its maximum); the other two wait with the quota as their reason.
  WaitTask(port, flood[1], [](const json& t) { return t["state"] == "running"; });
  const json held = WaitTask(port, flood[3], [](const json& t) { return t.contains("why") && t["why"].is_object() && t["why"]["kind"] == "quota"; });
  EXPECT_EQ(held["state"], "queued") << held.dump();
  ASSERT_EQ(held["why"]["kind"], "quota") << held.dump();
  EXPECT_EQ(held["why"]["team"], "flood");
  EXPECT_EQ(held["why"]["used_gpus"], 2);
  EXPECT_EQ(held["why"]["max_gpus"], 2);
  EXPECT_NE(held["reason"].get<std::string>().find("team flood is at its maximum of 2 GPUs"), std::string::npos);

  // A vision task submitted after the flood runs at once on the GPU the flood may not take.
  json v = task;
  v["team"] = "vision";
  v["num_batches"] = 100;
  auto [vc, vt] = Call(port, "POST", "/v1/tasks", v);
  ASSERT_EQ(vc, 201);
  const int64_t vid = vt["id"].get<int64_t>();
  const json vr = WaitTask(port, vid, [](const json& t) { return t["state"] == "running"; });
  EXPECT_EQ(vr["state"], "running") << vr.dump();
  EXPECT_EQ(vr["gpu"]["node"], "b");  // the T4: the A100s hold the flood's two

  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto [uc, usage] = Call(port, "GET", "/v1/usage");
  ASSERT_EQ(uc, 200);
  EXPECT_EQ(usage["teams_enabled"], true);
  EXPECT_EQ(usage["reference"], "A100-SXM4-40GB");
  const json f = TeamOf(usage, "flood"), vi = TeamOf(usage, "vision");
  ASSERT_FALSE(f.is_null() || vi.is_null()) << usage.dump();
  EXPECT_EQ(f["gpus_in_use"], 2);
  EXPECT_EQ(f["queued"], 3);
  EXPECT_EQ(f["held"], 3);
  EXPECT_EQ(f["slurm_account"], "fl");
  EXPECT_EQ(vi["gpus_in_use"], 1);
  // On A100s an equivalent second is a second; on the T4 a quarter of one (10 vs 40 ms).
  const double fg = f["usage"]["gpu_s"].get<double>(), vg = vi["usage"]["gpu_s"].get<double>();
  EXPECT_GT(fg, 2.0);
  EXPECT_NEAR(f["usage"]["raw_equivalent_s"].get<double>() / fg, 1.0, 1e-6);
  EXPECT_GT(vg, 1.0);
  EXPECT_NEAR(vi["usage"]["raw_equivalent_s"].get<double>() / vg, 0.25, 1e-6);
  EXPECT_LT(f["usage"]["fair_share"].get<double>(), vi["usage"]["fair_share"].get<double>());

  auto metrics = httplib::Client("127.0.0.1", port).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("hase_team_gpus_in_use{team=\"flood\"} 2"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("hase_team_quota_gpus{team=\"flood\",limit=\"max\"} 2"), std::string::npos);
  EXPECT_NE(metrics->body.find("hase_team_usage_equivalent_seconds{team=\"vision\"}"), std::string::npos);

  auto cli = hase::testing::RunCommand(hase::testing::HaseBin() + " usage --url http://127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("A100-SXM4-40GB-equivalent"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("flood"), std::string::npos) << cli.out;

  // A flood task ends: the next flood task takes its place, no more.
  auto [cc, ct] = Call(port, "POST", "/v1/tasks/" + std::to_string(flood[0]) + "/complete", json{{"exit_code", 0}});
  ASSERT_EQ(cc, 200) << ct.dump();
  const json next = WaitTask(port, flood[2], [](const json& t) { return t["state"] == "running"; });
  EXPECT_EQ(next["state"], "running") << next.dump();
  EXPECT_EQ(WaitTask(port, flood[3], [](const json& t) { return t["why"].is_object(); })["state"], "queued");

  // The team is journalled: after kill -9 and a restart the tasks keep it and the quota holds.
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  port = Start(1);
  ASSERT_GT(port, 0);
  const json again = WaitTask(port, flood[3], [](const json& t) { return t["why"].is_object() && t["why"]["kind"] == "quota"; });
  EXPECT_EQ(again["team"], "flood");
  EXPECT_EQ(again["why"]["kind"], "quota") << again.dump();
  EXPECT_EQ(TeamOf(Call(port, "GET", "/v1/usage").second, "flood")["gpus_in_use"], 2);
}

// Three teams, one floods: it borrows every GPU while the others are idle, and each GPU that
// frees goes to a team below its guarantee before the flood's older queued tasks. Three
// A100s (on a T4 the flood's 1000 s tasks would rather wait for an A100).
TEST_F(TeamsE2E, GpusThatFreeUpGoToTeamsBelowTheirGuaranteeFirst) {
  std::ofstream(dir_ + "/cluster.yaml") << "name: three\nmax_tasks_per_gpu: 1\nnodes:\n  - name: a\n    gpus:\n"
                                           "      - {type: A100-SXM4-40GB, count: 3}\n"
                                           "teams:\n  - {name: flood, guaranteed_gpus: 1}\n"
                                           "  - {name: vision, guaranteed_gpus: 1}\n  - {name: nlp, guaranteed_gpus: 1}\n";
  const int port = Start(0);  // policy hase: its reservation yields to the reclaim (team_reclaim.h)
  ASSERT_GT(port, 0);
  auto submit = [&](const std::string& team) {
    auto [code, t] = Call(port, "POST", "/v1/tasks",
                          json{{"model", "resnet50"}, {"batch_size", 8}, {"num_batches", 100000}, {"team", team}});
    EXPECT_EQ(code, 201) << t.dump();
    return t["id"].get<int64_t>();
  };
  std::vector<int64_t> flood;
  for (int i = 0; i < 6; ++i) flood.push_back(submit("flood"));
  for (int i = 0; i < 3; ++i) WaitTask(port, flood[i], [](const json& t) { return t["state"] == "running"; });
  auto usage = Call(port, "GET", "/v1/usage").second;
  EXPECT_EQ(TeamOf(usage, "flood")["gpus_in_use"], 3) << usage.dump();  // borrows all three
  const int64_t v = submit("vision"), n = submit("nlp");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Call(port, "GET", "/v1/tasks/" + std::to_string(v)).second["state"], "queued");
  // A flood task ends: vision (0 of 1 guaranteed) gets the GPU, not flood's task 4 (queued first).
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(Call(port, "POST", "/v1/tasks/" + std::to_string(flood[0]) + "/complete", json{{"exit_code", 0}}).first, 200);
  json vr = WaitTask(port, v, [](const json& t) { return t["state"] == "running"; });
  EXPECT_EQ(vr["state"], "running") << vr.dump();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.0);  // the next pass
  EXPECT_EQ(Call(port, "GET", "/v1/tasks/" + std::to_string(flood[3])).second["state"], "queued");
  // Another ends: nlp's turn.
  ASSERT_EQ(Call(port, "POST", "/v1/tasks/" + std::to_string(flood[1]) + "/complete", json{{"exit_code", 0}}).first, 200);
  json nr = WaitTask(port, n, [](const json& t) { return t["state"] == "running"; });
  EXPECT_EQ(nr["state"], "running") << nr.dump();
  // Each team now holds its guarantee; the flood's queued tasks wait for the next GPU.
  usage = Call(port, "GET", "/v1/usage").second;
  for (const char* team : {"flood", "vision", "nlp"}) EXPECT_EQ(TeamOf(usage, team)["gpus_in_use"], 1) << team;
  EXPECT_EQ(TeamOf(usage, "flood")["queued"], 3);
}

// The live plan knows the quota (issue 27 in `hase serve`): a task its team's max_gpus holds
// back is planned for when the team's first task ends, not on the idle GPU, and its `why` says
// so; the pass then starts it when the plan said. Real processes (--executor) of predicted
// length: 200 batches of 10 ms = 2 s, `sleep 2`.
TEST_F(TeamsE2E, PlanPredictsWhenAQuotaHeldTaskStartsAndThePassStartsItThen) {
  std::ofstream(dir_ + "/cluster.yaml") << "name: q\nmax_tasks_per_gpu: 1\nnodes:\n  - name: a\n    gpus:\n"
                                           "      - {type: A100-SXM4-40GB, count: 3}\n"
                                           "teams:\n  - {name: flood, guaranteed_gpus: 1, max_gpus: 2}\n"
                                           "  - {name: vision, guaranteed_gpus: 1}\n";
  const int port = Start(0, "--executor");
  ASSERT_GT(port, 0);
  auto submit = [&](int batches, const std::string& sleep) {
    auto [code, t] = Call(port, "POST", "/v1/tasks",
                          json{{"model", "resnet50"}, {"batch_size", 8}, {"num_batches", batches}, {"team", "flood"},
                               {"command", "sleep " + sleep}});
    EXPECT_EQ(code, 201) << t.dump();
    return t["id"].get<int64_t>();
  };
  const int64_t f0 = submit(200, "2"), f1 = submit(400, "4"), f2 = submit(100, "1");
  const json r0 = WaitTask(port, f0, [](const json& t) { return t["state"] == "running"; });
  ASSERT_EQ(r0["state"], "running") << r0.dump();
  ASSERT_EQ(WaitTask(port, f1, [](const json& t) { return t["state"] == "running"; })["state"], "running");
  // f2: a GPU is idle, but flood holds its maximum of 2. The plan starts it when f0 ends.
  const json held = WaitTask(port, f2, [](const json& t) {
    return t["why"].is_object() && t["why"]["kind"] == "quota" && t["predicted"]["start_s"].is_number();
  });
  ASSERT_EQ(held["why"]["kind"], "quota") << held.dump();
  EXPECT_EQ(held["why"]["team"], "flood");
  EXPECT_EQ(held["why"]["used_gpus"], 2);
  EXPECT_EQ(held["why"]["max_gpus"], 2);
  EXPECT_NE(held["why"]["text"].get<std::string>().find("team flood is at its maximum of 2 GPUs"), std::string::npos);
  ASSERT_TRUE(held["predicted"]["start_s"].is_number()) << held.dump();
  const double predicted = held["predicted"]["start_s"].get<double>();
  const double f0_started = r0["times"]["started_s"].get<double>();
  EXPECT_NEAR(predicted, f0_started + 2.0, 0.3) << held.dump();  // f0's predicted end, not now
  // What the pass does: f2 starts when f0 has ended, within a pass and a process start.
  const json started = WaitTask(port, f2, [](const json& t) { return t["state"] != "queued"; });
  ASSERT_TRUE(started["times"]["started_s"].is_number()) << started.dump();
  const double actual = started["times"]["started_s"].get<double>();
  EXPECT_NEAR(actual, predicted, 0.75) << "predicted " << predicted << " actual " << actual;
  const json ended0 = Call(port, "GET", "/v1/tasks/" + std::to_string(f0)).second;
  EXPECT_GE(actual, ended0["times"]["ended_s"].get<double>() - 1e-3) << ended0.dump();
  std::printf("quota-held task: predicted start %.3f s after f0 started, actual %.3f s (error %.3f s)\n",
              predicted - f0_started, actual - f0_started, actual - predicted);
}

// Fair share orders the live pass between teams at the same guarantee level (both over their
// guarantee of 0): team a has used the GPU, team b nothing, so b's task, queued after a's,
// goes first; the plan says so (why.kind team_share) and predicts both starts.
TEST_F(TeamsE2E, FairShareOrdersThePassAndThePlanSaysWhy) {
  std::ofstream(dir_ + "/cluster.yaml") << "name: fs\nmax_tasks_per_gpu: 1\nnodes:\n  - name: a\n    gpus:\n"
                                           "      - {type: A100-SXM4-40GB, count: 1}\n"
                                           "teams:\n  - {name: a}\n  - {name: b}\n"
                                           "fair_share: {half_life_s: 3600}\n";
  const int port = Start(0, "--executor");
  ASSERT_GT(port, 0);
  auto submit = [&](const std::string& team, int batches, const std::string& sleep) {
    auto [code, t] = Call(port, "POST", "/v1/tasks",
                          json{{"model", "resnet50"}, {"batch_size", 8}, {"num_batches", batches}, {"team", team},
                               {"command", "sleep " + sleep}});
    EXPECT_EQ(code, 201) << t.dump();
    return t["id"].get<int64_t>();
  };
  const int64_t a1 = submit("a", 200, "2");
  const json r1 = WaitTask(port, a1, [](const json& t) { return t["state"] == "running"; });
  ASSERT_EQ(r1["state"], "running");
  const int64_t a2 = submit("a", 100, "1");
  const int64_t b1 = submit("b", 100, "1");
  const json wa = WaitTask(port, a2, [](const json& t) { return t["why"].is_object() && t["why"]["kind"] == "team_share"; });
  ASSERT_EQ(wa["why"]["kind"], "team_share") << wa.dump();
  EXPECT_EQ(wa["why"]["task"], b1);
  EXPECT_EQ(wa["why"]["team"], "a");
  EXPECT_EQ(wa["why"]["other_team"], "b");
  EXPECT_LT(wa["why"]["fair_share"].get<double>(), wa["why"]["other_fair_share"].get<double>()) << wa.dump();
  EXPECT_NE(wa["why"]["text"].get<std::string>().find("fair-share factor"), std::string::npos) << wa.dump();
  const json wb = Call(port, "GET", "/v1/tasks/" + std::to_string(b1)).second;
  const double pb = wb["predicted"]["start_s"].get<double>(), pa = wa["predicted"]["start_s"].get<double>();
  EXPECT_NEAR(pa - pb, 1.0, 0.05) << wa.dump() << wb.dump();  // a2 after b1's predicted second
  // The pass does what the plan said: b1 first, then a2.
  const json sb = WaitTask(port, b1, [](const json& t) { return t["times"]["started_s"].is_number(); });
  const json sa = WaitTask(port, a2, [](const json& t) { return t["times"]["started_s"].is_number(); });
  ASSERT_TRUE(sb["times"]["started_s"].is_number() && sa["times"]["started_s"].is_number()) << sb.dump() << sa.dump();
  const double ab = sb["times"]["started_s"].get<double>(), aa = sa["times"]["started_s"].get<double>();
  EXPECT_LT(ab, aa);
  EXPECT_NEAR(ab, pb, 0.75);
  EXPECT_NEAR(aa, pa, 0.75);
  std::printf("fair share: b1 predicted %.3f actual %.3f; a2 predicted %.3f actual %.3f (s after a1 started)\n",
              pb - r1["times"]["started_s"].get<double>(), ab - r1["times"]["started_s"].get<double>(),
              pa - r1["times"]["started_s"].get<double>(), aa - r1["times"]["started_s"].get<double>());
}

TEST_F(TeamsE2E, DaemonWithoutTeamsRefusesATeamAndReportsNone) {
  std::ofstream(dir_ + "/cluster.yaml") << "name: plain\nnodes:\n  - name: a\n    gpus:\n      - {type: A100-SXM4-40GB, count: 1}\n";
  const int port = Start(0);
  ASSERT_GT(port, 0);
  auto [code, t] = Call(port, "POST", "/v1/tasks", json{{"model", "resnet50"}, {"team", "vision"}});
  EXPECT_EQ(code, 400);
  EXPECT_NE(t["error"]["message"].get<std::string>().find("no teams configured"), std::string::npos) << t.dump();
  auto [ok, plain] = Call(port, "POST", "/v1/tasks", json{{"model", "resnet50"}});
  ASSERT_EQ(ok, 201);
  EXPECT_FALSE(plain.contains("team")) << plain.dump();  // no team key: as before teams
  auto [uc, usage] = Call(port, "GET", "/v1/usage");
  EXPECT_EQ(uc, 200);
  EXPECT_EQ(usage["teams_enabled"], false);
  EXPECT_TRUE(usage["teams"].empty());
}

}  // namespace
}  // namespace hase::service
