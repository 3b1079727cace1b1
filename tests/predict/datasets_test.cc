// Converters against the real public datasets in ../shared (skipped when absent).
#include "hase/predict/datasets/converters.h"

#include <gtest/gtest.h>

#include "testing.h"

namespace hase::predict {
namespace {

std::string Shared(const std::string& rel) { return hase::testing::SharedDir() + "/data/" + rel; }

TEST(DatasetsTest, DeepBench) {
  HASE_REQUIRE_SHARED();
  ConvertReport rep;
  auto rows = ConvertDeepBench(Shared("kernels/deepbench"), &rep);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), 1034u + 1760u);  // README: 94 x 11 conv + 160 x 11 GEMM
  // First conv row: M40 fp32, N=4 C=1 H=161 W=700 K=32 R=5 S=20 stride 2, fwd 0.224 ms.
  const KernelSample& s = rows->front();
  EXPECT_EQ(s.gpu, "Tesla M40");
  EXPECT_EQ(s.family, KernelFamily::kConv);
  EXPECT_EQ(s.out_h(), 79);  // README's out_h
  EXPECT_EQ(s.out_w(), 341);
  EXPECT_DOUBLE_EQ(s.latency_ms, 0.224);
  // Sheet fwd_tflops 3.0787 = 2·N·K·C·R·S·P·Q / time.
  EXPECT_NEAR(s.flops / (s.latency_ms * 1e-3) / 1e12, 3.0787428571, 1e-6);
  size_t fp16 = 0;
  for (const auto& r : *rows) fp16 += r.dtype == DType::kFloat16;
  EXPECT_EQ(fp16, 3u * (94 + 160));  // P100 pseudo, V100 and T4 mixed
}

TEST(DatasetsTest, TopHubDropsJetsonAndTransposedConvs) {
  HASE_REQUIRE_SHARED();
  ConvertReport rep;
  auto rows = ConvertTopHub(Shared("kernels/tophub"), &rep);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rep.read, 814u);
  EXPECT_EQ(rows->size(), 814u - 176 - 186 - 9);  // README: tx2 176, jetson-nano 186 rows
  size_t depthwise = 0;
  for (const auto& r : *rows) {
    if (r.family == KernelFamily::kGroupedConv) {
      ++depthwise;
      EXPECT_EQ(r.groups, r.c);
    }
  }
  EXPECT_EQ(depthwise, 18u);  // 9 titanx + 9 1080ti
}

TEST(DatasetsTest, BencyqRowsCarryTransferAndLoad) {
  HASE_REQUIRE_SHARED();
  ConvertReport rep;
  auto rows = ConvertBencyq(Shared("interference/bencyq_hase"), &rep);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), 101u + 3 * 1431);
  for (const auto& r : *rows) {
    ASSERT_TRUE(r.includes_transfer);
    ASSERT_TRUE(r.load.sm_active.has_value());
  }
  // data_20260209_141915.csv row 1: Conv_Add_Relu_bs128_128c28x28_k1x1 on the A6000:
  // input 128x128x28x28 fp32 = 51,380,224 B; assumed output 128x512x28x28 = 205,520,896 B,
  // also the residual input.
  const KernelSample& s = rows->front();
  EXPECT_EQ(s.op, "conv2d_add_relu");
  EXPECT_EQ(s.k, 512);
  EXPECT_DOUBLE_EQ(s.h2d_bytes, 51380224.0 + 205520896.0);
  EXPECT_DOUBLE_EQ(s.d2h_bytes, 205520896.0);
}

TEST(DatasetsTest, NeuSightMapsLinearDimensions) {
  HASE_REQUIRE_SHARED();
  ConvertReport rep;
  auto rows = ConvertNeuSight(Shared("kernels/neusight"), &rep);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), 256509u);  // README total
  EXPECT_GT(rep.flagged["suspect_throttle"], 0u);
  // linear/Tesla T4.csv first row: B=1 M=58 N=13 K=141 (N = reduction) → m 58, n 141, k 13.
  bool found = false;
  for (const auto& r : *rows) {
    if (r.op == "linear" && r.gpu == "Tesla T4" && r.gemm_m == 58 && r.gemm_n == 141 &&
        r.gemm_k == 13) {
      found = true;
      EXPECT_NEAR(r.latency_ms, 0.052213333547115326, 1e-12);
      EXPECT_DOUBLE_EQ(r.flops, 2.0 * 58 * 141 * 13);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace hase::predict
