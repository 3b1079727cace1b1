// The daemon's live state stays true (issue #14, item 4): projected finishes are recomputed
// from observed state, DCGM memory enters fit checks, host labels resolve to cluster nodes.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "../telemetry/http_stub.h"
#include "hase/service/daemon.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "service_fixture.h"

namespace hase::service {
namespace {

using hase::testing::FakeClock;
using hase::testing::HttpStub;

TaskSpec Spec(const std::string& model, int64_t batches) {
  TaskSpec s;
  s.model = model;
  s.num_batches = batches;
  return s;
}

std::unique_ptr<Daemon> Make(const std::string& dir, FakeClock& clock,
                             const telemetry::LoadSource* load = nullptr) {
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = "hase";
  o.now_s = clock.Fn();
  o.tick_s = 3600;  // the test drives passes
  o.store.synchronous_full = false;
  auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, load);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE((*d)->Start().ok());
  return std::move(*d);
}

// The user's report: tasks overran their prediction and ended; the idle fast GPUs kept a
// projected finish ahead of now (running 0), growing, and the next VGG-16 went to a slow GPU.
TEST(LiveState, IdleGpusAreFreeNowAfterOverrunningTasksEnd) {
  const std::string dir = hase::testing::FreshDir("overrun");
  FakeClock clock;
  auto d = Make(dir, clock);
  std::vector<int64_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(d->Submit(Spec("vgg16", 1000))->record.id);  // 20 s on an A100
  d->RunPassForTest();
  // Everything overruns: 150 s later nothing has ended yet.
  for (int k = 0; k < 15; ++k) {
    clock.now = clock.now + 10;
    d->RunPassForTest();
  }
  // Now every running task ends (several passes, as the daemon's loop would run them).
  for (int round = 0; round < 10; ++round) {
    for (int64_t id : ids) {
      if (d->Get(id)->state == TaskState::kRunning) {
        ASSERT_TRUE(d->Complete(id, 0).ok());
      }
    }
    clock.now = clock.now + 1;
    d->RunPassForTest();
  }
  for (int64_t id : ids) ASSERT_TRUE(IsTerminal(d->Get(id)->state)) << id << " " << d->Get(id)->reason;
  const double now = clock.now;
  for (const GpuView& g : d->Gpus()) {
    EXPECT_EQ(g.running + g.queued, 0) << g.id;
    EXPECT_LE(g.projected_finish_s, now + 1e-6) << "GPU " << g.id << " idle but projected busy for "
                                                << g.projected_finish_s - now << " s";
  }
  auto next = d->Submit(Spec("vgg16", 1000));
  d->RunPassForTest();
  TaskRecord r = *d->Get(next->record.id);
  EXPECT_EQ(r.state, TaskState::kRunning);
  EXPECT_EQ(r.node, "a") << "went to " << r.node << " gpu " << r.gpu;
  // Priced 20 s by the table, × 2: the six runs took 8× their prediction, which calibration
  // (calibration.h) learned, clamped to its 2× ceiling.
  EXPECT_NEAR(r.predicted_end_s - now, 40.0, 1e-6);
  EXPECT_NE(d->MetricsText().find("hase_calibration_factor{model=\"vgg16\",type=\"A100-SXM4-40GB\"} 2\n"),
            std::string::npos);
  d.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service

namespace hase::service {
namespace {

// The report's cluster: one H100, two A100s, two RTX 3090s; VGG-16 16.7 s on the H100, 25 s on
// an A100, 145 s on a 3090 (1000 batches).
sched::Cluster ReportCluster() {
  sched::Cluster c;
  c.name = "report";
  c.types = {{"H100-SXM5-80GB", 81920, 67, 3350}, {"A100-SXM4-40GB", 40960, 19.5, 1555}, {"RTX-3090", 24576, 35.6, 936}};
  c.gpus = {{0, "h", 0, 0, 81920, 2}, {1, "a", 0, 1, 40960, 2}, {2, "a", 1, 1, 40960, 2},
            {3, "r", 0, 2, 24576, 2}, {4, "r", 1, 2, 24576, 2}};
  return c;
}

std::shared_ptr<const sched::LatencyOracle> ReportOracle() {
  auto o = std::make_shared<sched::TableOracle>();
  o->Set("vgg16", "H100-SXM5-80GB", 16.7, 1.0, 4000);
  o->Set("vgg16", "A100-SXM4-40GB", 25, 1.0, 4000);
  o->Set("vgg16", "RTX-3090", 145, 1.0, 4000);
  return o;
}

TEST(LiveState, OverrunsNeverLeaveAFastGpuIdleWhileTasksWait) {
  const std::string dir = hase::testing::FreshDir("overrun2");
  FakeClock clock;
  DaemonOptions o;
  o.state_dir = dir;
  o.now_s = clock.Fn();
  o.tick_s = 3600;
  o.store.synchronous_full = false;
  auto made = Daemon::Create(ReportCluster(), ReportOracle(), o, nullptr);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<Daemon> d = std::move(*made);
  ASSERT_TRUE(d->Start().ok());
  std::vector<int64_t> ids;
  int violations = 0;
  for (int step = 0; step < 600; ++step) {
    if (step % 15 == 0 && step < 300) {
      for (int k = 0; k < 3; ++k) ids.push_back(d->Submit(Spec("vgg16", 1000))->record.id);
    }
    // Every task runs 3 x its prediction, then ends.
    for (int64_t id : ids) {
      TaskRecord r = *d->Get(id);
      if (r.state == TaskState::kRunning && clock.now - r.started_s >= 3 * (r.predicted_end_s - r.predicted_start_s)) {
        ASSERT_TRUE(d->Complete(id, 0).ok());
      }
    }
    d->RunPassForTest();
    const double now = clock.now;
    int waiting = 0;
    for (int64_t id : ids) waiting += d->Get(id)->state == TaskState::kQueued;
    for (const GpuView& g : d->Gpus()) {
      if (g.running + g.queued > 0) continue;
      if (g.projected_finish_s > now + 1e-6 || (waiting > 0 && g.type != "RTX-3090")) {
        if (++violations <= 5) {
          ADD_FAILURE() << "step " << step << ": GPU " << g.id << " (" << g.type << ") idle with "
                        << waiting << " waiting, projected finish +" << g.projected_finish_s - now << " s";
        }
      }
    }
    clock.now = clock.now + 1;
  }
  EXPECT_EQ(violations, 0);
  d.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service

namespace hase::service {
namespace {

// dcgm-exporter collects every 30 s and Prometheus averages over a window, so the reading taken
// just after hase's own task ended still shows that task: without care the freed GPU looked
// busy (its next task predicted slowed down) and full (its memory foreign). A reading that
// overlaps a change of hase's own tasks on a GPU now stands aside for the last one before it.
TEST(LiveState, LaggingDcgmReadingDoesNotKeepAFreedGpuBusy) {
  const std::string dir = hase::testing::FreshDir("lag");
  FakeClock clock;
  HttpStub exporter;
  auto serve = [&](double a0_active, double a0_used) {
    exporter.SetBody(fmt::format(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu=\"0\",Hostname=\"a\"}} {}\n"
        "DCGM_FI_DEV_FB_USED{{gpu=\"0\",Hostname=\"a\"}} {}\n"
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu=\"1\",Hostname=\"a\"}} 0.9\n"
        "DCGM_FI_DEV_FB_USED{{gpu=\"1\",Hostname=\"a\"}} 20000\n",
        a0_active, a0_used));
  };
  serve(0.0, 0);
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), "a"}};
  so.now_s = clock.Fn();
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  auto d = Make(dir, clock, &scraper);
  // bigmodel (30 000 MiB) fits only an A100; GPU 1 holds 20 000 MiB of foreign work.
  auto first = d->Submit(Spec("bigmodel", 100));  // 5 s alone
  d->RunPassForTest();
  ASSERT_EQ(d->Get(first->record.id)->gpu, 0);
  // 60 s later DCGM sees it (busy, 30 500 MiB); it ends; the next readings still show it.
  clock.now = clock.now + 60;
  serve(1.0, 30500);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  d->RunPassForTest();
  EXPECT_NEAR(d->Gpus()[0].memory_foreign_mib, 500, 1e-9);  // its own 30 000 MiB is not foreign
  ASSERT_TRUE(d->Complete(first->record.id, 0).ok());
  clock.now = clock.now + 1;
  ASSERT_TRUE(scraper.ScrapeOnce().ok());  // the lagging reading: 1.0 busy, 30 500 MiB used
  auto next = d->Submit(Spec("bigmodel", 100));
  d->RunPassForTest();
  TaskRecord r = *d->Get(next->record.id);
  EXPECT_EQ(r.state, TaskState::kRunning) << r.reason;
  EXPECT_EQ(r.gpu, 0);
  EXPECT_NEAR(r.predicted_end_s - r.predicted_start_s, 5.0, 1e-6);  // alone: no phantom co-runner
  GpuView g0 = d->Gpus()[0];
  EXPECT_NEAR(g0.memory_foreign_mib, 500, 1e-9);  // the last reading before the change stands in
  // Once a reading is newer than the change by the settle time, it is used again.
  clock.now = clock.now + 31;
  serve(0.2, 31000);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  d->RunPassForTest();
  g0 = d->Gpus()[0];
  EXPECT_TRUE(g0.load_used);
  EXPECT_NEAR(g0.memory_foreign_mib, 1000, 1e-9);
  d.reset();
  std::filesystem::remove_all(dir);
}

// Issue #14: a 30 000 MiB task is not placed on a GPU whose DCGM reading leaves less free; it
// waits (not rejected) and runs once the memory is back. /v1/gpus shows DCGM's memory.
TEST(LiveState, DcgmMemoryEntersFitChecks) {
  const std::string dir = hase::testing::FreshDir("fbfit");
  FakeClock clock;
  HttpStub exporter;
  exporter.SetBody(
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",Hostname=\"a\"} 19960\n"
      "DCGM_FI_DEV_FB_FREE{gpu=\"0\",Hostname=\"a\"} 21000\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",Hostname=\"a\"} 4294967295\n"  // blank: ignored
      "DCGM_FI_DEV_FB_FREE{gpu=\"1\",Hostname=\"a\"} 20000\n");
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), "a"}};
  so.now_s = clock.Fn();
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  auto d = Make(dir, clock, &scraper);
  auto big = d->Submit(Spec("bigmodel", 10));
  d->RunPassForTest();
  TaskRecord r = *d->Get(big->record.id);
  EXPECT_EQ(r.state, TaskState::kQueued) << "placed on GPU " << r.gpu;
  EXPECT_NE(r.reason.find("waits for GPU memory"), std::string::npos) << r.reason;
  std::vector<GpuView> gpus = d->Gpus();
  EXPECT_EQ(gpus[0].memory_used_source, "dcgm");
  EXPECT_DOUBLE_EQ(gpus[0].memory_used_mib, 19960);
  EXPECT_DOUBLE_EQ(gpus[0].memory_foreign_mib, 19960);
  EXPECT_DOUBLE_EQ(gpus[1].memory_used_mib, 40960 - 20000);  // from FB_FREE; the blank FB_USED is missing
  EXPECT_DOUBLE_EQ(gpus[0].memory_mib, 40960);
  // A small task still fits beside the foreign memory.
  auto small = d->Submit(Spec("resnet50", 10));
  d->RunPassForTest();
  EXPECT_EQ(d->Get(small->record.id)->state, TaskState::kRunning);
  // The foreign job ends: the big task runs on GPU 0 or 1.
  exporter.SetBody(
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",Hostname=\"a\"} 0\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",Hostname=\"a\"} 0\n");
  clock.now = clock.now + 40;
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  d->RunPassForTest();
  r = *d->Get(big->record.id);
  EXPECT_EQ(r.state, TaskState::kRunning) << r.reason;
  // Too big for every GPU's catalog memory: still rejected at once.
  TaskSpec huge = Spec("resnet50", 1);
  huge.memory_mib = 1e6;
  auto h = d->Submit(huge);
  d->RunPassForTest();
  EXPECT_EQ(d->Get(h->record.id)->state, TaskState::kRejected);
  d.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
