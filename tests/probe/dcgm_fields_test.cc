#include "dcgm_fields.h"
#include "load_sampler.h"
#include "nvml_device.h"

#include <vector>

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

TEST(DcgmFields, GpmPercentagesBecomeRatios) {
  NvmlReading r;
  r.gpu_util_pct = 87;
  r.mem_copy_util_pct = 40;
  r.fb_used_bytes = 2.0 * 1024 * 1024 * 1024;  // 2 GiB
  r.fb_free_bytes = 1024.0 * 1024;             // 1 MiB
  r.sm_clock_mhz = 1980;
  r.gpm_sm_util_pct = 50;
  r.gpm_sm_occupancy_pct = 12.5;
  r.gpm_dram_bw_util_pct = 30;
  r.gpm_any_tensor_util_pct = 0;
  r.gpm_graphics_util_pct = 90;
  LoadSnapshot s = ToLoadSnapshot(r);
  EXPECT_DOUBLE_EQ(*s.sm_active, 0.5);
  EXPECT_DOUBLE_EQ(*s.sm_occupancy, 0.125);
  EXPECT_DOUBLE_EQ(*s.dram_active, 0.3);
  EXPECT_DOUBLE_EQ(*s.pipe_tensor_active, 0.0);
  EXPECT_DOUBLE_EQ(*s.gr_engine_active, 0.9);
  EXPECT_DOUBLE_EQ(*s.gpu_util, 0.87);
  EXPECT_DOUBLE_EQ(*s.fb_used_mib, 2048);
  EXPECT_DOUBLE_EQ(*s.fb_free_mib, 1);
  EXPECT_DOUBLE_EQ(*s.sm_clock_mhz, 1980);

  const auto& names = DcgmFieldNames();
  const auto values = DcgmValues(r);
  ASSERT_EQ(names.size(), values.size());
  EXPECT_EQ(names[0], "DCGM_FI_PROF_SM_ACTIVE");
  EXPECT_DOUBLE_EQ(*values[0], 0.5);
  EXPECT_EQ(names[5], "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_DOUBLE_EQ(*values[5], 87);  // DCGM reports GPU_UTIL in percent
  EXPECT_EQ(names[7], "DCGM_FI_DEV_FB_USED");
  EXPECT_DOUBLE_EQ(*values[7], 2048);
}

TEST(DcgmFields, WithoutGpmProfFieldsStayEmpty) {
  NvmlReading r;
  r.gpu_util_pct = 100;
  LoadSnapshot s = ToLoadSnapshot(r);
  EXPECT_FALSE(s.sm_active.has_value());
  EXPECT_FALSE(s.dram_active.has_value());
  EXPECT_DOUBLE_EQ(s.EffectiveSmActive(), 1.0);  // falls back to GPU_UTIL
}

TEST(DcgmFields, AverageSkipsMissingValues) {
  std::vector<NvmlReading> rs(3);
  rs[0].t_s = 0; rs[0].gpu_util_pct = 10;
  rs[1].t_s = 1; rs[1].gpu_util_pct = 20; rs[1].gpm_sm_util_pct = 40;
  rs[2].t_s = 2; rs[2].gpu_util_pct = 60; rs[2].gpm_sm_util_pct = 60;
  NvmlReading a = AverageReadings(rs);
  EXPECT_DOUBLE_EQ(a.t_s, 1.0);
  EXPECT_DOUBLE_EQ(*a.gpu_util_pct, 30.0);
  EXPECT_DOUBLE_EQ(*a.gpm_sm_util_pct, 50.0);  // the first reading had no GPM window
  EXPECT_FALSE(a.fb_used_bytes.has_value());
  EXPECT_FALSE(AverageReadings({}).gpu_util_pct.has_value());
}

TEST(LoadSampler, SamplesWithAFakeReaderUntilStopped) {
  int calls = 0;
  LoadSampler sampler(
      [&calls]() -> Result<NvmlReading> {
        NvmlReading r;
        r.gpu_util_pct = ++calls;
        return r;
      },
      5);
  sampler.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  std::vector<NvmlReading> rs = sampler.Stop();
  ASSERT_GE(rs.size(), 2u);  // one at start, one at stop, more in between
  EXPECT_DOUBLE_EQ(*rs[0].gpu_util_pct, 1);
  for (size_t i = 1; i < rs.size(); ++i) EXPECT_GE(rs[i].t_s, rs[i - 1].t_s);
  EXPECT_TRUE(sampler.last_error().ok());
  EXPECT_TRUE(sampler.Stop().empty());  // stopping twice is a no-op
}

TEST(LoadSampler, KeepsTheFirstReaderError) {
  LoadSampler sampler([]() -> Result<NvmlReading> { return Status::Internal("nvml broke"); }, 5);
  sampler.Start();
  EXPECT_TRUE(sampler.Stop().empty());
  EXPECT_TRUE(sampler.last_error().IsInternal());
}

TEST(NvmlDevice, UnknownBusIdOrNoDriverIsNotFound) {
  // On a build machine libnvidia-ml.so.1 is absent; on a GPU machine the bus id does not exist.
  auto d = NvmlDevice::Open("ffff:ff:ff.f");
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(d.status().IsNotFound()) << d.status().ToString();
}

}  // namespace
}  // namespace hase::probe
