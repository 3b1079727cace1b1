#include "hase/hw/microbenchmark_profile.h"

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"

namespace hase {
namespace {

TEST(MicrobenchmarkProfile, DerivedFromSpec) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  const GpuSpec* v100 = *cat->Find("V100-SXM2-16GB");
  MicrobenchmarkProfile p = DerivedProfile(*v100);
  EXPECT_FALSE(p.measured);
  EXPECT_DOUBLE_EQ(p.dram_bandwidth_gbps, 0.85 * 900);
  // 300 W / 80 SMs = 3.75 W/SM < 4.0: clock fraction (3.75/4)^(1/3) = 0.97872.
  EXPECT_NEAR(SustainedClockFraction(*v100), 0.9787169, 1e-6);
  EXPECT_NEAR(p.fp32_tflops, 0.85 * 15.7 * 0.9787169, 1e-5);
  EXPECT_NEAR(p.tensor_fp16_tflops, 0.75 * 125 * 0.9787169, 1e-4);
  // T4: 70 W / 40 SMs → (1.75/4)^(1/3) = 0.7591; A100 SXM4 400 W / 108 → 0.9745; H100 SXM 1.
  EXPECT_NEAR(SustainedClockFraction(**cat->Find("t4")), 0.759147, 1e-6);
  EXPECT_DOUBLE_EQ(SustainedClockFraction(**cat->Find("h100")), 1.0);
  EXPECT_DOUBLE_EQ(p.launch_overhead_us, 5.0);
  EXPECT_NEAR(p.h2d_gbps, 0.8 * 15.76, 1e-9);
}

TEST(MicrobenchmarkProfile, ParsesPartialMeasurementAndJson) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  const std::string yaml =
      "format: hase-microbenchmark-profile/1\n"
      "gpu: NVIDIA A100-SXM4-40GB\n"
      "tool: hase-probe 0.1\n"
      "dram_bandwidth_gbps: 1370.5\n"
      "launch_overhead_us: 3.2\n";
  auto p = ParseMicrobenchmarkProfile(yaml, "p.yaml", *cat);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->gpu, "A100-SXM4-40GB");
  EXPECT_TRUE(p->measured);
  EXPECT_DOUBLE_EQ(p->dram_bandwidth_gbps, 1370.5);
  EXPECT_DOUBLE_EQ(p->launch_overhead_us, 3.2);
  EXPECT_NEAR(p->fp32_tflops, 0.85 * 19.5 * SustainedClockFraction(**cat->Find("a100")),
              1e-9);  // not measured: derived

  auto j = ParseMicrobenchmarkProfile(
      R"({"format": "hase-microbenchmark-profile/1", "gpu": "t4", "fp32_tflops": 7.0})", "p.json",
      *cat);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->gpu, "T4");
  EXPECT_DOUBLE_EQ(j->fp32_tflops, 7.0);

  // Round trip.
  auto r = ParseMicrobenchmarkProfile(MicrobenchmarkProfileToYaml(*p), "rt", *cat);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->dram_bandwidth_gbps, 1370.5);
}

TEST(MicrobenchmarkProfile, BadInputs) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  EXPECT_TRUE(ParseMicrobenchmarkProfile("gpu: t4\n", "p", *cat).status().IsInvalidArgument());
  EXPECT_TRUE(ParseMicrobenchmarkProfile("format: hase-microbenchmark-profile/1\ngpu: x9000\n",
                                         "p", *cat)
                  .status()
                  .IsNotFound());
  EXPECT_TRUE(ParseMicrobenchmarkProfile(
                  "format: hase-microbenchmark-profile/1\ngpu: t4\nfp32_tflops: fast\n", "p", *cat)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(ParseMicrobenchmarkProfile(
                  "format: hase-microbenchmark-profile/1\ngpu: t4\nh2d_gbps: -1\n", "p", *cat)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(ParseMicrobenchmarkProfile("{{{", "p", *cat).status().IsParse());
  EXPECT_TRUE(LoadMicrobenchmarkProfile("/nonexistent.yaml", *cat).status().IsIO());
}

}  // namespace
}  // namespace hase
