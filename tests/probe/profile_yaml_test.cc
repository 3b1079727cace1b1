#include "profile_yaml.h"

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

TEST(ProfileYaml, WritesEveryFigure) {
  MeasuredProfile p;
  p.gpu = "NVIDIA H200";
  p.tool = "hase-probe 0.1 micro";
  p.measured_at = "2026-11-30T12:00:00Z";
  p.driver = "550.54.15";
  p.dram_bandwidth_gbps = 4312.46;
  p.l2_bandwidth_gbps = 9876.5;
  p.fp32_tflops = 51.2345;
  p.fp16_tflops = 98.7;
  p.tensor_fp16_tflops = 701.25;
  p.launch_overhead_us = 2.125;
  p.h2d_gbps = 55.1;
  p.d2h_gbps = 53.9;
  const std::string y = ProfileYaml(p, {{"dram_triad", "GB/s", 4400, "3 x 512 MiB"}});
  EXPECT_EQ(y.find("format: hase-microbenchmark-profile/1\n"), y.find('\n') + 1);
  EXPECT_NE(y.find("gpu: \"NVIDIA H200\"\n"), std::string::npos);
  EXPECT_NE(y.find("driver: \"550.54.15\"\n"), std::string::npos);
  EXPECT_EQ(y.find("host:"), std::string::npos);  // empty fields are left out
  EXPECT_NE(y.find("dram_bandwidth_gbps: 4312.5\n"), std::string::npos);
  EXPECT_NE(y.find("tensor_fp16_tflops: 701.250\n"), std::string::npos);
  EXPECT_NE(y.find("launch_overhead_us: 2.125\n"), std::string::npos);
  EXPECT_NE(y.find("#   dram_triad: 4400 GB/s (3 x 512 MiB)"), std::string::npos);
}

}  // namespace
}  // namespace hase::probe

// The document must read back through hase's own parser (src/hase/hw), figure for figure.
#include "hase/hw/gpu_catalog.h"
#include "hase/hw/microbenchmark_profile.h"

namespace hase::probe {
namespace {

TEST(ProfileYaml, ReadsBackThroughHwParser) {
  MeasuredProfile p;
  p.gpu = "NVIDIA H200";
  p.tool = "hase-probe micro";
  p.host = "gpu-node-1";
  p.dram_bandwidth_gbps = 4012.5;
  p.l2_bandwidth_gbps = 10500;
  p.fp32_tflops = 60.125;
  p.fp16_tflops = 110.5;
  p.tensor_fp16_tflops = 720.25;
  p.launch_overhead_us = 2.5;
  p.h2d_gbps = 51.25;
  p.d2h_gbps = 50.5;
  auto catalog = GpuCatalog::Builtin();
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  auto parsed = ParseMicrobenchmarkProfile(ProfileYaml(p, {{"sgemm", "TFLOP/s", 51, "8192^3"}}),
                                           "probe.yaml", *catalog);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->measured);
  EXPECT_DOUBLE_EQ(parsed->dram_bandwidth_gbps, 4012.5);
  EXPECT_DOUBLE_EQ(parsed->l2_bandwidth_gbps, 10500);
  EXPECT_DOUBLE_EQ(parsed->fp32_tflops, 60.125);
  EXPECT_DOUBLE_EQ(parsed->fp16_tflops, 110.5);
  EXPECT_DOUBLE_EQ(parsed->tensor_fp16_tflops, 720.25);
  EXPECT_DOUBLE_EQ(parsed->launch_overhead_us, 2.5);
  EXPECT_DOUBLE_EQ(parsed->h2d_gbps, 51.25);
  EXPECT_DOUBLE_EQ(parsed->d2h_gbps, 50.5);
  EXPECT_NE(parsed->source.find("hase-probe micro"), std::string::npos);
}

}  // namespace
}  // namespace hase::probe
