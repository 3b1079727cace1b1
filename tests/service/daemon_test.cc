// The daemon in-process: placement with the simulator's policies, live DCGM load from a real
// HTTP stand-in (up, down, stale), cancel/complete, GPU and node failure, restart recovery.
#include "hase/service/daemon.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <signal.h>

#include <gtest/gtest.h>

#include "../telemetry/http_stub.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "hase/telemetry/prom_text.h"
#include "service_fixture.h"

namespace hase::service {
namespace {

using hase::testing::FakeClock;
using hase::testing::HttpStub;

TaskSpec Spec(const std::string& model, int64_t batches, const std::string& key = "") {
  TaskSpec s;
  s.model = model;
  s.num_batches = batches;
  s.key = key;
  return s;
}

// Options of a daemon that runs commands (--executor) and passes every `tick_s`.
DaemonOptions ExecutorOptions(const std::string& dir, const std::string& policy, double tick_s) {
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = policy;
  o.executor = true;
  o.tick_s = tick_s;
  o.store.synchronous_full = false;
  return o;
}

std::unique_ptr<Daemon> MakeDaemon(const std::string& dir, FakeClock& clock, const std::string& policy = "hase",
                                   const telemetry::DcgmScraper* scraper = nullptr) {
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = policy;
  o.now_s = clock.Fn();
  o.tick_s = 3600;  // tests drive passes themselves
  o.store.synchronous_full = false;
  auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, scraper);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE((*d)->Start().ok());
  return std::move(*d);
}

// A 2-GPU task (sched/gang.h) on the small cluster (node a: 2 A100, node b: 1 T4): both A100s,
// alone, 100 batches split 50 + 50 at 10 ms = 500 ms predicted; a 1-GPU task meanwhile goes to
// the T4; when it ends both A100s are free again; the journal keeps both GPUs across a restart;
// a policy that places one GPU per task refuses it at the door.
TEST(Daemon, TwoGpuTaskHoldsBothGpusOfOneNode) {
  const std::string dir = hase::testing::FreshDir("daemon-gang");
  FakeClock clock;
  int64_t gang_id = 0;
  {
    auto d = MakeDaemon(dir, clock);
    TaskSpec two = Spec("resnet50", 100);
    two.gpus = 2;
    auto g = d->Submit(two);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    gang_id = g->record.id;
    d->RunPassForTest();
    TaskRecord r = *d->Get(gang_id);
    EXPECT_EQ(r.state, TaskState::kRunning);
    EXPECT_EQ(r.gang, (std::vector<int>{0, 1}));
    EXPECT_EQ(r.gang_indices, (std::vector<int>{0, 1}));
    EXPECT_EQ(r.node, "a");
    EXPECT_DOUBLE_EQ(r.predicted_isolated_ms, 500.0);
    EXPECT_NEAR(r.predicted_end_s - r.predicted_start_s, 0.5, 1e-6);
    auto one = d->Submit(Spec("resnet50", 1));
    d->RunPassForTest();
    EXPECT_EQ(d->Get(one->record.id)->gpu, 2);  // the A100s are held alone
  }
  {
    auto d = MakeDaemon(dir, clock);  // restart on the same journal
    TaskRecord r = *d->Get(gang_id);
    EXPECT_EQ(r.state, TaskState::kRunning);
    EXPECT_EQ(r.gang, (std::vector<int>{0, 1}));
    // A 1-GPU task now waits (for an A100: sharing the busy T4 is predicted slower), never on
    // the held A100s.
    auto one = d->Submit(Spec("resnet50", 1));
    d->RunPassForTest();
    EXPECT_NE(d->Get(one->record.id)->gpu, 0);
    EXPECT_NE(d->Get(one->record.id)->gpu, 1);
    clock.now = clock.now + 1;
    ASSERT_TRUE(d->Complete(gang_id, 0).ok());
    EXPECT_EQ(d->Get(gang_id)->state, TaskState::kSucceeded);
    d->RunPassForTest();
    EXPECT_EQ(d->Get(one->record.id)->gpu, 0);  // both A100s free: the lowest id
    auto after = d->Submit(Spec("resnet50", 1));
    d->RunPassForTest();
    EXPECT_EQ(d->Get(after->record.id)->gpu, 1);  // and the other one
  }
  {
    FakeClock c2;
    auto rr = MakeDaemon(hase::testing::FreshDir("daemon-gang-rr"), c2, "rr");
    TaskSpec two = Spec("resnet50", 100);
    two.gpus = 2;
    auto refused = rr->Submit(two);
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(refused.status().IsUnsupported());
    EXPECT_NE(refused.status().message().find("policy 'rr' places each task on one GPU"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST(Daemon, PlacesWithTheHasePolicyAndPredictsTimes) {
  const std::string dir = hase::testing::FreshDir("daemon");
  FakeClock clock;
  auto d = MakeDaemon(dir, clock);
  auto a = d->Submit(Spec("resnet50", 100));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->record.state, TaskState::kQueued);
  d->RunPassForTest();
  TaskRecord r = *d->Get(a->record.id);
  EXPECT_EQ(r.state, TaskState::kRunning);
  EXPECT_EQ(r.gpu, 0);  // fastest type, lowest id
  EXPECT_EQ(r.node, "a");
  EXPECT_DOUBLE_EQ(r.predicted_isolated_ms, 1000.0);  // 10 ms × 100 batches
  EXPECT_NEAR(r.predicted_end_s - r.predicted_start_s, 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(r.started_s, clock.now.load());
  // A second heavy task avoids the busy A100 (slowdown 1 + 0.88 × 0.8) for the idle one.
  auto b = d->Submit(Spec("resnet50", 100));
  d->RunPassForTest();
  EXPECT_EQ(d->Get(b->record.id)->gpu, 1);
  // A task too large for every GPU is rejected with a reason, never left hanging.
  TaskSpec huge = Spec("resnet50", 1);
  huge.memory_mib = 1e6;
  auto h = d->Submit(huge);
  d->RunPassForTest();
  TaskRecord hr = *d->Get(h->record.id);
  EXPECT_EQ(hr.state, TaskState::kRejected);
  EXPECT_FALSE(hr.reason.empty());
  // Unknown model: refused at the door (400 over REST), nothing journalled.
  auto u = d->Submit(Spec("no-such-model", 1));
  ASSERT_FALSE(u.ok());
  EXPECT_TRUE(u.status().IsInvalidArgument());
  EXPECT_NE(u.status().message().find("model 'no-such-model' cannot be predicted"), std::string::npos)
      << u.status().ToString();
  // More GPUs than any node has of one type (node a: 2 A100): unsupported at the door, not
  // silently run on fewer.
  TaskSpec four = Spec("resnet50", 1);
  four.gpus = 4;
  EXPECT_TRUE(d->Submit(four).status().IsUnsupported());
  EXPECT_NE(d->Submit(four).status().message().find("no node has that many GPUs of one type (at most 2)"),
            std::string::npos);
  EXPECT_EQ(d->List(std::nullopt, 100).size(), 3u);
  // Complete / cancel.
  clock.now = clock.now + 2;
  ASSERT_TRUE(d->Complete(a->record.id, 0).ok());
  r = *d->Get(a->record.id);
  EXPECT_EQ(r.state, TaskState::kSucceeded);
  EXPECT_DOUBLE_EQ(r.ended_s - r.started_s, 2.0);
  EXPECT_TRUE(d->Complete(a->record.id, 0).status().IsConflict());
  ASSERT_TRUE(d->Cancel(b->record.id).ok());
  EXPECT_EQ(d->Get(b->record.id)->state, TaskState::kCancelled);
  EXPECT_TRUE(d->Cancel(b->record.id).status().IsConflict());
  EXPECT_TRUE(d->Cancel(999).status().IsNotFound());
  // Metrics are valid exposition text with the right counts.
  auto m = telemetry::ParsePromText(d->MetricsText());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::map<std::string, double> v;
  for (const auto& s : m->samples) {
    std::string k = s.name;
    for (const auto& [lk, lv] : s.labels) k += "," + lk + "=" + lv;
    v[k] = s.value;
  }
  EXPECT_EQ(v["hase_tasks_submitted_total"], 3);
  EXPECT_EQ(v["hase_decisions_total,outcome=bind"], 2);
  EXPECT_EQ(v["hase_tasks_finished_total,state=rejected"], 1);
  EXPECT_EQ(v["hase_tasks_finished_total,state=succeeded"], 1);
  EXPECT_EQ(v["hase_decision_latency_seconds_count"], 3);
  EXPECT_EQ(v["hase_decision_latency_seconds_bucket,le=+Inf"], 3);
  EXPECT_EQ(v["hase_queue_length"], 0);
  d.reset();
  std::filesystem::remove_all(dir);
}

TEST(Daemon, DuplicateKeyReturnsTheFirstTask) {
  const std::string dir = hase::testing::FreshDir("dup");
  FakeClock clock;
  auto d = MakeDaemon(dir, clock);
  auto a = d->Submit(Spec("resnet50", 10, "k1"));
  auto b = d->Submit(Spec("resnet50", 10, "k1"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->created);
  EXPECT_FALSE(b->created);
  EXPECT_EQ(a->record.id, b->record.id);
  EXPECT_EQ(d->List(std::nullopt, 100).size(), 1u);
  d.reset();
  std::filesystem::remove_all(dir);
}

// Issue #11: a task that names no runtime is journalled with the daemon's --runtime, so a
// restart under another --runtime does not re-price it; a task's own runtime is kept.
TEST(Daemon, TaskWithoutRuntimeKeepsTheDaemonsRuntime) {
  const std::string dir = hase::testing::FreshDir("rt");
  FakeClock clock;
  DaemonOptions o;
  o.state_dir = dir;
  o.now_s = clock.Fn();
  o.tick_s = 3600;
  o.store.synchronous_full = false;
  o.default_runtime = "ort-cuda";
  auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, nullptr);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE((*d)->Start().ok());
  auto plain = (*d)->Submit(Spec("resnet50", 10, "a"));
  TaskSpec eager = Spec("resnet50", 10, "b");
  eager.runtime = "pytorch-eager";
  auto own = (*d)->Submit(eager);
  ASSERT_TRUE(plain.ok() && own.ok());
  EXPECT_EQ(plain->record.spec.runtime, "ort-cuda");
  EXPECT_EQ(own->record.spec.runtime, "pytorch-eager");
  d->reset();
  std::filesystem::remove_all(dir);
}

TEST(Daemon, LiveDcgmLoadSteersPlacementAndDegradesGracefully) {
  const std::string dir = hase::testing::FreshDir("live");
  FakeClock clock;
  HttpStub exporter;
  // Node a: GPU 0 busy with foreign work (GR_ENGINE_ACTIVE 0.9, SM_ACTIVE off), GPU 1 idle.
  exporter.SetBody(
      "# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.\n"
      "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-a0\",modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"a\"} 0.9\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",UUID=\"GPU-a1\",modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"a\"} 0.0\n"
      // The other default-counter inputs (their absence is degraded): no DRAM or memory use.
      "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",Hostname=\"a\"} 0\n"
      "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"1\",Hostname=\"a\"} 0\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",Hostname=\"a\"} 0\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",Hostname=\"a\"} 0\n");
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), "a"}};
  so.timeout_s = 0.5;
  so.stale_after_s = 60;
  so.now_s = clock.Fn();
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  auto d = MakeDaemon(dir, clock, "hase", &scraper);
  EXPECT_FALSE(d->Health().degraded) << (d->Health().reasons.empty() ? "" : d->Health().reasons[0]);
  auto t1 = d->Submit(Spec("resnet50", 100));
  d->RunPassForTest();
  EXPECT_EQ(d->Get(t1->record.id)->gpu, 1);  // GPU 0 is busy per DCGM
  auto gpus = d->Gpus();
  EXPECT_TRUE(gpus[0].load_used);
  EXPECT_DOUBLE_EQ(gpus[0].background_sm, 0.9);
  ASSERT_TRUE(gpus[0].live.has_value());
  EXPECT_EQ(gpus[0].live->uuid, "GPU-a0");
  // GPU 1 now runs hase's own task (demand 0.8); DCGM reports it as 0.8 busy: not background.
  exporter.SetBody(
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",Hostname=\"a\"} 0.9\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",Hostname=\"a\"} 0.8\n");
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  d->RunPassForTest();
  EXPECT_NEAR(d->Gpus()[1].background_sm, 0.0, 1e-12);

  // Exporter down: degraded, but scheduling continues on the last good values.
  exporter.Down();
  clock.now = clock.now + 10;
  EXPECT_FALSE(scraper.ScrapeOnce().ok());
  DaemonHealth h = d->Health();
  EXPECT_TRUE(h.degraded);
  ASSERT_FALSE(h.reasons.empty());
  auto t2 = d->Submit(Spec("vgg16", 10));
  d->RunPassForTest();
  TaskRecord r2 = *d->Get(t2->record.id);
  // Accepted and decided on the last good load, never failed or rejected. Since `hase` prices
  // waiting for a GPU that frees soon (exclusive start), a heavy VGG-16 may wait queued rather
  // than co-locate with the busy GPU 0 or the ResNet-50 on GPU 1.
  EXPECT_TRUE(r2.state == TaskState::kRunning || r2.state == TaskState::kQueued)
      << TaskStateName(r2.state);
  EXPECT_TRUE(d->Gpus()[0].load_used);  // 10 s old: still the last good estimate
  // Much later the readings are too old: analytic-only (background idle), still scheduling.
  clock.now = clock.now + 400;
  auto t3 = d->Submit(Spec("resnet50", 1));
  d->RunPassForTest();
  EXPECT_NE(d->Get(t3->record.id)->state, TaskState::kQueued);
  EXPECT_FALSE(d->Gpus()[0].load_used);
  EXPECT_DOUBLE_EQ(d->Gpus()[0].background_sm, 0.0);
  EXPECT_TRUE(d->Health().degraded);
  d.reset();
  std::filesystem::remove_all(dir);
}

// Issue #15 (6c): an exporter whose Hostname matches no node left /healthz "ok".
TEST(Daemon, ExporterHostnameMatchingNoNodeIsDegradedWithTheName) {
  const std::string dir = hase::testing::FreshDir("hostname");
  FakeClock clock;
  HttpStub exporter;
  // (An exporter given as URL=NODE names its node; this one is given without, so the label decides.)
  exporter.SetBody("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",Hostname=\"a\"} 0.5\n"
                   "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",Hostname=\"gpu-node-7.example\"} 0.5\n");
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), ""}};
  so.nodes.nodes = {"a", "b"};  // the cluster's nodes, as hase serve passes them
  so.timeout_s = 0.5;
  so.now_s = clock.Fn();
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  auto d = MakeDaemon(dir, clock, "hase", &scraper);
  DaemonHealth h = d->Health();
  EXPECT_TRUE(h.degraded);
  std::string all;
  for (const std::string& r : h.reasons) all += r + "\n";
  EXPECT_NE(all.find("gpu-node-7.example"), std::string::npos) << all;
  d.reset();
  std::filesystem::remove_all(dir);
}

