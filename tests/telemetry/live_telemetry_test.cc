// Telemetry that stays true (issue #14): MIG instances fold into their GPU, blank FB values
// are missing, host labels resolve to cluster nodes, missing fields are named, and a refused
// Prometheus query carries Prometheus's own message.
#include <cmath>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "hase/telemetry/dcgm_fields.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "hase/telemetry/gpu_load_table.h"
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
  ASSERT_EQ(g.gpus.size(), 2u);
  const GpuObservation& mig = g.gpus[0];
  EXPECT_EQ(mig.mig_instances, 3);
  EXPECT_NEAR(*mig.load.gr_engine_active, (3 * 1.0 + 2 * 0.5 + 2 * 0) / 7, 1e-12);
  EXPECT_DOUBLE_EQ(*mig.load.fb_used_mib, 19000);  // the blank instance is missing, not 4 G
  EXPECT_EQ(mig.fields, 2);
  EXPECT_EQ(g.gpus[1].mig_instances, 0);
  EXPECT_DOUBLE_EQ(*g.gpus[1].load.gr_engine_active, 0.25);
  // Health names it as a fallback in use, not as degraded.
  TelemetryHealth h;
  h.reasons.clear();
  AddFieldHealth(g.gpus, h);
  bool named = false;
  for (const std::string& n : h.notes) named = named || n.find("a/0 is MIG-partitioned (3 instances)") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_TRUE(h.reasons.empty());
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
  EXPECT_NE(notes.find("DCGM_FI_PROF_SM_ACTIVE not reported by 2 of 2 GPUs (first a/0): fallback in use: GR_ENGINE_ACTIVE"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("DCGM_FI_PROF_SM_OCCUPANCY not reported by 2 of 2 GPUs"), std::string::npos) << notes;
  EXPECT_NE(notes.find("DCGM_FI_PROF_DRAM_ACTIVE"), std::string::npos) << notes;
  EXPECT_NE(notes.find("DCGM_FI_DEV_FB_FREE not reported by 2 of 2 GPUs"), std::string::npos) << notes;
  ASSERT_EQ(h.reasons.size(), 1u);
  EXPECT_NE(h.reasons[0].find("a/1 reports none of DCGM_FI_PROF_SM_ACTIVE"), std::string::npos) << h.reasons[0];
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
