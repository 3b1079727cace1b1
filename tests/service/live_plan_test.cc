// The live plan (issue #23 item 1; issue #22 item 6): every queued task's planned GPU, start,
// end and structured reason, the queue's ETA and critical path — computed by hand here on a
// 1×A100 + 1×T4 cluster — over the daemon, REST and `hase queue`.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "../telemetry/http_stub.h"
#include "hase/base/iso_time.h"
#include "hase/sched/registry.h"
#include "hase/service/api_server.h"
#include "hase/service/daemon.h"
#include "hase/service/extender.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using hase::testing::FakeClock;
using hase::testing::HttpStub;
using nlohmann::json;

sched::Cluster TwoGpus() { return hase::testing::OneA100OneT4("plan"); }

// The shared table (service_fixture.h) and bigmodel: 30 000 MiB, too large for the T4.
std::shared_ptr<const sched::LatencyOracle> Table() {
  auto o = hase::testing::OneA100OneT4Table();
  o->Set("bigmodel", "A100-SXM4-40GB", 50, 1.0, 30000);
  o->Set("bigmodel", "T4", 200, 1.0, 30000);
  return o;
}

DaemonOptions Opts(const std::string& dir, FakeClock& clock) { return hase::testing::FakeClockOptions(dir, clock); }
TaskSpec Resnet() { return hase::testing::Resnet1000(); }

// Five equal tasks at T. By hand (earliest predicted completion, queue order = submission):
//   1 → A100 [T, T+10]; 2 waits for the A100 (ends T+20 there, T+35 on the T4); 3 waits
//   (A100 after 2: T+30 < T+35); 4 → T4 [T, T+35] (A100 after 3: T+40 > T+35); 5: no GPU is
//   free now, so it reserves the A100 (T+40 < T4 after 4: T+70) from T+30 (EASY backfilling).
//   Plan: 2 [10,20], 3 [20,30], 5 [30,40] on a/0, each behind the one before; ETA T+40;
//   critical path 1 → 2 → 3 → 5 on a/0.
TEST(LivePlan, HandComputedPlanEtaAndCriticalPath) {
  const std::string dir = hase::testing::FreshDir("plan");
  FakeClock clock;
  const double T = clock.now;
  auto made = Daemon::Create(TwoGpus(), Table(), Opts(dir, clock), nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  // Journalled before Start(), which loads them: the scheduler thread's first pass sees all
  // five (submitted after Start, a pass of the thread between two submits could place task 2
  // before 3-5 exist, and the plan would differ from the one worked out by hand).
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(d->Submit(Resnet()).ok());
  ASSERT_TRUE(d->Start().ok());
  d->RunPassForTest();
  EXPECT_EQ(d->Get(1)->state, TaskState::kRunning);
  EXPECT_EQ(d->Get(4)->state, TaskState::kRunning);
  EXPECT_EQ(d->Get(4)->gpu, 1);

  std::shared_ptr<const LiveQueuePlan> plan = d->Plan();
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->complete);
  EXPECT_NEAR(plan->eta_s - T, 40.0, 1e-6);
  ASSERT_EQ(plan->tasks.size(), 3u);
  const int64_t ids[] = {2, 3, 5};
  const int64_t behind[] = {1, 2, 3};
  for (int k = 0; k < 3; ++k) {
    const PlanEntry& e = plan->tasks[k];
    SCOPED_TRACE(e.task_id);
    EXPECT_EQ(e.task_id, ids[k]);
    EXPECT_TRUE(e.exact);
    EXPECT_EQ(e.gpu.id, 0);
    EXPECT_EQ(e.gpu.node, "a");
    EXPECT_EQ(e.gpu.index, 0);
    EXPECT_EQ(e.gpu.type, "A100-SXM4-40GB");
    EXPECT_NEAR(e.start_s - T, 10.0 * (k + 1), 1e-6);
    EXPECT_NEAR(e.end_s - T, 10.0 * (k + 2), 1e-6);
    EXPECT_EQ(e.reason.task, behind[k]);
    EXPECT_NEAR(e.reason.until_s - T, 10.0 * (k + 1), 1e-6);
    if (k < 2) {
      EXPECT_EQ(e.reason.kind, "behind");
      EXPECT_EQ(e.reason.text, "waiting behind task " + std::to_string(behind[k]) +
                                   " on GPU a/0 (A100-SXM4-40GB) until " + IsoUtc(T + 10.0 * (k + 1)));
    } else {
      EXPECT_EQ(e.reason.kind, "holds_reservation");
      EXPECT_EQ(e.reason.text, "holds the reservation of GPU a/0 (A100-SXM4-40GB) from " + IsoUtc(T + 30) +
                                   ", when task 3 ends there");
    }
  }
  ASSERT_EQ(plan->critical_path.size(), 4u);
  EXPECT_EQ(plan->critical_path[0].task_id, 1);
  EXPECT_EQ(plan->critical_path[0].state, "running");
  EXPECT_EQ(plan->critical_path[3].task_id, 5);
  EXPECT_NEAR(plan->critical_path[3].end_s - T, 40.0, 1e-6);
  EXPECT_EQ(plan->critical_gpu.node, "a");
  EXPECT_EQ(plan->running, 2);
  // A pass that changes nothing keeps the plan (DaemonOptions::plan_refresh_s).
  d->RunPassForTest();
  EXPECT_EQ(d->Plan(), plan);

  // Task 1 ends at T+10 as predicted: 2 starts; the rest of the plan holds.
  clock.now = T + 10;
  ASSERT_TRUE(d->Complete(1, 0).ok());
  d->RunPassForTest();
  EXPECT_EQ(d->Get(2)->state, TaskState::kRunning);
  plan = d->Plan();
  ASSERT_EQ(plan->tasks.size(), 2u);
  EXPECT_EQ(plan->tasks[0].task_id, 3);
  EXPECT_NEAR(plan->tasks[0].start_s - T, 20.0, 1e-6);
  EXPECT_NEAR(plan->tasks[1].end_s - T, 40.0, 1e-6);
  EXPECT_NEAR(plan->eta_s - T, 40.0, 1e-6);
  d.reset();
  std::filesystem::remove_all(dir);
}