// Issue #15 (6c): on a full disk placement writes failed silently: tasks stayed "running" with
// no process, memory and journal disagreed, /healthz said ok.
TEST(Daemon, FullDiskUndoesPlacementsHoldsTheQueueAndSaysDegraded) {
  const std::string dir = hase::testing::FreshDir("fulldisk");
  FakeClock clock;
  auto d = MakeDaemon(dir, clock);
  auto a = d->Submit(Spec("resnet50", 100));
  ASSERT_TRUE(a.ok());
  d->StoreForTest().FailWritesForTest(true);
  d->RunPassForTest();
  TaskRecord r = *d->Get(a->record.id);
  EXPECT_EQ(r.state, TaskState::kQueued);  // as in the journal
  EXPECT_EQ(r.gpu, -1);
  for (const GpuView& g : d->Gpus()) EXPECT_EQ(g.running + g.queued, 0) << g.id;
  DaemonHealth h = d->Health();
  EXPECT_TRUE(h.degraded);
  ASSERT_EQ(h.reasons.size(), 1u);
  EXPECT_NE(h.reasons[0].find("database or disk is full"), std::string::npos) << h.reasons[0];
  auto b = d->Submit(Spec("resnet50", 10));
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.status().IsIO());  // HTTP 503
  {  // the journal agrees with memory
    auto store = TaskStore::Open(dir);
    ASSERT_TRUE(store.ok());
    auto rows = (*store)->LoadAll();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].state, TaskState::kQueued);
  }
  // Space again: the next pass places it and the daemon is healthy.
  d->StoreForTest().FailWritesForTest(false);
  d->RunPassForTest();
  EXPECT_EQ(d->Get(a->record.id)->state, TaskState::kRunning);
  EXPECT_FALSE(d->Health().degraded);
  d.reset();
  auto store = TaskStore::Open(dir);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*(*store)->LoadAll())[0].state, TaskState::kRunning);
  std::filesystem::remove_all(dir);
}

