#include "hase/predict/features.h"

#include <cmath>

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"

namespace hase::predict {
namespace {

size_t Index(const std::string& name) {
  const auto& names = FeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  ADD_FAILURE() << "no feature " << name;
  return 0;
}

const GpuSpec& Spec(const std::string& name) {
  static const GpuCatalog catalog = GpuCatalog::Builtin().value();
  return *catalog.Find(name).value();
}

// ResNet-50 layer1 3x3 conv, 64 → 64 channels on 56x56, batch 1, fp32.
KernelSample ResNetConv() {
  KernelSample s;
  s.source = "neusight";
  s.family = KernelFamily::kConv;
  s.op = "conv2d";
  s.n = 1; s.c = 64; s.h = 56; s.w = 56; s.k = 64; s.r = 3; s.s = 3;
  s.pad_h = s.pad_w = 1;
  s.latency_ms = 0.1;
  FillDerived(s);
  return s;
}

TEST(FeaturesTest, ResNetConvOnT4) {
  KernelSample s = ResNetConv();
  // 2 · (1·64·56·56) · 64·3·3 = 231,211,008 FLOP (= 2 × torchvision's 115.6 M MACs).
  EXPECT_DOUBLE_EQ(s.flops, 231211008.0);
  // 4 B · (64·56·56 in + 64·64·9 weights + 64·56·56 out) = 4 · 438,272 = 1,753,088 B.
  EXPECT_DOUBLE_EQ(s.bytes, 1753088.0);
  const GpuSpec& t4 = Spec("Tesla T4");  // 8.1 TFLOP/s FP32, 320 GB/s, 40 SMs
  Roofline r = FixedRoofline(s, t4);
  EXPECT_NEAR(r.compute_ms, 231211008.0 / 8.1e12 * 1e3, 1e-9);
  EXPECT_NEAR(r.memory_ms, 1753088.0 / (t4.memory_bandwidth_gbps * 1e9) * 1e3, 1e-9);
  EXPECT_DOUBLE_EQ(r.roofline_ms, r.compute_ms);

  std::vector<float> f = ExtractFeatures(s, t4);
  ASSERT_EQ(f.size(), FeatureNames().size());
  EXPECT_EQ(f[Index("op")], OpCode("conv2d"));
  EXPECT_NEAR(f[Index("log2_flops")], std::log2(231211008.0), 1e-4);
  EXPECT_NEAR(f[Index("log2_intensity")], std::log2(231211008.0 / 1753088.0), 1e-4);
  // Implicit GEMM: M = 56·56 = 3136, N = 64, K = 576; 128x128 tiles: 25 · 1 = 25 over 40 SMs.
  EXPECT_NEAR(f[Index("log2_mm_m")], std::log2(1.0 + 3136), 1e-4);
  EXPECT_NEAR(f[Index("log2_mm_k")], std::log2(1.0 + 576), 1e-4);
  EXPECT_NEAR(f[Index("log2_tiles_per_sm")], std::log2(1.0 + 25.0 / 40), 1e-5);
  EXPECT_NEAR(f[Index("wave_fill")], 25.0 / 40, 1e-6);
  EXPECT_FLOAT_EQ(f[Index("gpu_sms")], 40);
  EXPECT_FLOAT_EQ(f[Index("gpu_fp32_tflops")], 8.1f);
  EXPECT_FLOAT_EQ(f[Index("load_sm_active")], 0);  // no load recorded = idle
  EXPECT_FLOAT_EQ(f[Index("includes_transfer")], 0);
}

TEST(FeaturesTest, Fp16GemmUsesTensorPeakAndLoadIsRead) {
  KernelSample s;
  s.family = KernelFamily::kGemm;
  s.op = "gemm";
  s.dtype = DType::kFloat16;
  s.gemm_batch = 1; s.gemm_m = 1024; s.gemm_n = 1024; s.gemm_k = 1024;
  s.load.sm_active = 0.6;
  s.load.dram_active = 0.4;
  s.latency_ms = 1;
  FillDerived(s);
  EXPECT_DOUBLE_EQ(s.bytes, 2.0 * 3 * 1024 * 1024);
  const GpuSpec& v100 = Spec("V100-SXM2-16GB");  // 125 TFLOP/s tensor FP16
  Roofline r = FixedRoofline(s, v100);
  EXPECT_NEAR(r.compute_ms, 2.0 * 1024 * 1024 * 1024 / 125e12 * 1e3, 1e-12);
  std::vector<float> f = ExtractFeatures(s, v100);
  EXPECT_FLOAT_EQ(f[Index("gpu_peak_tflops")], 125.0f);
  EXPECT_FLOAT_EQ(f[Index("load_sm_active")], 0.6f);
  EXPECT_FLOAT_EQ(f[Index("load_sm_occupancy")], 0.3f);  // fallback: 0.5 × sm_active
  EXPECT_FLOAT_EQ(f[Index("load_dram_active")], 0.4f);
}

TEST(FeaturesTest, Fp16WithoutFastFp16UsesFp32Peak) {
  // GP102 (GTX 1080 Ti, TITAN Xp) runs FP16 at 1/64 of FP32 (catalog 0.177 / 0.19 TFLOP/s):
  // runtimes compute FP16 models in FP32, so the float16 normaliser is the FP32 peak. Before,
  // the FP16 figure was used and fp16 kernels came out ~64× too slow in the roofline.
  KernelSample s;
  s.family = KernelFamily::kGemm;
  s.op = "linear";
  s.dtype = DType::kFloat16;
  s.gemm_batch = 1; s.gemm_m = 1024; s.gemm_n = 1024; s.gemm_k = 1024;
  s.latency_ms = 1;
  FillDerived(s);
  const double flop = 2.0 * 1024 * 1024 * 1024;
  for (const char* name : {"GTX-1080-Ti", "TITAN-Xp"}) {
    const GpuSpec& g = Spec(name);
    ASSERT_LT(g.fp16_tflops, g.fp32_tflops / 10) << name;
    Roofline r = FixedRoofline(s, g);
    EXPECT_DOUBLE_EQ(r.peak_tflops, g.fp32_tflops) << name;
    EXPECT_NEAR(r.compute_ms, flop / (g.fp32_tflops * 1e12) * 1e3, 1e-12) << name;
  }
  EXPECT_NEAR(FixedRoofline(s, Spec("GTX-1080-Ti")).compute_ms, flop / 11.34e12 * 1e3, 1e-12);
  // P100 has fast FP16 (2× FP32, no tensor cores): the FP16 figure.
  const GpuSpec& p100 = Spec("P100-SXM2-16GB");
  EXPECT_DOUBLE_EQ(FixedRoofline(s, p100).peak_tflops, p100.fp16_tflops);
  EXPECT_GT(p100.fp16_tflops, p100.fp32_tflops);
}

TEST(FeaturesTest, TransferTermUsesPcieBandwidth) {
  KernelSample s = ResNetConv();
  s.includes_transfer = true;
  s.h2d_bytes = 4e8;
  s.d2h_bytes = 0;
  const GpuSpec& a100 = Spec("NVIDIA A100-SXM4-40GB");  // PCIe 4.0 x16: 31.5 GB/s
  EXPECT_NEAR(TransferMs(s, a100), 4e8 / (0.8 * a100.pcie_peak_gbps() * 1e9) * 1e3, 1e-9);
  s.includes_transfer = false;
  EXPECT_EQ(TransferMs(s, a100), 0);
}

}  // namespace
}  // namespace hase::predict
