// What-if (issue #23 item 2): the daemon plans its live queue with GPUs added, a node drained or
// tasks submitted — on a copy, so nothing live changes — over Daemon::PlanWhatIf, POST
// /v1/whatif and `hase simulate --from URL`. Values computed by hand on the 1×A100 + 1×T4
// cluster of live_plan_test.cc.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "hase/base/iso_time.h"
#include "hase/service/api_server.h"
#include "hase/service/daemon.h"
#include "hase/service/extender.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using hase::testing::FakeClock;
using nlohmann::json;

sched::Cluster TwoGpus() { return hase::testing::OneA100OneT4("whatif"); }
std::shared_ptr<const sched::LatencyOracle> Table() { return hase::testing::OneA100OneT4Table(); }
DaemonOptions Opts(const std::string& dir, FakeClock& clock) { return hase::testing::FakeClockOptions(dir, clock); }
TaskSpec Resnet() { return hase::testing::Resnet1000(); }

// The live plan (live_plan_test.cc): 1 runs on a/0 [T, T+10], 4 on b/0 [T, T+35]; queued 2, 3,
// 5 planned on a/0 [10,20], [20,30], [30,40]; ETA T+40.
struct Live {
  std::string dir;
  FakeClock clock;
  double T = 0;
  std::unique_ptr<Daemon> d;
  explicit Live(const std::string& tag) : dir(hase::testing::FreshDir(tag)) {
    T = clock.now;
    auto made = Daemon::Create(TwoGpus(), Table(), Opts(dir, clock), nullptr);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    d = std::move(*made);
    EXPECT_TRUE(d->Start().ok());
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(d->Submit(Resnet()).ok());
    d->RunPassForTest();
    // The scheduler thread may be planning too (a plan superseded by a newer one is dropped):
    // wait, bounded, for the plan of this state.
    for (int i = 0; i < 500; ++i) {
      std::shared_ptr<const LiveQueuePlan> p = d->Plan();
      if (p && p->tasks.size() == 3 && p->running == 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(d->Plan() && d->Plan()->tasks.size() == 3);
  }
  ~Live() {
    d.reset();
    std::filesystem::remove_all(dir);
  }
};

TEST(WhatIf, EmptyChangeIsTheLivePlan) {
  Live l("wi-empty");
  auto r = l.d->PlanWhatIf(WhatIf{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::shared_ptr<const LiveQueuePlan> live = l.d->Plan();
  EXPECT_NEAR(r->plan->eta_s - l.T, 40.0, 1e-6);
  EXPECT_DOUBLE_EQ(r->plan->eta_s, live->eta_s);
  EXPECT_DOUBLE_EQ(r->baseline->eta_s, live->eta_s);
  ASSERT_EQ(r->plan->tasks.size(), live->tasks.size());
  for (size_t k = 0; k < live->tasks.size(); ++k) {
    EXPECT_EQ(r->plan->tasks[k].task_id, live->tasks[k].task_id);
    EXPECT_EQ(r->plan->tasks[k].gpu.id, live->tasks[k].gpu.id);
    EXPECT_DOUBLE_EQ(r->plan->tasks[k].start_s, live->tasks[k].start_s);
    EXPECT_DOUBLE_EQ(r->plan->tasks[k].end_s, live->tasks[k].end_s);
    EXPECT_EQ(r->plan->tasks[k].reason.text, live->tasks[k].reason.text);
  }
}

// One more A100 (c/0, idle): 2 starts on it now [T, T+10]; 3 and 5 wait for an A100 (T+20 on
// either, T+70 on the T4) and run at T+10 on a/0 and c/0 [10, 20]. The queue then drains when
// task 4 ends on the T4: ETA T+35, 5 s earlier than T+40.
TEST(WhatIf, AddingAnA100LowersTheEtaByFiveSeconds) {
  Live l("wi-add");
  WhatIf w;
  w.add_gpus.push_back({"A100-SXM4-40GB", 1, "c", 0});
  auto r = l.d->PlanWhatIf(w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->added.size(), 1u);
  EXPECT_EQ(r->added[0].id, 2);
  EXPECT_EQ(r->added[0].node, "c");
  EXPECT_EQ(r->added[0].index, 0);
  EXPECT_EQ(r->added[0].type, "A100-SXM4-40GB");
  EXPECT_NEAR(r->baseline->eta_s - l.T, 40.0, 1e-6);
  EXPECT_NEAR(r->plan->eta_s - l.T, 35.0, 1e-6);
  EXPECT_NEAR(r->plan->eta_s - r->baseline->eta_s, -5.0, 1e-6);
  ASSERT_EQ(r->plan->tasks.size(), 3u);
  const PlanEntry* t2 = r->plan->Find(2);
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(t2->gpu.node, "c");
  EXPECT_NEAR(t2->start_s - l.T, 0.0, 1e-6);
  EXPECT_NEAR(t2->end_s - l.T, 10.0, 1e-6);
  EXPECT_EQ(t2->reason.kind, "starts_now");
  std::set<std::string> nodes;
  for (int64_t id : {3, 5}) {
    const PlanEntry* e = r->plan->Find(id);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->gpu.type, "A100-SXM4-40GB");
    nodes.insert(e->gpu.node);
    EXPECT_NEAR(e->start_s - l.T, 10.0, 1e-6) << id;
    EXPECT_NEAR(e->end_s - l.T, 20.0, 1e-6) << id;
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"a", "c"}));
  // The critical path is now task 4 on the T4.
  EXPECT_EQ(r->plan->critical_gpu.node, "b");
  ASSERT_FALSE(r->plan->critical_path.empty());
  EXPECT_EQ(r->plan->critical_path.back().task_id, 4);
  // Nothing live changed: the live plan and the daemon's GPUs are as before.
  EXPECT_NEAR(l.d->Plan()->eta_s - l.T, 40.0, 1e-6);
  EXPECT_EQ(l.d->Gpus().size(), 2u);
  EXPECT_EQ(l.d->List(std::nullopt, 100).size(), 5u);
}

// One A100 (a/0), three equal tasks: 1 runs [T, T+10], 2 and 3 wait ([10,20], [20,30]: ETA
// T+30). With a second A100 c/0, 2 starts on it now [0,10] and 3 takes a/0 when 1 ends [10,20]:
// ETA T+20, exactly one task's run time (10 s) earlier.
TEST(WhatIf, SecondGpuOfOneSavesOneRunTime) {
  const std::string dir = hase::testing::FreshDir("wi-one");
  FakeClock clock;
  const double T = clock.now;
  sched::Cluster one;
  one.name = "one";
  one.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555}};
  one.gpus = {{0, "a", 0, 0, 40960, 1}};
  auto made = Daemon::Create(one, Table(), Opts(dir, clock), nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(d->Submit(Resnet()).ok());
  d->RunPassForTest();
  WhatIf w;
  w.add_gpus.push_back({"A100-SXM4-40GB", 1, "c", 0});
  auto r = d->PlanWhatIf(w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->baseline->eta_s - T, 30.0, 1e-6);
  const PlanEntry* t2 = r->plan->Find(2);
  const PlanEntry* t3 = r->plan->Find(3);
  ASSERT_TRUE(t2 && t3);
  EXPECT_EQ(t2->gpu.node, "c");
  EXPECT_NEAR(t2->start_s - T, 0.0, 1e-6);
  EXPECT_EQ(t3->gpu.node, "a");
  EXPECT_NEAR(t3->start_s - T, 10.0, 1e-6);
  EXPECT_NEAR(t3->end_s - T, 20.0, 1e-6);
  EXPECT_NEAR(r->plan->eta_s - T, 20.0, 1e-6);
  d.reset();
  std::filesystem::remove_all(dir);
}

