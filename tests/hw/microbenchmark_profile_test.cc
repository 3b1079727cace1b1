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

// Catalog clock facts (data/gpus.yaml) resolve to the documented derived figures
// (docs/microbenchmark-profile.md, "Clocks and FP32 issue").
TEST(MicrobenchmarkProfile, ClockFactsAndDualIssue) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  // L4 product brief: base 795 MHz, boost 2040 MHz, 72 W, 58 SMs. The power rule
  // (72/58/4)^(1/3) = 0.6770 stays above the base-clock floor 795/2040 = 0.3897.
  const GpuSpec& l4 = **cat->Find("L4");
  EXPECT_DOUBLE_EQ(l4.base_clock_mhz, 795);
  EXPECT_DOUBLE_EQ(l4.fp32_sustained_clock_mhz, 0);
  EXPECT_NEAR(SustainedClockFraction(l4), 0.6770408, 1e-6);
  EXPECT_DOUBLE_EQ(Fp32IssueFraction(l4), 0.58);  // AD104, compute capability 8.9
  // FP32: 0.85 x 0.6771 x 0.58 x 30.3 TFLOP/s = 10.11 TFLOP/s (a third of the listed peak).
  const MicrobenchmarkProfile pl4 = DerivedProfile(l4);
  EXPECT_NEAR(pl4.fp32_tflops, 10.11357, 1e-4);
  EXPECT_NEAR(pl4.tensor_fp16_tflops, 0.75 * 121 * 0.6770408, 1e-3);  // no issue factor
  EXPECT_NEAR(pl4.fp16_tflops, 0.85 * 30.3 * 0.6770408, 1e-3);

  // T4: FP32 sustained 732 MHz of 1590 (NeuSight FP32 GEMM vs V100); tensor keeps the power
  // rule 0.7591 (DeepBench fp16_mixed T4 vs V100: 0.769).
  const GpuSpec& t4 = **cat->Find("T4");
  EXPECT_DOUBLE_EQ(t4.base_clock_mhz, 585);
  EXPECT_NEAR(Fp32SustainedClockFraction(t4), 732.0 / 1590, 1e-12);
  EXPECT_DOUBLE_EQ(Fp32IssueFraction(t4), 1.0);  // Turing: INT32 on its own pipe
  const MicrobenchmarkProfile pt4 = DerivedProfile(t4);
  EXPECT_NEAR(pt4.fp32_tflops, 0.85 * 8.1 * 732.0 / 1590, 1e-9);  // 3.17 TFLOP/s
  EXPECT_NEAR(pt4.tensor_fp16_tflops, 0.75 * 65 * 0.759147, 1e-4);

  // GA102 (8.6) gets the issue factor, GA100 (8.0) and Hopper (9.0) do not.
  EXPECT_DOUBLE_EQ(Fp32IssueFraction(**cat->Find("RTX-3090")), 0.58);
  EXPECT_DOUBLE_EQ(Fp32IssueFraction(**cat->Find("A10")), 0.58);
  EXPECT_DOUBLE_EQ(Fp32IssueFraction(**cat->Find("RTX-4090")), 0.58);
  EXPECT_DOUBLE_EQ(Fp32IssueFraction(**cat->Find("a100")), 1.0);
  EXPECT_DOUBLE_EQ(Fp32IssueFraction(**cat->Find("h100")), 1.0);
  // A GPU without clock facts keeps the power rule (V100-SXM2 above: 0.9787).
  const GpuSpec& h100 = **cat->Find("h100");
  EXPECT_DOUBLE_EQ(DerivedProfile(h100).fp32_tflops, 0.85 * 66.9);

  // The base clock is a floor: a 20 W board with 40 SMs would get (0.5/4)^(1/3) = 0.5 from the
  // power rule, but not below its base clock 1200 of 1600 MHz.
  GpuSpec s = t4;
  s.tdp_w = 20;
  s.base_clock_mhz = 1200;
  s.boost_clock_mhz = 1600;
  EXPECT_DOUBLE_EQ(SustainedClockFraction(s), 0.75);
  s.base_clock_mhz = 0;
  EXPECT_NEAR(SustainedClockFraction(s), 0.5, 1e-12);
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