// Every policy of the registry plans: a GPU, a finite start and end for each queued task, an
// ETA no earlier than any of them.
TEST(LivePlan, EveryPolicyPlansEveryQueuedTask) {
  for (const std::string& policy : sched::PolicyNames()) {
    SCOPED_TRACE(policy);
    const std::string dir = hase::testing::FreshDir("planpol");
    FakeClock clock;
    DaemonOptions o = Opts(dir, clock);
    o.policy = policy;
    auto made = Daemon::Create(TwoGpus(), Table(), o, nullptr);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    std::unique_ptr<Daemon> d = std::move(*made);
    ASSERT_TRUE(d->Start().ok());
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(d->Submit(Resnet()).ok());
    d->RunPassForTest();
    std::shared_ptr<const LiveQueuePlan> plan = d->Plan();
    ASSERT_TRUE(plan);
    EXPECT_TRUE(std::isfinite(plan->eta_s));
    for (const PlanEntry& e : plan->tasks) {
      EXPECT_GE(e.gpu.id, 0) << e.task_id << ": " << e.reason.text;
      EXPECT_TRUE(std::isfinite(e.start_s) && std::isfinite(e.end_s)) << e.task_id << ": " << e.reason.text;
      EXPECT_LE(e.end_s, plan->eta_s + 1e-6);
      EXPECT_FALSE(e.reason.text.empty());
    }
    d.reset();
    std::filesystem::remove_all(dir);
  }
}

