// MIG instances as schedulable GPUs in the daemon: each declared instance reads its own DCGM
// series (GPU_I_ID / GPU_I_PROFILE), placement sees that load, /v1/gpus shows it, and MIG
// series the cluster file does not declare make /healthz degraded with their names.
#include <chrono>
#include <filesystem>
#include <thread>
#include <gtest/gtest.h>

#include "../telemetry/http_stub.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/service/daemon.h"
#include "hase/service/mig_telemetry.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "service_fixture.h"

namespace hase::service {
namespace {

using hase::testing::FakeClock;
using hase::testing::HttpStub;

sched::Cluster MigCluster() {
  const GpuCatalog cat = *GpuCatalog::Builtin();
  auto c = sched::ParseClusterYaml(
      "nodes:\n"
      "  - name: a\n"
      "    gpus:\n"
      "      - {type: A100-SXM4-40GB, mig: [3g.20gb, 1g.5gb, 1g.5gb]}\n"
      "  - name: b\n"
      "    gpus:\n"
      "      - {type: T4}\n",
      "mig.yaml", cat);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

// dcgm-exporter on node a: GPU 0 in MIG mode with GPU_I_ID 1 (3g.20gb), 5 and 6 (1g.5gb, 5
// busy) and 3 (2g.10gb, not in the cluster file).
std::string MigExposition() {
  std::string out = "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n";
  const char* labels = "gpu=\"0\",UUID=\"GPU-4a9f3c1e\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"a\"";
  struct I {
    const char* id;
    const char* profile;
    double gr, dram, fb;
  };
  for (const I& i : {I{"1", "3g.20gb", 0.0, 0.0, 13}, I{"5", "1g.5gb", 0.9, 0.5, 3000}, I{"6", "1g.5gb", 0.0, 0.0, 13},
                     I{"3", "2g.10gb", 0.2, 0.1, 500}}) {
    const std::string l = std::string(labels) + ",GPU_I_PROFILE=\"" + i.profile + "\",GPU_I_ID=\"" + i.id + "\"";
    out += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + l + "} " + std::to_string(i.gr) + "\n";
    out += "DCGM_FI_PROF_DRAM_ACTIVE{" + l + "} " + std::to_string(i.dram) + "\n";
    out += "DCGM_FI_DEV_FB_USED{" + l + "} " + std::to_string(i.fb) + "\n";
  }
  return out;
}

TEST(DaemonMig, InstancesReadTheirOwnSeriesAndUndeclaredOnesAreNamed) {
  const sched::Cluster cluster = MigCluster();
  ASSERT_EQ(cluster.gpus.size(), 4u);  // a/0/mig0-3g.20gb, a/0/mig1-1g.5gb, a/0/mig2-1g.5gb, b/0
  const std::string dir = hase::testing::FreshDir("mig");
  FakeClock clock;
  HttpStub exporter;
  exporter.SetBody(MigExposition());
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), "a"}};
  so.timeout_s = 0.5;
  so.now_s = clock.Fn();
  so.nodes.nodes = {"a", "b"};
  so.nodes.mig = DeclaredMigInstances(cluster);
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());

  // resnet50: 10 ms/batch on a 1g.5gb, slow elsewhere, so it goes to a 1g.5gb instance.
  auto oracle = std::make_shared<sched::TableOracle>();
  oracle->Set("resnet50", "A100-SXM4-40GB-MIG-1g.5gb", 10, 0.8, 2000);
  oracle->Set("resnet50", "A100-SXM4-40GB-MIG-3g.20gb", 100, 0.8, 2000);
  oracle->Set("resnet50", "T4", 100, 0.8, 2000);
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = "hase";
  o.now_s = clock.Fn();
  o.tick_s = 3600;
  o.store.synchronous_full = false;
  auto d = Daemon::Create(cluster, oracle, o, &scraper);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE((*d)->Start().ok());

  // /v1/gpus: the 1g.5gb in slot 1 reads GPU_I_ID 5 (busy), slot 2 reads 6.
  std::vector<GpuView> gpus = (*d)->Gpus();
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[1].label, "a/0/mig1-1g.5gb");
  EXPECT_EQ(gpus[1].mig_profile, "1g.5gb");
  EXPECT_EQ(gpus[1].type, "A100-SXM4-40GB-MIG-1g.5gb");
  EXPECT_DOUBLE_EQ(gpus[1].memory_mib, 4.75 * 1024);
  ASSERT_TRUE(gpus[1].live);
  EXPECT_EQ(gpus[1].live->key.gpu_instance, 5);
  EXPECT_DOUBLE_EQ(*gpus[1].live->load.gr_engine_active, 0.9);
  ASSERT_TRUE(gpus[2].live);
  EXPECT_EQ(gpus[2].live->key.gpu_instance, 6);
  ASSERT_TRUE(gpus[0].live);
  EXPECT_EQ(gpus[0].live->key.gpu_instance, 1);
  EXPECT_FALSE(gpus[3].live);  // b/0: no exporter there

  // The task goes to the idle 1g.5gb (slot 2), not the busy one with the lower id.
  TaskSpec s;
  s.model = "resnet50";
  s.num_batches = 100;
  auto t = (*d)->Submit(s);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  (*d)->RunPassForTest();
  TaskRecord r = *(*d)->Get(t->record.id);
  EXPECT_EQ(r.state, TaskState::kRunning);
  EXPECT_EQ(r.gpu, 2);
  EXPECT_EQ(cluster.GpuLabel(r.gpu), "a/0/mig2-1g.5gb");

  // /healthz: degraded, naming the undeclared instance.
  DaemonHealth h = (*d)->Health();
  EXPECT_TRUE(h.degraded);
  std::string reasons;
  for (const std::string& x : h.reasons) reasons += x + "\n";
  EXPECT_NE(reasons.find("MIG instance a/0 GPU_I_ID 3 (2g.10gb) is not declared in the cluster file"),
            std::string::npos)
      << reasons;
  (*d)->Stop();
}

