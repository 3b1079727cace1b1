// Teams in the live daemon (docs/teams.md), for real: spawn `hase serve` with a cluster file
// that lists teams, submit over HTTP, read /v1/tasks, /v1/usage, /metrics and `hase usage`,
// kill -9 and restart on the same journal.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "../telemetry/fixture.h"
#include "hase/service/api_auth.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using nlohmann::json;

std::string TokenFingerprintForTest(const std::string& token) { return TokenFingerprint(token); }

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
    // The daemon is not our child (spawned through a shell): retry while it dies and its
    // executor stops writing under --state.
    std::error_code ec;
    for (int i = 0; i < 100; ++i) {
      std::filesystem::remove_all(dir_, ec);
      if (!ec) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
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
                                   const json& body = json(), const std::string& token = "") {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    if (!token.empty()) c.set_bearer_token_auth(token);
    auto r = method == "GET" ? c.Get(path) : method == "DELETE" ? c.Delete(path) : c.Post(path, body.dump(), "application/json");
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
    return t["id"].is_number_integer() ? t["id"].get<int64_t>() : int64_t{-1};
  };
  // One at a time: the queue order of the default objective is by predicted length, so tasks
  // landing in one pass need not start in submission order.
  const int64_t f0 = submit(200, "2");
  ASSERT_GE(f0, 0);
  const json r0 = WaitTask(port, f0, [](const json& t) { return t["state"] == "running"; });
  ASSERT_EQ(r0["state"], "running") << r0.dump();
  const int64_t f1 = submit(400, "4");
  ASSERT_GE(f1, 0);
  ASSERT_EQ(WaitTask(port, f1, [](const json& t) { return t["state"] == "running"; })["state"], "running");
  const int64_t f2 = submit(100, "1");
  ASSERT_GE(f2, 0);
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
    return t["id"].is_number_integer() ? t["id"].get<int64_t>() : int64_t{-1};
  };
  const int64_t a1 = submit("a", 200, "2");
  ASSERT_GE(a1, 0);
  const json r1 = WaitTask(port, a1, [](const json& t) { return t["state"] == "running"; });
  ASSERT_EQ(r1["state"], "running");
  const int64_t a2 = submit("a", 100, "1");
  const int64_t b1 = submit("b", 100, "1");
  ASSERT_GE(a2, 0);
  ASSERT_GE(b1, 0);
  const json wa = WaitTask(port, a2, [](const json& t) { return t["why"].is_object() && t["why"]["kind"] == "team_share"; });
  ASSERT_EQ(wa["why"]["kind"], "team_share") << wa.dump();
  EXPECT_EQ(wa["why"]["task"], b1);
  EXPECT_EQ(wa["why"]["team"], "a");
  EXPECT_EQ(wa["why"]["other_team"], "b");
  ASSERT_TRUE(wa["why"]["fair_share"].is_number() && wa["why"]["other_fair_share"].is_number()) << wa.dump();
  EXPECT_LT(wa["why"]["fair_share"].get<double>(), wa["why"]["other_fair_share"].get<double>()) << wa.dump();
  EXPECT_NE(wa["why"]["text"].get<std::string>().find("fair-share factor"), std::string::npos) << wa.dump();
  std::printf("why: %s\n", wa["why"].dump().c_str());
  const json wb = WaitTask(port, b1, [](const json& t) { return t["predicted"]["start_s"].is_number(); });
  ASSERT_TRUE(wb["predicted"]["start_s"].is_number()) << wb.dump();
  ASSERT_TRUE(wa["predicted"]["start_s"].is_number()) << wa.dump();
  ASSERT_TRUE(wa["why"]["fair_share"].is_number() && wa["why"]["other_fair_share"].is_number()) << wa.dump();
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