// The budget cut short: the forward run stops after its first pass and the waiting tasks are
// list-scheduled behind what the GPUs' timelines hold — here the same figures as the exact plan
// (A100 free at T+10, T4 at T+35: 2, 3, 5 each end earliest on the A100), marked not exact.
TEST(LivePlan, BudgetReachedExtrapolatesAndSaysSo) {
  const std::string dir = hase::testing::FreshDir("planbudget");
  FakeClock clock;
  const double T = clock.now;
  DaemonOptions o = Opts(dir, clock);
  o.plan_budget_ms = 1e-9;
  auto made = Daemon::Create(TwoGpus(), Table(), o, nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(d->Submit(Resnet()).ok());
  d->RunPassForTest();
  std::shared_ptr<const LiveQueuePlan> plan = d->Plan();
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->complete);
  ASSERT_EQ(plan->tasks.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const PlanEntry& e = plan->tasks[k];
    SCOPED_TRACE(e.task_id);
    EXPECT_FALSE(e.exact);
    EXPECT_EQ(e.gpu.id, 0);
    EXPECT_NEAR(e.start_s - T, 10.0 * (k + 1), 1e-6);
    EXPECT_NEAR(e.end_s - T, 10.0 * (k + 2), 1e-6);
    EXPECT_EQ(e.reason.kind, "extrapolated");
    EXPECT_NE(e.reason.text.find("beyond the plan's budget"), std::string::npos) << e.reason.text;
  }
  EXPECT_NEAR(plan->eta_s - T, 40.0, 1e-6);
  EXPECT_EQ(PlannedJson(plan->tasks[0])["source"], "extrapolated");
  d.reset();
  std::filesystem::remove_all(dir);
}

// Only failed GPUs could host it: the reason says so (not "can never run").
TEST(LivePlan, FailedGpusReason) {
  const std::string dir = hase::testing::FreshDir("planfail");
  FakeClock clock;
  auto made = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), Opts(dir, clock), nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->MarkGpuFailed(0, "XID 79").ok());
  ASSERT_TRUE(d->MarkGpuFailed(1, "XID 79").ok());
  TaskSpec big;
  big.model = "bigmodel";  // 30 000 MiB: only the (failed) A100s
  big.num_batches = 10;
  auto t = d->Submit(big);
  ASSERT_TRUE(t.ok());
  d->RunPassForTest();
  const TaskRecord r = *d->Get(t->record.id);
  ASSERT_EQ(r.state, TaskState::kQueued);
  EXPECT_EQ(r.reason, "no healthy GPU can host it now: it waits for a failed GPU to recover");
  const PlanEntry* e = d->Plan()->Find(t->record.id);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->reason.kind, "failed_gpus");
  EXPECT_EQ(e->reason.text, "only failed GPUs can host it (needs 30000 MiB): waits for them to recover");
  EXPECT_FALSE(std::isfinite(e->start_s));
  d.reset();
  std::filesystem::remove_all(dir);
}

// Issue 22 item 6: a memory wait names the GPU, its free memory and the need — never the
// catalog's "largest has 40960" beside a live refusal.
TEST(LivePlan, MemoryWaitNamesGpuFreeMemoryAndNeed) {
  const std::string dir = hase::testing::FreshDir("planmem");
  FakeClock clock;
  HttpStub exporter;
  exporter.SetBody(
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",Hostname=\"a\"} 19960\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",Hostname=\"a\"} 20960\n");
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), "a"}};
  so.now_s = clock.Fn();
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  auto made = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), Opts(dir, clock), &scraper);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  TaskSpec big;
  big.model = "bigmodel";  // 30 000 MiB: only an A100, and each has < 30 000 MiB free
  big.num_batches = 10;
  auto t = d->Submit(big);
  ASSERT_TRUE(t.ok());
  d->RunPassForTest();
  const TaskRecord r = *d->Get(t->record.id);
  ASSERT_EQ(r.state, TaskState::kQueued);
  const std::string want =
      "waits for GPU memory: needs 30000 MiB; GPU a/0 (A100-SXM4-40GB) comes closest with 21000 MiB free of "
      "40960 MiB (19960 MiB in use outside hase per DCGM, 0 MiB by hase's tasks)";
  EXPECT_EQ(r.reason, want);
  EXPECT_EQ(r.reason.find("largest"), std::string::npos) << r.reason;
  std::shared_ptr<const LiveQueuePlan> plan = d->Plan();
  ASSERT_TRUE(plan);
  const PlanEntry* e = plan->Find(t->record.id);
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(std::isfinite(e->start_s));
  EXPECT_EQ(e->reason.kind, "memory");
  EXPECT_EQ(e->reason.text, want);
  EXPECT_DOUBLE_EQ(e->reason.need_mib, 30000);
  EXPECT_DOUBLE_EQ(e->reason.free_mib, 21000);
  EXPECT_DOUBLE_EQ(e->reason.capacity_mib, 40960);
  EXPECT_EQ(e->reason.gpu.node, "a");
  EXPECT_EQ(e->reason.gpu.index, 0);
  EXPECT_EQ(plan->unplanned, 1);
  d.reset();
  std::filesystem::remove_all(dir);
}