// Draining node a: task 1 finishes there (T+10), nothing new starts there, so 2, 3 and 5 move
// to the T4 after task 4: [35,70], [70,105], [105,140]. ETA T+140 (+100 s).
TEST(WhatIf, DrainingANodeMovesItsPlannedTasks) {
  Live l("wi-drain");
  const std::shared_ptr<const LiveQueuePlan> live = l.d->Plan();  // held: the thread may replace it
  for (const PlanEntry& e : live->tasks) EXPECT_EQ(e.gpu.node, "a");
  WhatIf w;
  w.drain_nodes = {"a"};
  auto r = l.d->PlanWhatIf(w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->drained.size(), 1u);
  EXPECT_EQ(r->drained[0].node, "a");
  EXPECT_TRUE(r->requeued.empty());
  const int64_t ids[] = {2, 3, 5};
  for (int k = 0; k < 3; ++k) {
    const PlanEntry* e = r->plan->Find(ids[k]);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->gpu.node, "b") << ids[k];
    EXPECT_EQ(e->gpu.type, "T4");
    EXPECT_NEAR(e->start_s - l.T, 35.0 + 35.0 * k, 1e-6) << ids[k];
    EXPECT_NEAR(e->end_s - l.T, 70.0 + 35.0 * k, 1e-6) << ids[k];
  }
  EXPECT_NEAR(r->plan->eta_s - l.T, 140.0, 1e-6);
  // Task 1 still runs to its end on a/0.
  bool one = false;
  for (const LiveQueuePlan::Placed& p : r->plan->placed) {
    if (p.task_id != 1) continue;
    one = true;
    EXPECT_NEAR(p.end_s - l.T, 10.0, 1e-6);
  }
  EXPECT_TRUE(one);
  EXPECT_NEAR(l.d->Plan()->eta_s - l.T, 40.0, 1e-6);
  EXPECT_TRUE(l.d->Gpus()[0].drained == false);
}