// Access follows teams (issue #26 item 4), over real HTTP: a team's token submits only as its
// team and sees, cancels and completes only its tasks; lists filter; GPUs are for admins; the
// audit log names who did what; SIGHUP rotates the tokens without a restart.
TEST_F(TeamsE2E, TeamTokensSeeAndCancelOnlyTheirTeamsTasksAndRotateOnSighup) {
  const std::string admin = "adm1n-0123456789abcdef", alice = "al1ce-0123456789abcdef", bob = "b0b-0123456789abcdef00";
  const std::string alice2 = "al1ce-rotated-0123456789";
  const std::string tokens = dir_ + "/tokens";
  auto write_tokens = [&](const std::string& text) {
    std::ofstream(tokens + ".new") << text;
    ::chmod((tokens + ".new").c_str(), 0600);
    std::filesystem::rename(tokens + ".new", tokens);  // atomically, as a Secret update does
  };
  write_tokens("# the old format: a token alone is an admin token\n" + admin + "\n" + alice +
               " name=alice team=vision\n" + bob + " name=bob team=flood  # flood's pipeline\n");
  const std::string audit = dir_ + "/audit.jsonl";
  const int port = Start(0, "--token-file " + tokens + " --audit-log " + audit);
  ASSERT_GT(port, 0);
  const json task{{"model", "resnet50"}, {"batch_size", 8}, {"num_batches", 100000}};
  // alice submits without a team: vision's; as flood: 403 naming both.
  auto [c1, v1] = Call(port, "POST", "/v1/tasks", task, alice);
  ASSERT_EQ(c1, 201) << v1.dump();
  EXPECT_EQ(v1["team"], "vision");
  json as_flood = task;
  as_flood["team"] = "flood";
  auto [c2, e2] = Call(port, "POST", "/v1/tasks", as_flood, alice);
  EXPECT_EQ(c2, 403) << e2.dump();
  EXPECT_EQ(e2["error"]["code"], "permission_denied");
  EXPECT_NE(e2["error"]["message"].get<std::string>().find("token 'alice' of team vision may not submit as team flood"),
            std::string::npos) << e2.dump();
  auto [c3, f1] = Call(port, "POST", "/v1/tasks", task, bob);
  ASSERT_EQ(c3, 201);
  EXPECT_EQ(f1["team"], "flood");
  const int64_t vid = v1["id"].get<int64_t>(), fid = f1["id"].get<int64_t>();
  // Reads: alice's list has vision's task only; bob's task is 403 to her; admin sees both.
  auto [l1, alist] = Call(port, "GET", "/v1/tasks", json(), alice);
  ASSERT_EQ(l1, 200);
  ASSERT_EQ(alist["tasks"].size(), 1u) << alist.dump();
  EXPECT_EQ(alist["tasks"][0]["id"], vid);
  EXPECT_EQ(Call(port, "GET", "/v1/tasks", json(), admin).second["tasks"].size(), 2u);
  auto [g1, ge] = Call(port, "GET", "/v1/tasks/" + std::to_string(fid), json(), alice);
  EXPECT_EQ(g1, 403) << ge.dump();
  EXPECT_NE(ge["error"]["message"].get<std::string>().find("may not read task " + std::to_string(fid) + " of team flood"),
            std::string::npos) << ge.dump();
  // With team tokens, reading without a token is refused even on loopback.
  EXPECT_EQ(Call(port, "GET", "/v1/tasks").first, 401);
  // The queue plan shows alice her own tasks only.
  json q;
  for (int i = 0; i < 100; ++i) {
    auto [qc, qj] = Call(port, "GET", "/v1/queue", json(), alice);
    q = qj;
    if (qc == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(q["team"], "vision") << q.dump();
  for (const json& t : q["placed"]) EXPECT_EQ(t["id"], vid) << q.dump();
  // Cancel: alice cannot cancel bob's (403), bob can; GPUs are admin only.
  EXPECT_EQ(Call(port, "POST", "/v1/tasks/" + std::to_string(fid) + "/cancel", json::object(), alice).first, 403);
  EXPECT_EQ(Call(port, "DELETE", "/v1/tasks/" + std::to_string(fid), json(), alice).first, 403);
  EXPECT_EQ(Call(port, "GET", "/v1/tasks/" + std::to_string(fid), json(), admin).second["state"], "running");
  auto [cc, cj] = Call(port, "POST", "/v1/tasks/" + std::to_string(fid) + "/cancel", json::object(), bob);
  EXPECT_EQ(cc, 200) << cj.dump();
  EXPECT_EQ(cj["state"], "cancelled");
  auto [dc, dj] = Call(port, "POST", "/v1/gpus/0/drain", json::object(), alice);
  EXPECT_EQ(dc, 403) << dj.dump();
  EXPECT_EQ(Call(port, "POST", "/v1/gpus/0/drain", json::object(), admin).first, 200);
  EXPECT_EQ(Call(port, "POST", "/v1/gpus/0/resume", json::object(), admin).first, 200);

  // Rotation: alice's token replaced; SIGHUP; the old one is refused, the new one works, the
  // others keep working; no restart (same pid, same port).
  write_tokens(admin + " name=ops admin\n" + alice2 + " name=alice team=vision\n" + bob + " name=bob team=flood\n");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  int old_code = 0;
  for (int i = 0; i < 200 && (old_code = Call(port, "GET", "/v1/tasks", json(), alice).first) != 401; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(old_code, 401);
  auto [n1, nlist] = Call(port, "GET", "/v1/tasks", json(), alice2);
  EXPECT_EQ(n1, 200);
  EXPECT_EQ(nlist["tasks"].size(), 1u);
  EXPECT_EQ(Call(port, "GET", "/v1/tasks/" + std::to_string(vid), json(), bob).first, 403);
  // A broken file on SIGHUP leaves the tokens in force and says why.
  write_tokens(alice2 + " name=alice team=nobody\n");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Call(port, "GET", "/v1/tasks", json(), alice2).first, 200);
  EXPECT_EQ(Call(port, "GET", "/v1/tasks", json(), admin).first, 200);
  const std::string out = hase::testing::ReadFileForTest(dir_ + "/serve0.out");
  EXPECT_NE(out.find("token file not reloaded, the previous tokens stay in force"), std::string::npos) << out;
  EXPECT_NE(out.find("team 'nobody', not one of the daemon's teams"), std::string::npos) << out;

  // The audit log: who did what, one JSON line each.
  std::ifstream in(audit);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  auto find = [&](const std::string& who, const std::string& method, const std::string& path, int status) {
    for (const json& l : lines) {
      const json& e = l["event"];
      if (e["who"] == who && e["method"] == method && e["path"] == path && e["status"] == status) return l;
    }
    return json();
  };
  const json sub = find("alice", "POST", "/v1/tasks", 201);
  ASSERT_FALSE(sub.is_null()) << hase::testing::ReadFileForTest(audit);
  EXPECT_EQ(sub["event"]["team"], "vision");
  EXPECT_EQ(sub["event"]["role"], "team");
  EXPECT_EQ(sub["event"]["detail"], "task " + std::to_string(vid) + " team vision");
  EXPECT_TRUE(sub.contains("time"));
  EXPECT_FALSE(find("alice", "POST", "/v1/tasks", 403).is_null());
  EXPECT_FALSE(find("alice", "GET", "/v1/tasks/" + std::to_string(fid), 403).is_null());
  EXPECT_FALSE(find("bob", "POST", "/v1/tasks/" + std::to_string(fid) + "/cancel", 200).is_null());
  EXPECT_FALSE(find("alice", "POST", "/v1/gpus/0/drain", 403).is_null());
  const json drain = find(TokenFingerprintForTest(admin), "POST", "/v1/gpus/0/drain", 200);
  EXPECT_FALSE(drain.is_null());
  EXPECT_EQ(drain["event"]["role"], "admin");
  EXPECT_FALSE(find("unknown-token", "GET", "/v1/tasks", 401).is_null());  // alice's old token
  EXPECT_FALSE(find("anonymous", "GET", "/v1/tasks", 401).is_null());
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