TEST(Daemon, GpuAndNodeFailureRequeueEverythingPlacedThere) {
  const std::string dir = hase::testing::FreshDir("fail");
  FakeClock clock;
  auto d = MakeDaemon(dir, clock, "rr");
  std::vector<int64_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(d->Submit(Spec("resnet50", 100))->record.id);
  d->RunPassForTest();
  int on_a = 0;
  for (int64_t id : ids) {
    TaskRecord r = *d->Get(id);
    EXPECT_NE(r.state, TaskState::kQueued);
    on_a += r.node == "a";
  }
  EXPECT_EQ(on_a, 4);  // round robin over 3 GPUs
  auto n = d->MarkNodeFailed("a", "kernel panic");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 4);
  d->RunPassForTest();
  int lost = 0;
  for (int64_t id : ids) {
    TaskRecord r = *d->Get(id);
    if (r.state == TaskState::kQueued) continue;  // waiting for a healthy GPU
    EXPECT_EQ(r.node, "b") << id;
    lost += IsTerminal(r.state);
  }
  EXPECT_EQ(lost, 0);  // none rejected, none lost
  EXPECT_TRUE(d->MarkNodeFailed("zz", "").status().IsNotFound());
  // bigmodel fits only A100s, all failed: it waits instead of being rejected.
  auto big = d->Submit(Spec("bigmodel", 1));
  d->RunPassForTest();
  EXPECT_EQ(d->Get(big->record.id)->state, TaskState::kQueued);
  ASSERT_TRUE(d->RecoverGpu(0).ok());
  d->RunPassForTest();
  EXPECT_NE(d->Get(big->record.id)->state, TaskState::kQueued);
  d.reset();
  std::filesystem::remove_all(dir);
}