// `rr` binds to local queues: 1 and 3 and 5 go to a/0 (1 runs, 3 and 5 bound), 2 and 4 to b/0.
// Draining a puts 3 and 5 back in the queue (as DrainNode does); they follow 2 and 4 on the T4:
// 2 [0,35], 4 [35,70], then 3 [70,105] and 5 [105,140]: ETA T+140 (live: 5 ends on a/0 at T+30,
// 4 on b/0 at T+70).
TEST(WhatIf, DrainPutsBoundTasksBackInTheQueue) {
  const std::string dir = hase::testing::FreshDir("wi-bound");
  FakeClock clock;
  const double T = clock.now;
  DaemonOptions o = Opts(dir, clock);
  o.policy = "rr";
  auto made = Daemon::Create(TwoGpus(), Table(), o, nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(d->Submit(Resnet()).ok());
  d->RunPassForTest();
  ASSERT_EQ(d->Get(3)->state, TaskState::kBound);
  ASSERT_EQ(d->Get(3)->gpu, 0);
  ASSERT_EQ(d->Get(5)->gpu, 0);
  WhatIf w;
  w.drain_gpus = {"a/0"};
  auto r = d->PlanWhatIf(w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->baseline->eta_s - T, 70.0, 1e-6);
  EXPECT_EQ(r->requeued, (std::vector<int64_t>{3, 5}));
  ASSERT_EQ(r->plan->tasks.size(), 2u);
  EXPECT_EQ(r->plan->tasks[0].task_id, 3);
  EXPECT_EQ(r->plan->tasks[0].gpu.node, "b");
  EXPECT_NEAR(r->plan->tasks[0].start_s - T, 70.0, 1e-6);
  EXPECT_EQ(r->plan->tasks[1].task_id, 5);
  EXPECT_NEAR(r->plan->tasks[1].end_s - T, 140.0, 1e-6);
  EXPECT_NEAR(r->plan->eta_s - T, 140.0, 1e-6);
  EXPECT_EQ(r->plan->bound, 1);  // 4 stays bound on b/0
  EXPECT_EQ(d->Get(3)->state, TaskState::kBound);  // live: unchanged
  d.reset();
  std::filesystem::remove_all(dir);
}

// Two more tasks (ids 6, 7): a/0 after 5 ends them at T+50 and T+60, before the T4 could (T+70).
TEST(WhatIf, SubmittedTasksJoinThePlan) {
  Live l("wi-submit");
  WhatIf w;
  w.submit = {Resnet(), Resnet()};
  auto r = l.d->PlanWhatIf(w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->submitted, (std::vector<int64_t>{6, 7}));
  ASSERT_EQ(r->plan->tasks.size(), 5u);
  const PlanEntry* t6 = r->plan->Find(6);
  const PlanEntry* t7 = r->plan->Find(7);
  ASSERT_TRUE(t6 && t7);
  EXPECT_NEAR(t6->start_s - l.T, 40.0, 1e-6);
  EXPECT_NEAR(t6->end_s - l.T, 50.0, 1e-6);
  EXPECT_NEAR(t7->end_s - l.T, 60.0, 1e-6);
  EXPECT_EQ(t7->gpu.node, "a");
  EXPECT_NEAR(r->plan->eta_s - l.T, 60.0, 1e-6);
  EXPECT_FALSE(l.d->Get(6).has_value());  // nothing journalled
}

TEST(WhatIf, UnknownNodeGpuTypeAndModelAreClearErrors) {
  Live l("wi-err");
  WhatIf w;
  w.drain_nodes = {"n9"};
  auto r = l.d->PlanWhatIf(w);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound());
  EXPECT_EQ(r.status().message(), "no node 'n9'");
  EXPECT_EQ(r.status().hint(), "the cluster's nodes: a, b");
  w = WhatIf{};
  w.drain_gpus = {"a/7"};
  r = l.d->PlanWhatIf(w);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound());
  w = WhatIf{};
  w.add_gpus.push_back({"H900", 2, "x", 0});
  r = l.d->PlanWhatIf(w);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound());
  EXPECT_EQ(r.status().message(), "unknown GPU type 'H900'");
  EXPECT_NE(r.status().hint().find("A100-SXM4-40GB, T4"), std::string::npos) << r.status().hint();
  w = WhatIf{};
  TaskSpec bad = Resnet();
  bad.model = "nosuchmodel";
  w.submit = {bad};
  r = l.d->PlanWhatIf(w);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_NE(r.status().where().find("submit[0]"), std::string::npos) << r.status().ToString();
}