// REST (GET /v1/tasks/{id}, /v1/tasks, /v1/queue) and `hase queue` against a daemon serving HTTP.
TEST(LivePlan, RestAndHaseQueueCli) {
  const std::string dir = hase::testing::FreshDir("planrest");
  FakeClock clock;
  const double T = clock.now;
  auto made = Daemon::Create(TwoGpus(), Table(), Opts(dir, clock), nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  Extender ext(*d);
  ApiServer api(*d, ext);
  auto port = api.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  api.Start();
  httplib::Client c("127.0.0.1", *port);
  c.set_read_timeout(10, 0);
  for (int i = 0; i < 5; ++i) {
    auto res = c.Post("/v1/tasks", R"({"model":"resnet50","num_batches":1000})", "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
  }
  // The scheduler thread passes and plans: wait (bounded) until the plan holds all five.
  json q;
  for (int i = 0; i < 500; ++i) {
    auto res = c.Get("/v1/queue");
    ASSERT_TRUE(res);
    if (res->status == 200) {
      q = json::parse(res->body);
      if (q["queued"] == 3 && q["running"] == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(q["queued"], 3) << q.dump();
  EXPECT_NEAR(q["eta_s"].get<double>() - T, 40.0, 1e-6);
  EXPECT_EQ(q["eta"], IsoUtc(T + 40));
  EXPECT_NEAR(q["drain_s"].get<double>(), 40.0, 1e-6);
  ASSERT_EQ(q["critical_path"]["tasks"].size(), 4u);
  EXPECT_EQ(q["critical_path"]["gpu"]["node"], "a");
  EXPECT_EQ(q["critical_path"]["tasks"][3]["task"], 5);

  auto res = c.Get("/v1/tasks/3");
  ASSERT_TRUE(res);
  json t = json::parse(res->body);
  EXPECT_EQ(t["state"], "queued");
  EXPECT_NEAR(t["predicted"]["start_s"].get<double>() - T, 20.0, 1e-6);
  EXPECT_NEAR(t["predicted"]["end_s"].get<double>() - T, 30.0, 1e-6);
  EXPECT_EQ(t["predicted"]["start"], IsoUtc(T + 20));
  EXPECT_EQ(t["predicted"]["gpu"], (json{{"id", 0}, {"node", "a"}, {"index", 0}, {"type", "A100-SXM4-40GB"}}));
  // Behind task 2 on the A100; whether 2 also holds its reservation by then depends on how the
  // five submissions fell into the scheduler thread's passes (a reservation once no GPU is free).
  EXPECT_TRUE(t["why"]["kind"] == "behind" || t["why"]["kind"] == "reserved_for") << t["why"].dump();
  EXPECT_EQ(t["why"]["task"], 2);
  EXPECT_EQ(t["why"]["gpu"]["node"], "a");
  EXPECT_EQ(t["why"]["until"], IsoUtc(T + 20));
  EXPECT_EQ(t["reason"], t["why"]["text"]);
  res = c.Get("/v1/tasks?state=queued");
  ASSERT_TRUE(res);
  json list = json::parse(res->body)["tasks"];
  ASSERT_EQ(list.size(), 3u);
  for (const json& x : list) EXPECT_TRUE(x["predicted"]["end_s"].is_number()) << x.dump();

  // `hase queue`: one row per task, times ISO 8601 UTC.
  const std::string url = " --url http://127.0.0.1:" + std::to_string(*port);
  hase::testing::CommandResult out = hase::testing::RunCommand(hase::testing::HaseBin() + " queue" + url);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("queue: 3 queued, 2 running, 0 bound; drains at " + IsoUtc(T + 40) + " (in 40 s)"),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find("critical path: GPU a/0 A100-SXM4-40GB: tasks 1 -> 2 -> 3 -> 5"), std::string::npos) << out.out;
  const std::string row5 = fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24} {}", 3, "resnet50", "queued",
                                       "a/0 A100-SXM4-40GB", IsoUtc(T + 20), IsoUtc(T + 30),
                                       t["reason"].get<std::string>());
  EXPECT_NE(out.out.find(row5), std::string::npos) << out.out;
  const std::string row4 = fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24}", 4, "resnet50", "running",
                                       "b/0 T4", IsoUtc(T), IsoUtc(T + 35));
  EXPECT_NE(out.out.find(row4), std::string::npos) << out.out;
  // A wrong address: one clear error, non-zero exit.
  out = hase::testing::RunCommand(hase::testing::HaseBin() + " queue --url http://127.0.0.1:1");
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.err.find("cannot reach hase at http://127.0.0.1:1"), std::string::npos) << out.err;
  api.Stop();
  d.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service