TEST(Daemon, FailedGpuTaskMovesToTheOtherA100) {
  const std::string dir = hase::testing::FreshDir("fail2");
  FakeClock clock;
  auto d = MakeDaemon(dir, clock);
  auto t = d->Submit(Spec("vgg16", 50));
  d->RunPassForTest();
  EXPECT_EQ(d->Get(t->record.id)->gpu, 0);
  ASSERT_TRUE(d->MarkGpuFailed(0, "XID 48").ok());
  d->RunPassForTest();
  TaskRecord r = *d->Get(t->record.id);
  EXPECT_EQ(r.gpu, 1) << r.reason;
  EXPECT_EQ(r.attempts, 2);
  d.reset();
  std::filesystem::remove_all(dir);
}

TEST(Daemon, RestartRecoversQueueAndRunningAssignments) {
  const std::string dir = hase::testing::FreshDir("restart");
  FakeClock clock;
  std::map<int64_t, TaskRecord> before;
  {
    auto d = MakeDaemon(dir, clock, "rr");
    for (int i = 0; i < 8; ++i) (void)d->Submit(Spec(i % 2 ? "vgg16" : "resnet50", 100, "k" + std::to_string(i)));
    d->RunPassForTest();  // rr: 2 slots × 3 GPUs running, 2 bound in local queues
    for (int i = 0; i < 3; ++i) (void)d->Submit(Spec("resnet50", 5));  // queued, no pass yet
    for (const TaskRecord& r : d->List(std::nullopt, 100)) before[r.id] = r;
  }  // destroyed without any shutdown work beyond stopping threads
  auto d = MakeDaemon(dir, clock, "rr");
  auto after = d->List(std::nullopt, 100);
  ASSERT_EQ(after.size(), before.size());
  int running = 0, bound = 0, queued = 0;
  // The restarted daemon's own loop may already have run a pass (recovered queued tasks make it
  // dirty), binding the 3 queued tasks: running and bound assignments must be kept exactly,
  // queued ones may have been bound since.
  for (const TaskRecord& r : after) {
    const TaskRecord& b = before.at(r.id);
    if (b.state == TaskState::kQueued) {
      EXPECT_TRUE(r.state == TaskState::kQueued || r.state == TaskState::kBound) << r.id;
    } else {
      EXPECT_EQ(r.state, b.state) << r.id;
      EXPECT_EQ(r.gpu, b.gpu) << r.id;
      EXPECT_DOUBLE_EQ(r.started_s, b.started_s);
    }
    running += r.state == TaskState::kRunning;
    bound += r.state == TaskState::kBound;
    queued += r.state == TaskState::kQueued;
  }
  EXPECT_EQ(running, 6);
  EXPECT_EQ(bound + queued, 5);
  EXPECT_GE(bound, 2);
  auto gpus = d->Gpus();
  EXPECT_EQ(gpus[0].running + gpus[1].running + gpus[2].running, 6);
  EXPECT_EQ(gpus[0].queued + gpus[1].queued + gpus[2].queued, bound);
  // The recovered GPU state is live: completing a running task promotes a bound one.
  int64_t first_running = -1, waiting = -1;
  for (const TaskRecord& r : after) {
    if (r.state == TaskState::kRunning && gpus[r.gpu].queued > 0) first_running = r.id;
  }
  ASSERT_GE(first_running, 0);
  std::vector<int64_t> waiting_ids;  // bound to the same GPU, in any queue order
  for (const TaskRecord& r : after) {
    if (r.state == TaskState::kBound && r.gpu == d->Get(first_running)->gpu) waiting_ids.push_back(r.id);
  }
  (void)waiting;
  ASSERT_FALSE(waiting_ids.empty());
  ASSERT_TRUE(d->Complete(first_running, 0).ok());
  int promoted = 0;
  for (int64_t id : waiting_ids) promoted += d->Get(id)->state == TaskState::kRunning;
  EXPECT_EQ(promoted, 1);
  d.reset();
  std::filesystem::remove_all(dir);
}