// The local executor gives a MIG instance's task CUDA_VISIBLE_DEVICES=MIG-… when telemetry
// reports the instance's own UUID, and refuses it otherwise (the GPU index would make CUDA pick
// the GPU's first instance); a whole GPU gets its index.
TEST(DaemonMig, TheExecutorNamesAnInstanceByItsMigUuidOrRefusesIt) {
  const sched::Cluster cluster = MigCluster();
  const std::string dir = hase::testing::FreshDir("mig_exec");
  HttpStub exporter;
  // GPU_I_ID 5 labelled with a MIG device UUID, GPU_I_ID 6 with the GPU's (dcgm-exporter's usual).
  const std::string base = "gpu=\"0\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"a\"";
  exporter.SetBody("# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
                   "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + base +
                   ",UUID=\"MIG-2f6c-5\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"5\"} 0\n"
                   "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + base +
                   ",UUID=\"GPU-4a9f3c1e\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"6\"} 0.5\n"
                   "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + base +
                   ",UUID=\"GPU-4a9f3c1e\",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"1\"} 0.9\n");
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), "a"}};
  so.timeout_s = 0.5;
  so.nodes.nodes = {"a", "b"};
  so.nodes.mig = DeclaredMigInstances(cluster);
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  auto oracle = std::make_shared<sched::TableOracle>();
  oracle->Set("small", "A100-SXM4-40GB-MIG-1g.5gb", 10, 0.8, 2000);
  oracle->Set("t4", "T4", 10, 0.8, 2000);
  DaemonOptions o;
  o.state_dir = dir;
  o.policy = "hase";
  o.executor = true;
  o.tick_s = 0.02;
  o.store.synchronous_full = false;
  auto d = Daemon::Create(cluster, oracle, o, &scraper);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE((*d)->Start().ok());
  auto submit = [&](const std::string& model, const std::string& out) {
    TaskSpec s;
    s.model = model;
    s.num_batches = 10;
    s.command = "echo \"$CUDA_VISIBLE_DEVICES\" > " + dir + "/" + out;
    return (*d)->Submit(s)->record.id;
  };
  auto ended = [&](int64_t id) {
    for (int i = 0; i < 400; ++i) {
      if (IsTerminal((*d)->Get(id)->state)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  // Two 1g.5gb tasks: one on GPU_I_ID 5 (idle, a MIG UUID), one on 6 (only the GPU's UUID).
  const int64_t first = submit("small", "first");
  ASSERT_TRUE(ended(first));
  EXPECT_EQ((*d)->Get(first)->state, TaskState::kSucceeded) << (*d)->Get(first)->reason;
  EXPECT_EQ(cluster.GpuLabel((*d)->Get(first)->gpu), "a/0/mig1-1g.5gb");
  EXPECT_EQ(hase::testing::ReadFileForTest(dir + "/first"), "MIG-2f6c-5\n");
  const int64_t t4 = submit("t4", "t4");
  ASSERT_TRUE(ended(t4));
  EXPECT_EQ(hase::testing::ReadFileForTest(dir + "/t4"), "0\n");  // a whole GPU: its index
  // Busy the first instance so the next task goes to slot 2, whose device has no name.
  TaskSpec hold;
  hold.model = "small";
  hold.num_batches = 10;
  hold.command = "sleep 3";
  const int64_t holder = (*d)->Submit(hold)->record.id;
  for (int i = 0; i < 200 && (*d)->Get(holder)->pid == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const int64_t second = submit("small", "second");
  ASSERT_TRUE(ended(second));
  const TaskRecord r = *(*d)->Get(second);
  if (cluster.GpuLabel(r.gpu) == "a/0/mig2-1g.5gb") {
    EXPECT_EQ(r.state, TaskState::kFailed);
    EXPECT_NE(r.reason.find("is a MIG instance whose MIG device UUID hase does not know"), std::string::npos)
        << r.reason;
    EXPECT_FALSE(std::filesystem::exists(dir + "/second")) << hase::testing::ReadFileForTest(dir + "/second");
  } else {
    ADD_FAILURE() << "expected slot 2, got " << cluster.GpuLabel(r.gpu);
  }
  (void)(*d)->Cancel(holder);
  (*d)->Stop();
}

}  // namespace
}  // namespace hase::service
