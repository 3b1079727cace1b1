#include "hase/predict/analytic_estimator.h"

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"

namespace hase {
namespace {

// A GPU and profile with round numbers so every expected value is computed by hand.
GpuSpec RoundGpu() {
  GpuSpec g;
  g.id = "ROUND";
  g.sms = 100;
  g.fp32_tflops = 10;
  g.memory_bandwidth_gbps = 500;
  return g;
}
MicrobenchmarkProfile RoundProfile() {
  MicrobenchmarkProfile p;
  p.gpu = "ROUND";
  p.fp32_tflops = 10;          // 1e10 FLOP/ms
  p.fp16_tflops = 20;
  p.tensor_fp16_tflops = 100;
  p.tensor_tf32_tflops = 40;    // 4e10 FLOP/ms
  p.dram_bandwidth_gbps = 500;  // 5e8 B/ms
  return p;
}
AnalyticParams UnitParams() {
  AnalyticParams a;
  a.compute_eff.fill(1.0);
  a.memory_eff.fill(1.0);
  a.tensor_eff = 1.0;
  a.tf32_eff = 1.0;
  a.min_outputs_per_sm = 1;
  a.kernel_floor_us = 0;
  a.sm_contention = 0.5;
  a.dram_contention = 0.5;
  return a;
}

Kernel MakeKernel(KernelFamily f, double flops, int64_t bytes_read, int64_t bytes_written,
                  std::vector<int64_t> out_shape) {
  Kernel k;
  k.family = f;
  k.type = KernelFamilyName(f);
  k.flops = flops;
  k.activation_bytes_read = bytes_read;
  k.bytes_written = bytes_written;
  k.outputs.push_back({"y", out_shape, DType::kFloat});
  return k;
}

double Ms(const AnalyticEstimator& est, const Kernel& k, Precision prec, const LoadSnapshot& load) {
  const GpuSpec g = RoundGpu();
  const MicrobenchmarkProfile p = RoundProfile();
  auto e = est.Estimate(k, ExecutionContext{g, p, load, prec});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? e->latency_ms : -1;
}

TEST(AnalyticEstimator, ComputeBoundGemm) {
  AnalyticEstimator est(UnitParams());
  // 2e9 FLOP / 1e10 FLOP/ms = 0.2 ms; 1e6 B / 5e8 B/ms = 0.002 ms → compute-bound.
  Kernel k = MakeKernel(KernelFamily::kGemm, 2e9, 800000, 200000, {1000, 1000});
  EXPECT_NEAR(Ms(est, k, Precision::kFp32, LoadSnapshot::Idle()), 0.2, 1e-12);
  // fp16 on CUDA cores: 2e9 / 2e10 = 0.1 ms.
  EXPECT_NEAR(Ms(est, k, Precision::kFp16, LoadSnapshot::Idle()), 0.1, 1e-12);
  // tensor cores: 2e9 / 1e11 = 0.02 ms; bytes halve to 5e5 → 0.001 ms.
  EXPECT_NEAR(Ms(est, k, Precision::kTensor, LoadSnapshot::Idle()), 0.02, 1e-12);
}

TEST(AnalyticEstimator, Tf32UsesTf32TensorPeakForConvAndGemmOnly) {
  AnalyticParams a = UnitParams();
  a.tf32_eff = 0.5;
  AnalyticEstimator est(a);
  // 2e9 / (4e10 × 0.5) = 0.1 ms; bytes stay FP32 (1e6 B → 0.002 ms).
  Kernel gemm = MakeKernel(KernelFamily::kGemm, 2e9, 800000, 200000, {1000, 1000});
  EXPECT_NEAR(Ms(est, gemm, Precision::kTf32, LoadSnapshot::Idle()), 0.1, 1e-12);
  // Grouped conv and elementwise stay on CUDA cores at FP32 (2e9 / 1e10 = 0.2 ms; 1e8 B full).
  Kernel grouped = MakeKernel(KernelFamily::kGroupedConv, 2e9, 1000, 1000, {1000, 1000});
  EXPECT_NEAR(Ms(est, grouped, Precision::kTf32, LoadSnapshot::Idle()), 0.2, 1e-12);
  Kernel add = MakeKernel(KernelFamily::kElementwise, 1e6, 50'000'000, 50'000'000, {12'500'000});
  EXPECT_NEAR(Ms(est, add, Precision::kTf32, LoadSnapshot::Idle()), 0.2, 1e-12);
}

TEST(AnalyticEstimator, Tf32IsFp32BeforeAmpere) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  AnalyticEstimator est;
  Kernel k = MakeKernel(KernelFamily::kConv, 1e10, 1 << 20, 1 << 20, {64, 256, 56, 56});
  auto run = [&](const GpuSpec& g, Precision prec) {
    auto e = est.Estimate(k, ExecutionContext{g, DerivedProfile(g), LoadSnapshot::Idle(), prec});
    EXPECT_TRUE(e.ok());
    return e.ok() ? e->latency_ms : -1;
  };
  for (const char* name : {"V100-SXM2-16GB", "T4"}) {  // Volta, Turing: no TF32
    auto g = cat->Find(name);
    ASSERT_TRUE(g.ok());
    EXPECT_DOUBLE_EQ(run(**g, Precision::kTf32), run(**g, Precision::kFp32)) << name;
  }
  // A100: TF32 dense peak 156 TFLOP/s (datasheet) vs FP32 19.5 → 8× the peak; the derived
  // profile takes 0.75 of tensor and 0.85 of FP32 peaks → 7.06×, a little less with the 2 µs
  // kernel floor in both (6.96×).
  auto a100 = cat->Find("A100-SXM4-40GB");
  ASSERT_TRUE(a100.ok());
  EXPECT_DOUBLE_EQ((*a100)->tensor_tf32_tflops(), 156);
  EXPECT_NEAR(run(**a100, Precision::kFp32) / run(**a100, Precision::kTf32), 8.0 * 0.75 / 0.85,
              0.15);
}

TEST(AnalyticEstimator, MemoryBoundElementwise) {
  AnalyticEstimator est(UnitParams());
  // 1e8 B / 5e8 B/ms = 0.2 ms; 1e6 FLOP is negligible.
  Kernel k = MakeKernel(KernelFamily::kElementwise, 1e6, 50'000'000, 50'000'000, {12'500'000});
  EXPECT_NEAR(Ms(est, k, Precision::kFp32, LoadSnapshot::Idle()), 0.2, 1e-12);
  // FP16 tensors move half the bytes; tensor precision does not apply to elementwise.
  EXPECT_NEAR(Ms(est, k, Precision::kTensor, LoadSnapshot::Idle()), 0.1, 1e-12);
}

TEST(AnalyticEstimator, GroupedConvNeverUsesTensorCores) {
  AnalyticEstimator est(UnitParams());
  Kernel k = MakeKernel(KernelFamily::kGroupedConv, 2e9, 1000, 1000, {1000, 1000});
  EXPECT_NEAR(Ms(est, k, Precision::kTensor, LoadSnapshot::Idle()), 0.1, 1e-12);  // fp16 peak
}

TEST(AnalyticEstimator, EfficiencyUtilisationAndFloor) {
  AnalyticParams a = UnitParams();
  a.compute_eff[static_cast<int>(KernelFamily::kConv)] = 0.5;
  a.min_outputs_per_sm = 1000;  // full utilisation needs 100 SMs × 1000 = 1e5 outputs
  a.kernel_floor_us = 3;
  AnalyticEstimator est(a);
  // 2e9 / (1e10 × 0.5 × util) with util = 2.5e4 / 1e5 = 0.25 → 1.6 ms, + 0.003 ms floor.
  Kernel k = MakeKernel(KernelFamily::kConv, 2e9, 1000, 1000, {25'000});
  EXPECT_NEAR(Ms(est, k, Precision::kFp32, LoadSnapshot::Idle()), 1.603, 1e-12);
}

TEST(AnalyticEstimator, LoadSlowsTheBindingResource) {
  AnalyticEstimator est(UnitParams());
  LoadSnapshot load;
  load.sm_active = 0.6;    // SM share 1 − 0.5 × 0.6 = 0.7
  load.dram_active = 0.4;  // DRAM share 1 − 0.5 × 0.4 = 0.8
  Kernel gemm = MakeKernel(KernelFamily::kGemm, 2e9, 800000, 200000, {1000, 1000});
  EXPECT_NEAR(Ms(est, gemm, Precision::kFp32, load), 0.2 / 0.7, 1e-12);
  Kernel add = MakeKernel(KernelFamily::kElementwise, 1e6, 50'000'000, 50'000'000, {12'500'000});
  EXPECT_NEAR(Ms(est, add, Precision::kFp32, load), 0.2 / 0.8, 1e-12);
  // SM_ACTIVE absent: GR_ENGINE_ACTIVE is the documented fallback.
  LoadSnapshot gr;
  gr.gr_engine_active = 1.0;
  EXPECT_NEAR(Ms(est, gemm, Precision::kFp32, gr), 0.4, 1e-12);
}

TEST(AnalyticEstimator, DefinedForEveryCatalogGpu) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  AnalyticEstimator est;
  Kernel k = MakeKernel(KernelFamily::kConv, 1e9, 1 << 20, 1 << 20, {64, 256, 56, 56});
  for (const GpuSpec& g : cat->gpus()) {
    const MicrobenchmarkProfile p = DerivedProfile(g);
    for (Precision prec :
         {Precision::kFp32, Precision::kFp16, Precision::kTensor, Precision::kTf32}) {
      auto e = est.Estimate(k, ExecutionContext{g, p, LoadSnapshot::Idle(), prec});
      ASSERT_TRUE(e.ok()) << g.id;
      EXPECT_GT(e->latency_ms, 0) << g.id;
      EXPECT_LT(e->latency_ms, 10) << g.id;
      EXPECT_EQ(e->estimator, "analytic");
    }
  }
}

TEST(AnalyticEstimator, RejectsNegativeWork) {
  AnalyticEstimator est(UnitParams());
  Kernel k = MakeKernel(KernelFamily::kGemm, -1, 10, 10, {1});
  const GpuSpec g = RoundGpu();
  const MicrobenchmarkProfile p = RoundProfile();
  const LoadSnapshot idle = LoadSnapshot::Idle();
  EXPECT_TRUE(est.Estimate(k, ExecutionContext{g, p, idle, Precision::kFp32})
                  .status()
                  .IsInvalidArgument());
}

}  // namespace
}  // namespace hase