TEST(Daemon, ExecutorRunsCommandsOnTheirGpuAndRecordsExitCodes) {
  const std::string dir = hase::testing::FreshDir("exec");
  const DaemonOptions o = ExecutorOptions(dir, "rr", 0.05);
  auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, nullptr);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->Start().ok());
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    TaskSpec s = Spec("resnet50", 1);
    s.command = "echo \"$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER $HASE_TASK_ID\" > " + dir + "/out" +
                std::to_string(i) + "; exit " + std::to_string(i);
    ids.push_back((*d)->Submit(s)->record.id);
  }
  // Bounded wait: 200 × 25 ms.
  for (int k = 0; k < 200; ++k) {
    bool all = true;
    for (int64_t id : ids) all = all && IsTerminal((*d)->Get(id)->state);
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  for (int i = 0; i < 3; ++i) {
    TaskRecord r = *(*d)->Get(ids[i]);
    EXPECT_EQ(r.state, i == 0 ? TaskState::kSucceeded : TaskState::kFailed) << i;
    EXPECT_EQ(r.exit_code, i);
    EXPECT_GT(r.ended_s, 0);
    std::ifstream f(dir + "/out" + std::to_string(i));
    std::string cuda, order, id;
    f >> cuda >> order >> id;
    EXPECT_EQ(cuda, std::to_string(r.gpu_index));
    EXPECT_EQ(order, "PCI_BUS_ID");
    EXPECT_EQ(id, std::to_string(r.id));
  }
  // A long task on a GPU that then fails is killed and re-queued, then runs again elsewhere.
  TaskSpec s = Spec("resnet50", 1);
  s.command = "sleep 30";
  auto longtask = (*d)->Submit(s);
  int64_t lid = longtask->record.id;
  for (int k = 0; k < 200 && (*d)->Get(lid)->pid == 0; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  TaskRecord lr = *(*d)->Get(lid);
  ASSERT_EQ(lr.state, TaskState::kRunning);
  ASSERT_GT(lr.pid, 0);
  const int failed_gpu = lr.gpu;
  ASSERT_TRUE((*d)->MarkGpuFailed(failed_gpu, "XID 79").ok());
  for (int k = 0; k < 200; ++k) {
    TaskRecord x = *(*d)->Get(lid);
    if (x.state == TaskState::kRunning && x.gpu != failed_gpu && x.pid > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  TaskRecord x = *(*d)->Get(lid);
  EXPECT_EQ(x.state, TaskState::kRunning);
  EXPECT_NE(x.gpu, failed_gpu);
  EXPECT_EQ(x.attempts, 2);
  ASSERT_TRUE((*d)->Cancel(lid).ok());
  d->reset();
  std::filesystem::remove_all(dir);
}

// Issue #15 (0): with the default policy the daemon never cleared the hase policy's per-pass
// claims, so 73 of 100 instant tasks stayed queued forever beside idle GPUs. Every pass now
// starts with Policy::BeginPass: 200 instant tasks all finish.
TEST(Daemon, DefaultPolicyRunsEveryInstantTask) {
  const std::string dir = hase::testing::FreshDir("instant");
  const DaemonOptions o = ExecutorOptions(dir, "hase", 0.02);
  auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, nullptr);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE((*d)->Start().ok());
  std::vector<int64_t> ids;
  for (int i = 0; i < 200; ++i) {
    TaskSpec s = Spec(i % 2 ? "resnet50" : "vgg16", 1 + i % 7);
    s.command = "true";
    auto r = (*d)->Submit(s);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ids.push_back(r->record.id);
  }
  int done = 0;
  for (int k = 0; k < 1500 && done < 200; ++k) {  // bounded: 1 500 × 20 ms
    done = 0;
    for (int64_t id : ids) done += IsTerminal((*d)->Get(id)->state);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(done, 200);
  for (int64_t id : ids) EXPECT_EQ((*d)->Get(id)->state, TaskState::kSucceeded) << id;
  d->reset();
  std::filesystem::remove_all(dir);
}

// A journal row that fails validation no longer stops the daemon: it starts, runs the other
// tasks and says on /healthz what it quarantined.
TEST(Daemon, StartsWithAQuarantinedJournalRow) {
  const std::string dir = hase::testing::FreshDir("quarantine_daemon");
  FakeClock clock;
  int64_t good = 0;
  {
    auto d = MakeDaemon(dir, clock);
    good = d->Submit(Spec("resnet50", 10))->record.id;
    const int64_t bad = d->Submit(Spec("resnet50", 10))->record.id;
    d.reset();
    ASSERT_TRUE(hase::testing::OverwriteJournalSpec(
        dir, bad, R"({"model":"resnet50","priority":2147483648})"));
  }
  auto d = MakeDaemon(dir, clock);  // Start() succeeds (checked inside)
  ASSERT_TRUE(d->Get(good).has_value());
  const DaemonHealth h = d->Health();
  EXPECT_TRUE(h.degraded);
  bool named = false;
  for (const std::string& r : h.reasons) named = named || r.find("quarantine") != std::string::npos;
  EXPECT_TRUE(named);
  d.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service

namespace hase::service {
namespace {

// A task without a command is run by an outside runner: it holds its GPU until Complete or
// until its lease (--outside-lease) runs out since its start or last heartbeat.
TEST(Daemon, AnOutsideTaskHoldsItsGpuOnlyForItsLease) {
  const std::string dir = hase::testing::FreshDir("daemon_lease");
  FakeClock clock;
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = "rr";
  o.now_s = clock.Fn();
  o.tick_s = 3600;
  o.outside_lease_s = 100;
  o.store.synchronous_full = false;
  auto made = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  const int64_t id = d->Submit(Spec("resnet50", 100))->record.id;
  d->RunPassForTest();
  ASSERT_EQ(d->Get(id)->state, TaskState::kRunning);
  const int gpu = d->Get(id)->gpu;
  clock.now = clock.now + 60;
  Result<double> until = d->Heartbeat(id);
  ASSERT_TRUE(until.ok()) << until.status().ToString();
  EXPECT_DOUBLE_EQ(*until, clock.now + 100);
  clock.now = clock.now + 90;  // 150 s after the start, 90 after the heartbeat
  d->RunPassForTest();
  EXPECT_EQ(d->Get(id)->state, TaskState::kRunning);
  clock.now = clock.now + 11;  // 101 s after the heartbeat
  d->RunPassForTest();
  const TaskRecord r = *d->Get(id);
  EXPECT_EQ(r.state, TaskState::kFailed);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_DOUBLE_EQ(r.ended_s, clock.now.load());
  EXPECT_NE(r.reason.find("outside lease expired"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("--outside-lease"), std::string::npos) << r.reason;
  EXPECT_EQ(d->Gpus()[gpu].running, 0);  // its GPU is free again
  EXPECT_TRUE(d->Heartbeat(id).status().IsConflict());
  EXPECT_TRUE(d->Complete(id, 0).status().IsConflict());
  EXPECT_TRUE(d->Heartbeat(999).status().IsNotFound());
  auto rows = d->StoreForTest().LoadAll();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at(0).state, TaskState::kFailed);  // journalled
  // Completed in time: no expiry.
  const int64_t ok = d->Submit(Spec("resnet50", 100))->record.id;
  d->RunPassForTest();
  clock.now = clock.now + 99;
  d->RunPassForTest();
  ASSERT_TRUE(d->Complete(ok, 0).ok());
  EXPECT_EQ(d->Get(ok)->state, TaskState::kSucceeded);
  d.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
