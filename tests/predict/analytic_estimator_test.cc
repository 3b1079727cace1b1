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

// A dense conv with its shape (input [n, c, h, w], k filters r × s, stride 1, "same" padding),
// FLOPs of the direct algorithm and FP32 bytes.
Kernel ConvKernel(int64_t n, int64_t c, int64_t hw, int64_t k, int64_t r, int64_t stride = 1) {
  Kernel kn;
  kn.family = KernelFamily::kConv;
  kn.type = "Conv";
  kn.op_type = "Conv";
  const int64_t o = hw / stride;
  kn.inputs = {{"x", {n, c, hw, hw}, DType::kFloat}};
  kn.weights = {{"w", {k, c, r, r}, DType::kFloat}};
  kn.outputs = {{"y", {n, k, o, o}, DType::kFloat}};
  kn.attributes["strides"] = {stride, stride};
  kn.attributes["group"] = {1};
  kn.flops = 2.0 * n * k * o * o * c * r * r;
  kn.activation_bytes_read = 4 * n * c * hw * hw;
  kn.weight_bytes_read = 4 * k * c * r * r;
  kn.bytes_written = 4 * n * k * o * o;
  return kn;
}

TEST(ConvAlgorithm, RuleFittedOnNeuSightAndDeepBench) {
  const GpuSpec round = RoundGpu();  // no tensor cores in the spec
  GpuSpec v100 = RoundGpu();
  v100.tensor_fp16_tflops = 125;
  v100.compute_capability = "7.0";
  auto pick = [](const Kernel& k, Precision p, const GpuSpec& g) {
    return PickConvAlgorithm(*ConvShapeOf(k), p, g);
  };
  // 3×3 stride 1 with ≥ 32 input channels: Winograd in FP32 (NeuSight: 82–86 % from C = 64).
  EXPECT_EQ(pick(ConvKernel(8, 64, 56, 64, 3), Precision::kFp32, round), ConvAlgorithm::kWinograd);
  EXPECT_EQ(pick(ConvKernel(8, 32, 56, 64, 3), Precision::kFp32, round), ConvAlgorithm::kWinograd);
  // Too few channels, 1×1, 7×7, stride 2: implicit GEMM.
  EXPECT_EQ(pick(ConvKernel(8, 16, 56, 64, 3), Precision::kFp32, round),
            ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(pick(ConvKernel(8, 64, 56, 256, 1), Precision::kFp32, round),
            ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(pick(ConvKernel(8, 3, 224, 64, 7, 2), Precision::kFp32, round),
            ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(pick(ConvKernel(8, 64, 56, 64, 3, 2), Precision::kFp32, round),
            ConvAlgorithm::kImplicitGemm);
  // Tensor cores (DeepBench fp16_mixed: always implicit precomputed GEMM), unless the channel
  // count is not a multiple of 8; a GPU without tensor cores keeps Winograd under kTensor.
  EXPECT_EQ(pick(ConvKernel(8, 64, 56, 64, 3), Precision::kTensor, v100),
            ConvAlgorithm::kTensorCoreGemm);
  EXPECT_EQ(pick(ConvKernel(8, 3, 224, 64, 7, 2), Precision::kTensor, v100),
            ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(pick(ConvKernel(8, 64, 56, 64, 3), Precision::kTensor, round),
            ConvAlgorithm::kWinograd);
  // TF32 needs compute capability 8: a V100 under kTf32 is FP32 → Winograd.
  EXPECT_EQ(pick(ConvKernel(8, 64, 56, 64, 3), Precision::kTf32, v100), ConvAlgorithm::kWinograd);
  Kernel dw = ConvKernel(8, 64, 56, 64, 3);
  dw.family = KernelFamily::kGroupedConv;
  dw.attributes["group"] = {64};
  EXPECT_EQ(pick(dw, Precision::kFp32, round), ConvAlgorithm::kGrouped);
  EXPECT_STREQ(ConvAlgorithmName(ConvAlgorithm::kWinograd), "winograd");
}

TEST(AnalyticEstimator, WinogradDoesFewerFlopsThanCounted) {
  AnalyticParams a = UnitParams();
  a.winograd_gain = 1.5;
  AnalyticEstimator est(a);
  // 8×64×56×56 → 64, 3×3: 2 × 8·64·56·56·64·9 = 1.8497e9 FLOP; at 1e10 FLOP/ms = 0.18497 ms
  // direct, / 1.5 with Winograd = 0.12331 ms. Bytes: 2 × 6.4 MB + 147 kB ≈ 1.3e7 B → 0.026 ms.
  const Kernel w = ConvKernel(8, 64, 56, 64, 3);
  const double direct = w.flops / 1e10;
  EXPECT_NEAR(direct, 0.1849688064, 1e-12);
  EXPECT_NEAR(Ms(est, w, Precision::kFp32, LoadSnapshot::Idle()), direct / 1.5, 1e-9);
  // 16 input channels: implicit GEMM, direct FLOPs.
  const Kernel g = ConvKernel(8, 16, 56, 64, 3);
  EXPECT_NEAR(Ms(est, g, Precision::kFp32, LoadSnapshot::Idle()), g.flops / 1e10, 1e-9);
  // Rule off (the model before): direct FLOPs for both.
  a.conv_algorithm = false;
  EXPECT_NEAR(Ms(AnalyticEstimator(a), w, Precision::kFp32, LoadSnapshot::Idle()), direct, 1e-9);
}

TEST(AnalyticEstimator, TensorCoreConvEfficiencyByShape) {
  AnalyticParams a = UnitParams();
  a.tensor_conv_k_half = 128;
  AnalyticEstimator est(a);
  GpuSpec g = RoundGpu();
  g.tensor_fp16_tflops = 100;
  const MicrobenchmarkProfile p = RoundProfile();
  auto ms = [&](const Kernel& k) {
    auto e = est.Estimate(k, ExecutionContext{g, p, LoadSnapshot::Idle(), Precision::kTensor});
    EXPECT_TRUE(e.ok());
    return e.ok() ? e->latency_ms : -1;
  };
  // 3×3, 64 → 64: reduction 576 → efficiency 576 / 704; 1.8497e9 FLOP at 1e11 FLOP/ms.
  const Kernel c3 = ConvKernel(8, 64, 56, 64, 3);
  EXPECT_NEAR(ms(c3), c3.flops / 1e11 / (576.0 / 704.0), 1e-9);
  // 1×1, 256 → 1024 on 14×14 (compute-bound): reduction 256 → 2/3 of the tensor peak.
  const Kernel c1 = ConvKernel(64, 256, 14, 1024, 1);
  EXPECT_NEAR(ms(c1), c1.flops / 1e11 / (256.0 / 384.0), 1e-9);
  // 3 input channels (first layer): no tensor cores → FP16 CUDA-core peak 2e10 FLOP/ms, direct.
  const Kernel first = ConvKernel(64, 3, 224, 64, 7, 2);
  EXPECT_NEAR(ms(first), first.flops / 2e10, 1e-9);
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