namespace hase::service {
namespace {

// The daemon's queue follows hase serve --objective (DaemonOptions::objective). Four resnet50
// tasks of 3 000, 1 000, 2 000 and 4 000 batches (A100 10 ms / T4 35 ms per batch), journalled
// before the first pass. By hand:
//   jct (shortest first): 2 → A100 now [0, 10 s]; 3, 1 and 4 each finish sooner after it on
//     the A100 (30 / 60 / 100 s) than on the T4 (70 / 105 / 140 s): they wait; only 2 runs.
//   makespan (longest first): 4 → A100 now [0, 40 s]; 1 waits for the A100 (70 < 105 s);
//     3 → T4 now (A100 after 1: 90 s > T4: 70 s); 2 waits for the A100 (80 < T4 after 3: 105 s).
TEST(LivePlan, DaemonQueueFollowsTheObjective) {
  for (const sched::Objective objective : {sched::Objective::kJct, sched::Objective::kMakespan}) {
    SCOPED_TRACE(std::string(sched::ObjectiveName(objective)));
    const std::string dir = hase::testing::FreshDir("objective");
    FakeClock clock;
    DaemonOptions o = Opts(dir, clock);
    o.objective = objective;
    auto made = Daemon::Create(TwoGpus(), Table(), o, nullptr);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    std::unique_ptr<Daemon> d = std::move(*made);
    for (const int64_t batches : {3000, 1000, 2000, 4000}) {
      TaskSpec s = Resnet();
      s.num_batches = batches;
      ASSERT_TRUE(d->Submit(s).ok());
    }
    ASSERT_TRUE(d->Start().ok());
    d->RunPassForTest();
    if (objective == sched::Objective::kJct) {
      EXPECT_EQ(d->Get(2)->state, TaskState::kRunning);
      EXPECT_EQ(d->Get(2)->gpu, 0);
      for (const int64_t id : {1, 3, 4}) EXPECT_NE(d->Get(id)->state, TaskState::kRunning) << id;
    } else {
      EXPECT_EQ(d->Get(4)->state, TaskState::kRunning);
      EXPECT_EQ(d->Get(4)->gpu, 0);
      EXPECT_EQ(d->Get(3)->state, TaskState::kRunning);
      EXPECT_EQ(d->Get(3)->gpu, 1);
      for (const int64_t id : {1, 2}) EXPECT_NE(d->Get(id)->state, TaskState::kRunning) << id;
    }
    d->Stop();
  }
}

}  // namespace
}  // namespace hase::service
