// Telemetry that stays true (issue #14): MIG instances fold into their GPU, blank FB values
// are missing, host labels resolve to cluster nodes, missing fields are named, and a refused
// Prometheus query carries Prometheus's own message.
#include <cmath>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "hase/telemetry/dcgm_fields.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/mig_match.h"
#include "hase/telemetry/node_map.h"
#include "hase/telemetry/prom_api_client.h"
#include "hase/telemetry/prom_load_source.h"
#include "http_stub.h"

namespace hase::telemetry {
namespace {

using hase::testing::HttpStub;

std::vector<PromSample> Parse(const std::string& text) {
  auto r = ParsePromText(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->samples : std::vector<PromSample>{};
}

TEST(LiveTelemetry, FbUsedUint32MaxIsABlank) {
  EXPECT_TRUE(IsDcgmBlank(4294967295.0));
  LoadSnapshot s;
  EXPECT_FALSE(SetDcgmField(s, kDcgmFbUsed, 4294967295.0));
  EXPECT_FALSE(s.fb_used_mib.has_value());
  // An average that mixed a blank in (Prometheus over a window) is no size either.
  EXPECT_FALSE(SetDcgmField(s, kDcgmFbUsed, (4294967295.0 + 10000) / 2));
  EXPECT_TRUE(SetDcgmField(s, kDcgmFbUsed, 60559));
  EXPECT_DOUBLE_EQ(*s.fb_used_mib, 60559);
}

// An A100 split into a 3g and two 2g instances (dcgm-exporter's MIG labels): PROF ratios are
// weighted by compute slices out of 7, memory summed, GPU_UTIL the largest.
TEST(LiveTelemetry, MigInstancesFoldIntoTheirGpu) {
  auto samples = Parse(
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-m\",GPU_I_ID=\"1\",GPU_I_PROFILE=\"3g.20gb\",Hostname=\"a\"} 1.0\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-m\",GPU_I_ID=\"5\",GPU_I_PROFILE=\"2g.10gb\",Hostname=\"a\"} 0.5\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-m\",GPU_I_ID=\"6\",GPU_I_PROFILE=\"2g.10gb\",Hostname=\"a\"} 0\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-m\",GPU_I_ID=\"1\",GPU_I_PROFILE=\"3g.20gb\",Hostname=\"a\"} 15000\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-m\",GPU_I_ID=\"5\",GPU_I_PROFILE=\"2g.10gb\",Hostname=\"a\"} 4000\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-m\",GPU_I_ID=\"6\",GPU_I_PROFILE=\"2g.10gb\",Hostname=\"a\"} 4294967295\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",UUID=\"GPU-w\",Hostname=\"a\"} 0.25\n");
  GroupResult g = GroupDcgmSamples(samples, "", 100, nullptr);
  ASSERT_EQ(g.gpus.size(), 5u);  // a/0, its instances 1, 5, 6, then a/1
  const GpuObservation& mig = g.gpus[0];
  EXPECT_EQ(mig.mig_instances, 3);
  EXPECT_NEAR(*mig.load.gr_engine_active, (3 * 1.0 + 2 * 0.5 + 2 * 0) / 7, 1e-12);
  EXPECT_DOUBLE_EQ(*mig.load.fb_used_mib, 19000);  // the blank instance is missing, not 4 G
  EXPECT_EQ(mig.fields, 2);
  EXPECT_EQ(g.gpus[4].mig_instances, 0);
  EXPECT_DOUBLE_EQ(*g.gpus[4].load.gr_engine_active, 0.25);
  // Health, with the GPU declared whole (no cluster MIG): a note, not degraded for MIG.
  TelemetryHealth h;
  AddFieldHealth(g.gpus, h);
  bool named = false;
  for (const std::string& n : h.notes) named = named || n.find("a/0 is MIG-partitioned (3 instances) but declared whole") != std::string::npos;
  EXPECT_TRUE(named);
  for (const std::string& r : h.reasons) EXPECT_EQ(r.find("MIG"), std::string::npos) << r;
}

// dcgm-exporter's MIG series as it prints them (labels gpu, UUID, device, modelName,
// GPU_I_PROFILE, GPU_I_ID, Hostname; dcgm-exporter pkg/counters): an A100 with a 3g.20gb, a
// 2g.10gb and two 1g.5gb instances. Each instance is an observation of its own.
constexpr const char* kMigExposition =
    "# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.\n"
    "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"2\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.6\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"2g.10gb\",GPU_I_ID=\"3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.1\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"9\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.9\n"
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"7\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.25\n"
    "# TYPE DCGM_FI_PROF_DRAM_ACTIVE gauge\n"
    "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"2\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.3\n"
    "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"2g.10gb\",GPU_I_ID=\"3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.05\n"
    "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"9\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.4\n"
    "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"7\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 0.125\n"
    "# TYPE DCGM_FI_DEV_FB_USED gauge\n"
    "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"2\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 12000\n"
    "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"2g.10gb\",GPU_I_ID=\"3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 13\n"
    "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"9\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 3000\n"
    "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33\",device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"7\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"535.129.03\"} 1024\n";

TEST(LiveTelemetry, MigInstancesAreObservationsOfTheirOwn) {
  GroupResult g = GroupDcgmSamples(Parse(kMigExposition), "", 100, nullptr);
  ASSERT_EQ(g.gpus.size(), 5u);  // node-a/0, then GPU_I_ID 2, 3, 7, 9
  EXPECT_EQ(g.gpus[0].key.gpu_instance, -1);
  EXPECT_EQ(g.gpus[0].mig_instances, 4);
  // Folded: GR_ENGINE (3·0.6 + 2·0.1 + 0.9 + 0.25) / 7.
  EXPECT_NEAR(*g.gpus[0].load.gr_engine_active, (3 * 0.6 + 2 * 0.1 + 0.9 + 0.25) / 7, 1e-12);
  const GpuObservation& i7 = g.gpus[3];
  EXPECT_EQ(i7.key.host, "node-a");
  EXPECT_EQ(i7.key.index, 0);
  EXPECT_EQ(i7.key.gpu_instance, 7);
  EXPECT_EQ(i7.mig_profile, "1g.5gb");
  EXPECT_EQ(i7.uuid, "GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33");
  EXPECT_DOUBLE_EQ(*i7.load.gr_engine_active, 0.25);
  EXPECT_DOUBLE_EQ(*i7.load.dram_active, 0.125);
  EXPECT_DOUBLE_EQ(*i7.load.fb_used_mib, 1024);
  EXPECT_EQ(i7.fields, 3);
  EXPECT_EQ(g.gpus[1].mig_profile, "3g.20gb");
  EXPECT_DOUBLE_EQ(*g.gpus[1].load.gr_engine_active, 0.6);
  // The table finds them by their GPU; GetByUuid still answers the whole GPU.
  GpuLoadTable t;
  t.Update(g.gpus);
  std::vector<GpuObservation> inst = t.Instances("node-a", 0, 100);
  ASSERT_EQ(inst.size(), 4u);
  EXPECT_EQ(inst[0].key.gpu_instance, 2);
  EXPECT_EQ(inst[3].key.gpu_instance, 9);
  EXPECT_EQ(t.GetByUuid("GPU-4a9f3c1e-7d2b-4e8a-9c61-0b5d2e7f1a33", 100)->key.gpu_instance, -1);
  EXPECT_TRUE(t.Instances("node-a", 1, 100).empty());
  // MIG reconfigured: the next read has only GPU_I_ID 2; 3, 7 and 9 leave the table.
  std::string one;
  std::istringstream in(kMigExposition);
  for (std::string line; std::getline(in, line);) {
    if (line[0] == '#' || line.find("GPU_I_ID=\"2\"") != std::string::npos) one += line + "\n";
  }
  GroupResult later = GroupDcgmSamples(Parse(one), "", 200, nullptr);
  ASSERT_EQ(later.gpus.size(), 2u);
  t.Update(later.gpus);
  inst = t.Instances("node-a", 0, 200);
  ASSERT_EQ(inst.size(), 1u);
  EXPECT_EQ(inst[0].key.gpu_instance, 2);
  EXPECT_EQ(t.Get({"node-a", 0}, 200)->mig_instances, 1);
}

TEST(LiveTelemetry, MigSeriesMatchDeclaredInstances) {
  GroupResult g = GroupDcgmSamples(Parse(kMigExposition), "", 100, nullptr);
  std::vector<GpuObservation> seen(g.gpus.begin() + 1, g.gpus.end());  // GPU_I_ID 2, 3, 7, 9
  // File order: 1g.5gb pinned to gi 9, 3g.20gb, 1g.5gb (takes the lowest free 1g.5gb: 7), 2g.10gb.
  std::vector<MigInstanceDecl> decl = {{"1g.5gb", 9}, {"3g.20gb", -1}, {"1g.5gb", -1}, {"MIG 2g.10gb", -1}};
  MigMatch m = MatchMigInstances(decl, seen);
  ASSERT_EQ(m.declared_to_seen.size(), 4u);
  EXPECT_EQ(seen[m.declared_to_seen[0]].key.gpu_instance, 9);
  EXPECT_EQ(seen[m.declared_to_seen[1]].key.gpu_instance, 2);
  EXPECT_EQ(seen[m.declared_to_seen[2]].key.gpu_instance, 7);
  EXPECT_EQ(seen[m.declared_to_seen[3]].key.gpu_instance, 3);
  EXPECT_TRUE(m.undeclared.empty());
  // Declaring only the 3g.20gb and one 1g.5gb leaves 2g.10gb (3) and 1g.5gb (9) undeclared;
  // a pin whose profile disagrees takes nothing.
  std::vector<MigInstanceDecl> part = {{"3g.20gb", -1}, {"1g.5gb", -1}, {"4g.20gb", 3}};
  m = MatchMigInstances(part, seen);
  EXPECT_EQ(seen[m.declared_to_seen[1]].key.gpu_instance, 7);
  EXPECT_EQ(m.declared_to_seen[2], -1);
  ASSERT_EQ(m.undeclared.size(), 2u);
  EXPECT_EQ(seen[m.undeclared[0]].key.gpu_instance, 3);
  EXPECT_EQ(seen[m.undeclared[1]].key.gpu_instance, 9);
}

TEST(LiveTelemetry, UndeclaredMigSeriesDegradeHealthByName) {
  GroupResult g = GroupDcgmSamples(Parse(kMigExposition), "", 100, nullptr);
  NodeMap map;
  map.nodes = {"node-a"};
  // The cluster declares three of the four instances, plus a 1g.5gb pinned to gi 12 (absent).
  map.mig[{"node-a", 0}] = {{"3g.20gb", -1}, {"1g.5gb", -1}, {"2g.10gb", -1}, {"1g.5gb", 12}};
  TelemetryHealth h;
  AddFieldHealth(g.gpus, h, map);
  std::string reasons;
  for (const std::string& r : h.reasons) reasons += r + "\n";
  EXPECT_NE(reasons.find("MIG instance node-a/0 GPU_I_ID 9 (1g.5gb) is not declared in the cluster file"),
            std::string::npos)
      << reasons;
  EXPECT_NE(reasons.find("node-a/0/mig3-1g.5gb (declared with gi 12) has no DCGM series"), std::string::npos)
      << reasons;
  EXPECT_EQ(h.reasons.size(), 2u) << reasons;  // the matched instances report every needed field
  for (const std::string& n : h.notes) EXPECT_EQ(n.find("declared whole"), std::string::npos) << n;
  // A partitioned GPU whose exporter sends no instance series.
  NodeMap other = map;
  other.mig.clear();
  other.mig[{"node-a", 1}] = {{"7g.40gb", -1}};
  auto whole = Parse("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",Hostname=\"node-a\"} 0.5\n");
  TelemetryHealth h2;
  AddFieldHealth(GroupDcgmSamples(whole, "", 100, nullptr).gpus, h2, other);
  ASSERT_FALSE(h2.reasons.empty());
  EXPECT_NE(h2.reasons[0].find("node-a/1 is declared with 1 MIG instances but DCGM reports no GPU_I_ID series"),
            std::string::npos)
      << h2.reasons[0];
}

TEST(LiveTelemetry, MissingFieldsAreNamedWithTheirFallback) {
  auto samples = Parse(
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",Hostname=\"a\"} 0.5\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",Hostname=\"a\"} 100\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",Hostname=\"a\"} 100\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"a\"} 2147483632\n");  // blank: no activity at all
  GroupResult g = GroupDcgmSamples(samples, "", 100, nullptr);
  TelemetryHealth h;
  AddFieldHealth(g.gpus, h);
  std::string notes;
  for (const std::string& n : h.notes) notes += n + "\n";
  // Off in dcgm-exporter's default counters, with a fallback: notes naming the GPUs.
  EXPECT_NE(notes.find("DCGM_FI_PROF_SM_ACTIVE not reported by 1 of 2 GPUs (a/0): fallback in use: GR_ENGINE_ACTIVE"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("DCGM_FI_PROF_SM_OCCUPANCY not reported by 2 of 2 GPUs (a/0, a/1)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("DCGM_FI_DEV_FB_FREE not reported by 2 of 2 GPUs (a/0, a/1): fallback in use: FB_USED"),
            std::string::npos)
      << notes;
  EXPECT_EQ(notes.find("DRAM_ACTIVE"), std::string::npos) << notes;
  // On in the default counters, without a fallback: degraded, naming the field and the GPUs.
  std::string reasons;
  for (const std::string& r : h.reasons) reasons += r + "\n";
  ASSERT_EQ(h.reasons.size(), 2u) << reasons;
  EXPECT_NE(h.reasons[0].find("DCGM_FI_PROF_DRAM_ACTIVE not reported by 2 of 2 GPUs (a/0, a/1)"), std::string::npos)
      << reasons;
  EXPECT_NE(h.reasons[1].find("a/1 reports none of DCGM_FI_PROF_SM_ACTIVE"), std::string::npos) << reasons;
}

TEST(LiveTelemetry, GpuUtilAloneAndNoMemoryFieldsAreDegraded) {
  auto samples = Parse(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"b\"} 40\n"
      "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",Hostname=\"b\"} 0.1\n");
  TelemetryHealth h;
  AddFieldHealth(GroupDcgmSamples(samples, "", 100, nullptr).gpus, h);
  std::string reasons;
  for (const std::string& r : h.reasons) reasons += r + "\n";
  ASSERT_EQ(h.reasons.size(), 2u) << reasons;
  EXPECT_NE(reasons.find("DCGM_FI_PROF_SM_ACTIVE and DCGM_FI_PROF_GR_ENGINE_ACTIVE not reported by 1 of 1 GPUs (b/0): "
                         "only DCGM_FI_DEV_GPU_UTIL"),
            std::string::npos)
      << reasons;
  EXPECT_NE(reasons.find("neither DCGM_FI_DEV_FB_USED nor DCGM_FI_DEV_FB_FREE reported by 1 of 1 GPUs (b/0)"),
            std::string::npos)
      << reasons;
}

TEST(LiveTelemetry, HostLabelsResolveToClusterNodes) {
  auto samples = Parse(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",Hostname=\"localhost\"} 50\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-1\",Hostname=\"dcgm-exporter-x7k2p\"} 50\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",UUID=\"GPU-2\",Hostname=\"node-b\"} 50\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"3\",UUID=\"GPU-3\",Hostname=\"localhost\"} 50\n");
  NodeMap map;
  map.nodes = {"node-a", "node-b", "node-c"};
  map.uuid_to_node = {{"GPU-3", "node-c"}};
  std::vector<GpuObservation> gpus = GroupDcgmSamples(samples, "", 100, nullptr).gpus;
  std::vector<std::string> unresolved = ResolveNodes(gpus, map, "node-a", "http://x:9400/metrics");
  EXPECT_TRUE(unresolved.empty());
  ASSERT_EQ(gpus.size(), 4u);
  std::map<std::string, std::string> node_of;  // UUID → node
  for (const GpuObservation& g : gpus) node_of[g.uuid] = g.key.host;
  EXPECT_EQ(node_of["GPU-0"], "node-a");  // "localhost": the target's node (--dcgm URL=node-a)
  EXPECT_EQ(node_of["GPU-1"], "node-a");  // a pod name: the same
  EXPECT_EQ(node_of["GPU-2"], "node-b");  // a node name: kept
  EXPECT_EQ(node_of["GPU-3"], "node-c");  // the UUID map wins
  // Without a node for the target, "localhost" matches nothing: named, with a hint.
  gpus = GroupDcgmSamples(samples, "", 100, nullptr).gpus;
  unresolved = ResolveNodes(gpus, map, "10.0.0.7", "http://10.0.0.7:9400/metrics");
  ASSERT_EQ(unresolved.size(), 2u);  // the pod name and "localhost" gpu 0 (gpu 3 is mapped)
  EXPECT_NE(unresolved[0].find("Hostname 'dcgm-exporter-x7k2p' (gpu 1, GPU-1)"), std::string::npos) << unresolved[0];
  EXPECT_NE(unresolved[1].find("Hostname 'localhost' (gpu 0, GPU-0) from http://10.0.0.7:9400/metrics matches no cluster node"),
            std::string::npos)
      << unresolved[1];
  EXPECT_NE(unresolved[1].find("--dcgm URL=NODE"), std::string::npos);
  EXPECT_TRUE(ParseUuidNode("GPU-1").status().IsInvalidArgument());
  EXPECT_EQ(ParseUuidNode("GPU-1=node-a")->second, "node-a");
}

TEST(LiveTelemetry, ScraperReportsUnresolvedHostsAsDegraded) {
  HttpStub exporter;
  exporter.SetBody("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",Hostname=\"localhost\"} 50\n");
  DcgmScraperOptions o;
  o.targets = {{exporter.Url(), "127.0.0.1"}};
  o.nodes.nodes = {"node-a"};
  DcgmScraper scraper(o);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  TelemetryHealth h = scraper.Health();
  EXPECT_TRUE(h.degraded);
  std::string all;
  for (const std::string& r : h.reasons) all += r + "\n";
  EXPECT_NE(all.find("Hostname 'localhost' (gpu 0, GPU-0)"), std::string::npos) << all;
  // Named by --dcgm URL=node-a, the same GPU resolves and nothing is degraded for it.
  o.targets = {{exporter.Url(), "node-a"}};
  DcgmScraper named(o);
  ASSERT_TRUE(named.ScrapeOnce().ok());
  EXPECT_TRUE(named.table().Get({"node-a", 0}, WallClockSeconds()).has_value());
  for (const std::string& r : named.Health().reasons) EXPECT_EQ(r.find("matches no cluster node"), std::string::npos) << r;
}

TEST(LiveTelemetry, SampleWeightedQueryText) {
  EXPECT_EQ(SampleWeightedQuery("DCGM_FI_DEV_GPU_UTIL", "{job=\"dcgm\"}", 10),
            "sum by(Hostname,hostname,gpu,UUID,modelName,GPU_I_ID,GPU_I_PROFILE)(sum_over_time("
            "DCGM_FI_DEV_GPU_UTIL{job=\"dcgm\"}[10s])) / "
            "sum by(Hostname,hostname,gpu,UUID,modelName,GPU_I_ID,GPU_I_PROFILE)(count_over_time("
            "DCGM_FI_DEV_GPU_UTIL{job=\"dcgm\"}[10s]))");
  EXPECT_NE(SampleWeightedQuery("m", "job=\"x\"", 1).find("m{job=\"x\"}[1s]"), std::string::npos);
}

// Prometheus refuses a query with HTTP 400 and a JSON body: the error carries its message.
TEST(LiveTelemetry, RefusedQueryShowsPrometheusMessage) {
  httplib::Server server;
  server.Get("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:27: parse error: unexpected \"}\""})",
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  for (int i = 0; i < 200 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  PromApiClient client({"http://127.0.0.1:" + std::to_string(port), 2.0});
  auto r = client.Query("up{");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find("Prometheus answered HTTP 400 (bad_data): invalid parameter \"query\": 1:27: parse error"),
            std::string::npos)
      << r.status().ToString();
  PromLoadSourceOptions po;
  po.base_url = "http://127.0.0.1:" + std::to_string(port);
  po.selector = "{job=";
  PromLoadSource source(po);
  EXPECT_TRUE(source.RefreshOnce().IsInvalidArgument());
  TelemetryHealth h = source.Health();
  EXPECT_TRUE(h.degraded);
  ASSERT_FALSE(h.reasons.empty());
  EXPECT_NE(h.reasons[0].find("bad_data"), std::string::npos) << h.reasons[0];
  server.stop();
  t.join();
}

}  // namespace
}  // namespace hase::telemetry
