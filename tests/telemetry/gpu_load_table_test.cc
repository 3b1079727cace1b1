#include "hase/telemetry/gpu_load_table.h"

#include <cmath>

#include <gtest/gtest.h>

#include "hase/telemetry/dcgm_fields.h"
#include "fixture.h"
#include "testing.h"

namespace hase::telemetry {
namespace {

std::vector<PromSample> Samples(const std::string& fixture) {
  std::string text = hase::testing::ReadFileForTest(hase::testing::SourceDir() + "/tests/data/telemetry/" + fixture);
  auto r = ParsePromText(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->samples : std::vector<PromSample>{};
}

// A stand-in for the hw catalog's name resolution: strips the vendor prefix.
std::optional<std::string> Resolve(std::string_view model) {
  if (model == "NVIDIA A100-SXM4-40GB") return "A100-SXM4-40GB";
  if (model == "NVIDIA H100 80GB HBM3") return "H100-SXM5-80GB";
  return std::nullopt;
}

TEST(DcgmFields, BlankSentinels) {
  EXPECT_TRUE(IsDcgmBlank(9223372036854775794.0));  // DCGM_INT64_NOT_SUPPORTED
  EXPECT_TRUE(IsDcgmBlank(9223372036854775792.0));  // DCGM_INT64_BLANK
  EXPECT_TRUE(IsDcgmBlank(2147483632.0));           // DCGM_INT32_BLANK
  EXPECT_TRUE(IsDcgmBlank(2147483634.0));           // DCGM_INT32_NOT_SUPPORTED
  EXPECT_TRUE(IsDcgmBlank(140737488355328.0));      // DCGM_FP64_BLANK
  EXPECT_TRUE(IsDcgmBlank(std::nan("")));
  EXPECT_FALSE(IsDcgmBlank(0.0));
  EXPECT_FALSE(IsDcgmBlank(1410.0));
  EXPECT_FALSE(IsDcgmBlank(3920114337.0));  // an energy counter above INT32 blanks is real
}

TEST(DcgmFields, SetFieldUnitsAndRanges) {
  LoadSnapshot s;
  EXPECT_TRUE(SetDcgmField(s, kDcgmGpuUtil, 87));
  EXPECT_DOUBLE_EQ(*s.gpu_util, 0.87);
  EXPECT_TRUE(SetDcgmField(s, kDcgmDramActive, 1.004));  // rounding noise: clamped
  EXPECT_DOUBLE_EQ(*s.dram_active, 1.0);
  EXPECT_FALSE(SetDcgmField(s, kDcgmSmActive, 42));  // impossible ratio: not stored
  EXPECT_FALSE(s.sm_active.has_value());
  EXPECT_FALSE(SetDcgmField(s, "DCGM_FI_DEV_GPU_TEMP", 40));  // not a load field
  EXPECT_FALSE(SetDcgmField(s, kDcgmSmClock, 9223372036854775794.0));
  EXPECT_FALSE(s.sm_clock_mhz.has_value());
}

TEST(GroupDcgmSamples, DefaultCountersOldHostnameLabel) {
  auto samples = Samples("dcgm_node1_a100_default.prom");
  GroupResult g = GroupDcgmSamples(samples, "fallback", 1000.0, Resolve);
  ASSERT_EQ(g.gpus.size(), 2u);
  EXPECT_TRUE(g.warnings.empty());
  const GpuObservation& busy = g.gpus[1];
  EXPECT_EQ(busy.key.host, "node1");
  EXPECT_EQ(busy.key.index, 1);
  EXPECT_EQ(busy.uuid, "GPU-7c3e9d21-5b4a-8f6e-1d2c-9e0b3a5f7d42");
  EXPECT_EQ(busy.model_name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(busy.gpu_type, "A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(busy.sample_time_s, 1000.0);
  EXPECT_EQ(busy.fields, 7);  // SM_CLOCK GPU_UTIL FB_FREE FB_USED GR_ENGINE TENSOR DRAM
  EXPECT_FALSE(busy.load.sm_active.has_value());  // off by default
  EXPECT_FALSE(busy.load.sm_occupancy.has_value());
  EXPECT_DOUBLE_EQ(*busy.load.gpu_util, 0.87);
  EXPECT_DOUBLE_EQ(*busy.load.gr_engine_active, 0.812345);
  EXPECT_DOUBLE_EQ(*busy.load.dram_active, 0.43321);
  EXPECT_DOUBLE_EQ(*busy.load.fb_used_mib, 22208);
  EXPECT_DOUBLE_EQ(*busy.load.sm_clock_mhz, 1095);
  // Documented fallbacks: SM_ACTIVE ← GR_ENGINE_ACTIVE, SM_OCCUPANCY ← 0.5 × that.
  EXPECT_DOUBLE_EQ(busy.load.EffectiveSmActive(), 0.812345);
  EXPECT_DOUBLE_EQ(busy.load.EffectiveSmOccupancy(), 0.4061725);
  EXPECT_DOUBLE_EQ(g.gpus[0].load.EffectiveSmActive(), 0.0);
}

TEST(GroupDcgmSamples, NewHostnameLabelKubernetesAndBlanks) {
  auto samples = Samples("dcgm_node2_h100_t4_k8s.prom");
  GroupResult g = GroupDcgmSamples(samples, "fallback", 5.0, Resolve);
  ASSERT_EQ(g.gpus.size(), 2u);
  const GpuObservation& h100 = g.gpus[0];
  EXPECT_EQ(h100.key.host, "node2");
  EXPECT_EQ(h100.gpu_type, "H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(*h100.load.sm_active, 0.912);
  EXPECT_DOUBLE_EQ(h100.load.EffectiveSmOccupancy(), 0.3875);
  EXPECT_DOUBLE_EQ(*h100.load.gpu_util, 1.0);
  const GpuObservation& t4 = g.gpus[1];
  EXPECT_EQ(t4.model_name, "Tesla T4");
  EXPECT_EQ(t4.gpu_type, "");  // resolver does not know it
  EXPECT_FALSE(t4.load.sm_clock_mhz.has_value());   // INT64 NOT_SUPPORTED sentinel
  EXPECT_FALSE(t4.load.sm_active.has_value());      // FP64 blank
  EXPECT_FALSE(t4.load.sm_occupancy.has_value());   // NaN
  // SM_ACTIVE is blank, so the GR_ENGINE_ACTIVE fallback applies.
  EXPECT_DOUBLE_EQ(t4.load.EffectiveSmActive(), 0.118);
}

TEST(GroupDcgmSamples, FallbackHostTimestampsMigAndBadGpuLabels) {
  auto r = ParsePromText(
      "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"3\",UUID=\"GPU-x\"} 0.5 1700000000000\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"3\",UUID=\"GPU-x\"} 50 1699999990000\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",GPU_I_ID=\"1\",Hostname=\"n\"} 10\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"x\",Hostname=\"n\"} 10\n"
      "DCGM_FI_DEV_GPU_UTIL{Hostname=\"n\"} 10\n"
      "go_goroutines 12\n");
  ASSERT_TRUE(r.ok());
  GroupResult g = GroupDcgmSamples(r->samples, "nodeA", 2e9, nullptr);
  // n/0 (one MIG instance, folded), that instance n/0 GPU_I_ID 1, and nodeA/3.
  ASSERT_EQ(g.gpus.size(), 3u);
  EXPECT_EQ(g.gpus[0].key.host, "n");
  EXPECT_EQ(g.gpus[0].mig_instances, 1);
  EXPECT_DOUBLE_EQ(*g.gpus[0].load.gpu_util, 0.10);
  EXPECT_EQ(g.gpus[1].key.gpu_instance, 1);
  EXPECT_DOUBLE_EQ(*g.gpus[1].load.gpu_util, 0.10);
  EXPECT_EQ(g.gpus[2].key.host, "nodeA");
  EXPECT_EQ(g.gpus[2].key.index, 3);
  EXPECT_DOUBLE_EQ(g.gpus[2].sample_time_s, 1699999990.0);  // the oldest field dates it
  EXPECT_EQ(g.warnings.size(), 2u);
}

TEST(GpuLoadTable, AgesAndNewerWins) {
  GpuLoadTable t;
  GpuObservation a;
  a.key = {"n1", 0};
  a.uuid = "GPU-a";
  a.sample_time_s = 100;
  a.load.gpu_util = 0.2;
  t.Update(std::vector<GpuObservation>{a});
  auto got = t.Get({"n1", 0}, 130);
  ASSERT_TRUE(got);
  EXPECT_DOUBLE_EQ(got->load.age_s, 30);
  GpuObservation older = a;
  older.sample_time_s = 90;
  older.load.gpu_util = 0.9;
  t.Update(std::vector<GpuObservation>{older});  // ignored: older than what is stored
  EXPECT_DOUBLE_EQ(*t.Get({"n1", 0}, 130)->load.gpu_util, 0.2);
  EXPECT_TRUE(t.GetByUuid("GPU-a", 100));
  EXPECT_FALSE(t.GetByUuid("GPU-b", 100));
  EXPECT_FALSE(t.Get({"n1", 1}, 100));
  EXPECT_EQ(t.All(100).size(), 1u);
}

// Issue #15 (6c): one scrape stamped in year 2100 froze that GPU's load forever (every later
// scrape was "older"). Samples are dated no later than the scrape that read them.
TEST(GroupDcgmSamples, FutureTimestampsAreClampedToTheScrape) {
  auto r = ParsePromText("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"n\"} 99 4102444800000\n");
  ASSERT_TRUE(r.ok());
  GroupResult g = GroupDcgmSamples(r->samples, "n", 1.7e9, nullptr);
  ASSERT_EQ(g.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(g.gpus[0].sample_time_s, 1.7e9);
  EXPECT_EQ(g.warnings.size(), 1u);
  GpuLoadTable t;
  t.Update(g.gpus);
  auto later = ParsePromText("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"n\"} 5\n");
  ASSERT_TRUE(later.ok());
  t.Update(GroupDcgmSamples(later->samples, "n", 1.7e9 + 10, nullptr).gpus);
  EXPECT_DOUBLE_EQ(*t.Get({"n", 0}, 1.7e9 + 10)->load.gpu_util, 0.05);  // the new reading wins
}

}  // namespace
}  // namespace hase::telemetry
