#include "hase/predict/probe_emulation.h"

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"

namespace hase::predict {
namespace {

const GpuSpec& Spec(const std::string& name) {
  static const GpuCatalog catalog = GpuCatalog::Builtin().value();
  return *catalog.Find(name).value();
}

KernelSample Gemm(double flops, double ms, DType dtype = DType::kFloat) {
  KernelSample s;
  s.family = KernelFamily::kGemm;
  s.op = "gemm";
  s.dtype = dtype;
  s.flops = flops;
  s.bytes = 1e6;
  s.latency_ms = ms;
  return s;
}

KernelSample Add(double bytes, double ms) {
  KernelSample s;
  s.family = KernelFamily::kElementwise;
  s.op = "add";
  s.flops = bytes / 12;
  s.bytes = bytes;
  s.latency_ms = ms;
  return s;
}

TEST(ProbeEmulationTest, ReadsTheLargestKernelsOfEachKind) {
  std::vector<KernelSample> rows = {
      Gemm(1e9, 1.0),           // 0: small, not read with N = 2
      Gemm(4e9, 1.0),           // 1: 4 TFLOP/s
      Gemm(3e9, 0.5),           // 2: 6 TFLOP/s  <- max of the two largest
      Gemm(2e9, 0.1),           // 3: 20 TFLOP/s but not among the 2 largest: not read
      Gemm(8e9, 0.5, DType::kFloat16),  // 4: 16 TFLOP/s fp16 (T4 has tensor cores)
      Add(4e8, 2.0),            // 5: 200 GB/s
      Add(8e8, 3.2),            // 6: 250 GB/s  <- max
      Add(1e8, 0.1),            // 7: small, not read
  };
  KernelSample copy = Gemm(1e12, 1.0);  // 8: includes host copies: never a probe
  copy.includes_transfer = true;
  rows.push_back(copy);
  std::vector<size_t> idx = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  ProbeEmulation p = EmulateProbe(rows, idx, Spec("T4"), 2);
  EXPECT_DOUBLE_EQ(p.figures.fp32_tflops, 6.0);
  EXPECT_DOUBLE_EQ(p.figures.tensor_fp16_tflops, 16.0);
  EXPECT_DOUBLE_EQ(p.figures.fp16_tflops, 0.0);
  EXPECT_DOUBLE_EQ(p.figures.dram_gbps, 250.0);
  // Dispatch-floor probe of the source: median latency of its 2 smallest elementwise rows.
  ASSERT_EQ(p.figures.floor_ms.count(""), 1u);
  EXPECT_DOUBLE_EQ(p.figures.floor_ms.at(""), 0.5 * (0.1 + 2.0));
  EXPECT_EQ(p.rows_used, (std::vector<size_t>{1, 2, 4, 5, 6, 7}));

  // Only the rows in idx are read; a GPU without tensor cores gets the fp16 figure instead.
  ProbeEmulation q = EmulateProbe(rows, {0, 4}, Spec("P100-PCIE-16GB"), 2);
  EXPECT_DOUBLE_EQ(q.figures.fp32_tflops, 1.0);
  EXPECT_DOUBLE_EQ(q.figures.fp16_tflops, 16.0);
  EXPECT_DOUBLE_EQ(q.figures.tensor_fp16_tflops, 0.0);
  EXPECT_DOUBLE_EQ(q.figures.dram_gbps, 0.0);  // no elementwise row: not probed
  EXPECT_TRUE(q.figures.floor_ms.empty());
  EXPECT_EQ(q.rows_used, (std::vector<size_t>{0, 4}));
  EXPECT_TRUE(EmulateProbe(rows, idx, Spec("T4"), 0).rows_used.empty());
}

TEST(ProbeEmulationTest, EachGemmOpIsProbedAndConvsNever) {
  KernelSample c1;
  c1.family = KernelFamily::kConv;
  c1.op = "conv2d";
  c1.r = c1.s = 1;
  c1.flops = 9e9;
  c1.latency_ms = 0.25;  // 36 TFLOP/s (Winograd): never a probe
  KernelSample lin = Gemm(4e9, 1.0);  // 4 TFLOP/s, the largest linear
  lin.op = "linear";
  KernelSample bmm = Gemm(1e9, 0.2);  // 5 TFLOP/s, the largest (only) bmm: read too
  bmm.op = "bmm";
  KernelSample small_lin = Gemm(1e8, 0.001);  // 100 TFLOP/s but not among the largest linear
  small_lin.op = "linear";
  std::vector<KernelSample> rows = {c1, lin, bmm, small_lin};
  ProbeEmulation p = EmulateProbe(rows, {0, 1, 2, 3}, Spec("T4"), 1);
  EXPECT_DOUBLE_EQ(p.figures.fp32_tflops, 5.0);
  EXPECT_EQ(p.rows_used, (std::vector<size_t>{1, 2}));
  // A GPU with convolutions only gets no compute figure (the model's fallback is used).
  ProbeEmulation q = EmulateProbe(rows, {0}, Spec("T4"), 3);
  EXPECT_DOUBLE_EQ(q.figures.fp32_tflops, 0.0);
  EXPECT_TRUE(q.rows_used.empty());
}

TEST(ProbeEmulationTest, GemmsLongerThanTenMsAreNotProbed) {
  // The largest GEMM runs 200 ms at 3 TFLOP/s (power-limited): the probe reads the 2 largest
  // of those that run at most 10 ms.
  std::vector<KernelSample> rows = {
      Gemm(6e11, 200.0),  // 0: 3 TFLOP/s, longer than kProbeMaxKernelMs: not read
      Gemm(3e10, 8.0),    // 1: 3.75 TFLOP/s, 2nd largest short one
      Gemm(2e10, 4.0),    // 2: 5 TFLOP/s, 3rd largest short one: not read
      Gemm(1e10, 1.0),    // 3: 10 TFLOP/s, not read either
      Gemm(4e10, 10.0),   // 4: exactly 10 ms, the largest short one: 4 TFLOP/s <- max
  };
  ProbeEmulation p = EmulateProbe(rows, {0, 1, 2, 3, 4}, Spec("T4"), 2);
  EXPECT_DOUBLE_EQ(kProbeMaxKernelMs, 10.0);
  EXPECT_DOUBLE_EQ(p.figures.fp32_tflops, 4.0);
  EXPECT_EQ(p.rows_used, (std::vector<size_t>{1, 4}));
}

}  // namespace
}  // namespace hase::predict