TEST(WhatIf, BodyDecoding) {
  auto w = WhatIfFromJson(json::parse(
      R"({"add_gpus":[{"type":"T4","count":4,"node":"new-0"}],"drain_nodes":["n3"],"drain_gpus":[3,"n2/1"],
          "submit":[{"model":"resnet50","num_batches":10}]})"));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->add_gpus[0].count, 4);
  EXPECT_EQ(w->add_gpus[0].node, "new-0");
  EXPECT_EQ(w->drain_gpus, (std::vector<std::string>{"3", "n2/1"}));
  EXPECT_EQ(w->submit[0].num_batches, 10);
  auto back = WhatIfFromJson(WhatIfToJson(*w));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->submit[0].model, "resnet50");
  auto bad = WhatIfFromJson(json::parse(R"({"add_gpu":[]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "body field 'add_gpu'");
  bad = WhatIfFromJson(json::parse(R"({"add_gpus":[{"type":"T4","count":0}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "must be from 1 to 10000, not 0");
  bad = WhatIfFromJson(json::parse(R"({"submit":[{"num_batches":1}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("submit[0]"), std::string::npos) << bad.status().ToString();
}

constexpr const char* kToken = "0123456789abcdef0123456789abcdef";

// POST /v1/whatif and `hase simulate --from` against a daemon serving HTTP; the live state
// (GET /v1/queue, /v1/tasks, /v1/gpus) is byte-identical before and after.
TEST(WhatIf, RestAndCliAgainstARealDaemon) {
  Live l("wi-rest");
  Extender ext(*l.d);
  ApiServerOptions ao;
  ao.tokens = {kToken};
  ApiServer api(*l.d, ext, ao);
  auto port = api.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  api.Start();
  httplib::Client c("127.0.0.1", *port);
  c.set_read_timeout(30, 0);
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kToken}};
  // The live views. The scheduler thread may replan the same state meanwhile (it passes after
  // submissions): only the plan's own wall time, compute_ms, may differ then.
  auto snapshot = [&] {
    std::string s;
    for (const char* p : {"/v1/queue", "/v1/tasks", "/v1/gpus"}) {
      auto res = c.Get(p);
      EXPECT_TRUE(res);
      EXPECT_EQ(res->status, 200) << p;
      json j = json::parse(res->body);
      if (j.contains("plan")) j["plan"].erase("compute_ms");
      s += j.dump() + "\n";
    }
    return s;
  };
  const std::string before = snapshot();
  EXPECT_NE(before.find("\"queued\":3"), std::string::npos);

  auto res = c.Post("/v1/whatif", auth, R"({"add_gpus":[{"type":"A100-SXM4-40GB","count":1,"node":"c"}]})",
                    "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json q = json::parse(res->body);
  EXPECT_NEAR(q["eta_s"].get<double>() - l.T, 35.0, 1e-6);
  EXPECT_NEAR(q["whatif"]["baseline_eta_s"].get<double>() - l.T, 40.0, 1e-6);
  EXPECT_NEAR(q["whatif"]["eta_change_s"].get<double>(), -5.0, 1e-6);
  EXPECT_EQ(q["whatif"]["added_gpus"][0],
            (json{{"id", 2}, {"node", "c"}, {"index", 0}, {"type", "A100-SXM4-40GB"}}));
  EXPECT_EQ(q["tasks"][0]["predicted"]["gpu"]["node"], "c");
  EXPECT_EQ(q["tasks"][0]["predicted"]["start"], IsoUtc(l.T));
  res = c.Post("/v1/whatif", auth, R"({"drain_nodes":["a"],"submit":[{"model":"resnet50","num_batches":1000}]})",
               "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  q = json::parse(res->body);
  EXPECT_EQ(q["whatif"]["submitted"], json::array({6}));
  EXPECT_EQ(q["tasks"].back()["id"], 6);
  EXPECT_EQ(q["tasks"].back()["whatif"], true);
  // 2, 3, 5, 6 one after another on the T4 from T+35: ETA T+175.
  EXPECT_NEAR(q["eta_s"].get<double>() - l.T, 175.0, 1e-6);
  // Errors: 401 without the token, 404 for an unknown node, 400 for a bad body.
  res = c.Post("/v1/whatif", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = c.Post("/v1/whatif", auth, R"({"drain_nodes":["n9"]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["error"]["message"], "no node 'n9'");
  res = c.Post("/v1/whatif", auth, R"({"add_gpus":[{"count":2}]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(l.d->List(std::nullopt, 100).size(), 5u);

  // The CLI.
  const std::string tokens = l.dir + "/tokens";
  std::ofstream(tokens) << kToken << "\n";
  ::chmod(tokens.c_str(), 0600);
  const std::string from = fmt::format(" simulate --from http://127.0.0.1:{} --token-file {}", *port, tokens);
  hase::testing::CommandResult out =
      hase::testing::RunCommand(hase::testing::HaseBin() + from + " --add-gpus A100-SXM4-40GB:1@c");
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("what-if: added 1 GPU(s): c/0 A100-SXM4-40GB"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("queue ETA: " + IsoUtc(l.T + 35) + " (in 35 s); without the change " + IsoUtc(l.T + 40) +
                         " (in 40 s): -5.0 s"),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find(fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24} {}", 2, "resnet50", "queued",
                                     "c/0 A100-SXM4-40GB", IsoUtc(l.T), IsoUtc(l.T + 10),
                                     "planned to start now on GPU c/0 (A100-SXM4-40GB) (the next pass places it)")),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find(fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24}", 4, "resnet50", "running", "b/0 T4",
                                     IsoUtc(l.T), IsoUtc(l.T + 35))),
            std::string::npos)
      << out.out;
  // --workload: its tasks are submitted in the what-if; --format json is the daemon's answer.
  const std::string wl = l.dir + "/more.yaml";
  std::ofstream(wl) << "tasks:\n  - {name: x1, model: resnet50, batch_size: 1, num_batches: 1000, arrival_s: 0}\n"
                       "  - {name: x2, model: resnet50, batch_size: 1, num_batches: 1000, arrival_s: 0}\n";
  out = hase::testing::RunCommand(hase::testing::HaseBin() + from + " --drain-node b --workload " + wl +
                                  " --format json");
  ASSERT_EQ(out.exit_code, 0) << out.err;
  json j = json::parse(out.out);
  EXPECT_EQ(j["whatif"]["submitted"], json::array({6, 7}));
  EXPECT_EQ(j["whatif"]["drained_gpus"][0]["node"], "b");
  // T4 drained: 4 finishes there (T+35); 2, 3, 5, 6, 7 run on the A100 back to back to T+60.
  EXPECT_NEAR(j["eta_s"].get<double>() - l.T, 60.0, 1e-6);
  // Errors: one line, non-zero exit.
  out = hase::testing::RunCommand(hase::testing::HaseBin() + from + " --drain-node n9");
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("hase: error: not found: drain_nodes: POST /v1/whatif answered HTTP 404: no node 'n9' "
                         "(the cluster's nodes: a, b)"),
            std::string::npos)
      << out.err;
  out = hase::testing::RunCommand(hase::testing::HaseBin() + from + " --add-gpus H900:2");
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("unknown GPU type 'H900'"), std::string::npos) << out.err;
  out = hase::testing::RunCommand(hase::testing::HaseBin() +
                                  fmt::format(" simulate --from http://127.0.0.1:{} --add-gpus T4:1", *port));
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("HTTP 401"), std::string::npos) << out.err;
  EXPECT_NE(out.err.find("--token-file"), std::string::npos) << out.err;
  out = hase::testing::RunCommand(hase::testing::HaseBin() + " simulate --from http://127.0.0.1:1");
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("cannot reach hase at http://127.0.0.1:1"), std::string::npos) << out.err;
  out = hase::testing::RunCommand(hase::testing::HaseBin() + from + " --add-gpus A100:x");
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("--add-gpus"), std::string::npos) << out.err;
  EXPECT_EQ(snapshot(), before);
  api.Stop();
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// `hase simulate --from-state DIR`: a `hase serve` (real predictor, zoo resnet50) stopped with
// three equal tasks, one running; offline, one more A100 starts task 2 at once, so the queue
// ETA drops by exactly one task's run time d (baseline: 1, then 2 and 3 back to back on a/0 →
// end1 + 2d; with c/0: 2 on c/0 [now, now + d], 3 on a/0 [end1, end1 + d] → end1 + d, as
// end1 < now + d). The journal is only read.
TEST(WhatIf, FromStateOfAStoppedDaemon) {
  const std::string dir = hase::testing::FreshDir("wi-state");
  std::ofstream(dir + "/cluster.yaml") << "name: one\nmax_tasks_per_gpu: 1\nnodes:\n  - name: a\n    gpus:\n"
                                          "      - {type: A100-SXM4-40GB, count: 1}\n";
  const std::string out = dir + "/serve.out";
  auto r = hase::testing::RunCommand("(exec " + hase::testing::HaseBin() + " serve --config " + dir +
                                     "/cluster.yaml --listen 127.0.0.1:0 --state " + dir + "/state > " + out +
                                     " 2>&1) & echo $! > " + dir + "/pid");
  ASSERT_EQ(r.exit_code, 0);
  int port = 0;
  for (int i = 0; i < 3000 && port == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::string text = ReadAll(out);
    const size_t p = text.find("listening on 127.0.0.1:");
    if (p != std::string::npos) port = std::atoi(text.c_str() + p + 23);
  }
  const int pid = std::atoi(ReadAll(dir + "/pid").c_str());
  ASSERT_GT(port, 0) << ReadAll(out);
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  for (int i = 0; i < 3; ++i) {
    auto res = c.Post("/v1/tasks", R"({"model":"resnet50","batch_size":8,"num_batches":20000})", "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }
  for (int i = 0; i < 500; ++i) {  // task 1 placed
    auto res = c.Get("/v1/tasks/1");
    if (res && json::parse(res->body)["state"] == "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string journal = ReadAll(dir + "/state/hase.db");
  ASSERT_FALSE(journal.empty());

  const std::string cmd = hase::testing::HaseBin() + " simulate --from-state " + dir + "/state --config " + dir +
                          "/cluster.yaml --format json";
  hase::testing::CommandResult o = hase::testing::RunCommand(cmd + " --add-gpus A100-SXM4-40GB:1@c");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = json::parse(o.out);
  EXPECT_EQ(j["running"], 1);
  ASSERT_EQ(j["tasks"].size(), 2u);
  const json& t2 = j["tasks"][0]["predicted"];
  const json& t3 = j["tasks"][1]["predicted"];
  const double d = t2["end_s"].get<double>() - t2["start_s"].get<double>();
  EXPECT_GT(d, 1.0);
  EXPECT_EQ(t2["gpu"]["node"], "c");
  EXPECT_NEAR(t2["start_s"].get<double>(), j["planned_at_s"].get<double>(), 1e-3);
  EXPECT_EQ(t3["gpu"]["node"], "a");
  EXPECT_NEAR(t3["end_s"].get<double>() - t3["start_s"].get<double>(), d, 1e-3);
  EXPECT_NEAR(j["whatif"]["eta_change_s"].get<double>(), -d, 1e-3) << o.out;
  EXPECT_NEAR(j["eta_s"].get<double>(), t3["end_s"].get<double>(), 1e-3);
  // Errors: an unknown node; no --config; the journal untouched.
  o = hase::testing::RunCommand(cmd + " --drain-node n9");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("hase: error: not found: drain_nodes: no node 'n9' (the cluster's nodes: a)"), std::string::npos)
      << o.err;
  o = hase::testing::RunCommand(hase::testing::HaseBin() + " simulate --from-state " + dir + "/state");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("--from-state needs the daemon's cluster file"), std::string::npos) << o.err;
  EXPECT_EQ(ReadAll(dir + "/state/hase.db"), journal);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
