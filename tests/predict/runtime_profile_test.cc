#include "hase/predict/runtime_profile.h"

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/kernels/eager_batchnorm.h"
#include "hase/predict/predict_model.h"
#include "testing.h"

namespace hase {
namespace {

std::string Zoo(const std::string& name) { return testing::SourceDir() + "/models/" + name + ".onnx"; }

TEST(RuntimeProfile, NamesAndAliases) {
  EXPECT_EQ(RuntimeNames(),
            (std::vector<std::string>{"ort-cuda", "ort-cuda-graph", "pytorch-eager", "tensorrt"}));
  EXPECT_EQ(DefaultRuntime().name, "ort-cuda");
  EXPECT_EQ(FindRuntime("torch")->name, "pytorch-eager");
  EXPECT_EQ(FindRuntime("trt")->name, "tensorrt");
  auto bad = FindRuntime("onnx");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_NE(bad.status().ToString().find("pytorch-eager"), std::string::npos);
}

TEST(RuntimeProfile, WhatEachRuntimeDoes) {
  const RuntimeProfile ort = *FindRuntime("ort-cuda");
  EXPECT_EQ(ort.fusion_profile, "ort-cuda");
  EXPECT_EQ(ort.default_precision, Precision::kTf32);  // ORT use_tf32 default
  EXPECT_TRUE(ort.copies_io);                          // Run() with host inputs
  const RuntimeProfile pt = *FindRuntime("pytorch-eager");
  EXPECT_EQ(pt.fusion_profile, "none");
  EXPECT_TRUE(pt.eager_batchnorm);
  EXPECT_EQ(pt.default_precision, Precision::kTf32Conv);
  EXPECT_NEAR(pt.framework_us_per_kernel + 5.0, 26.2, 1e-9);  // NeuSight floor incl. launch
  const RuntimeProfile graph = *FindRuntime("ort-cuda-graph");
  EXPECT_FALSE(graph.per_kernel_launch);
  EXPECT_FALSE(graph.copies_io);
}

TEST(RuntimeProfile, TF32ConvRunsConvOnTf32AndMatmulOnFp32) {
  EXPECT_EQ(EffectivePrecision(Precision::kTf32Conv, true), Precision::kTf32);
  EXPECT_EQ(EffectivePrecision(Precision::kTf32Conv, false), Precision::kFp32);
  EXPECT_EQ(EffectivePrecision(Precision::kTensor, false), Precision::kTensor);
  EXPECT_EQ(*ParsePrecision("tf32-conv"), Precision::kTf32Conv);
  EXPECT_STREQ(PrecisionName(Precision::kTf32Conv), "tf32-conv");
}

// torchvision ResNet-50 has 53 Conv+BatchNorm pairs (the exporter folds all of them), VGG-16 none
// (its convs have their own bias), MobileNetV2 52.
TEST(EagerBatchNorm, ReinsertsWhatTheExporterFolded) {
  for (const auto& [model, expect] :
       std::vector<std::pair<std::string, int>>{{"resnet50", 53}, {"vgg16", 0}, {"mobilenet_v2", 52}}) {
    auto kl = BuildKernelList(Zoo(model), {.profile = "none"});
    ASSERT_TRUE(kl.ok()) << kl.status().ToString();
    const size_t before = kl->kernels.size();
    EXPECT_EQ(InsertEagerBatchNorm(*kl), expect) << model;
    EXPECT_EQ(kl->kernels.size(), before + expect);
    for (size_t i = 0; i < kl->kernels.size(); ++i) EXPECT_EQ(kl->kernels[i].index, static_cast<int>(i));
  }
  auto rt = BuildRuntimeKernelList(Zoo("resnet50"), {}, *FindRuntime("pytorch-eager"));
  ASSERT_TRUE(rt.ok());
  int bn = 0;
  for (const Kernel& k : rt->kernels) bn += k.type == "BatchNormalization(eager)";
  EXPECT_EQ(bn, 53);
}

// PyTorch eager at batch 1 on an A100: ~175 operators × 26.2 µs of host time dwarf ~1 ms of
// kernels, so the GPU idles most of the batch (host-bound). At batch 64 the kernels dominate.
// The same model under a CUDA graph has no per-kernel host cost.
TEST(RuntimeProfile, SmallBatchesOnFastGpusAreHostBound) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  const GpuSpec& a100 = **cat->Find("A100-SXM4-40GB");
  const RuntimeProfile pt = *FindRuntime("pytorch-eager");
  auto kl1 = BuildRuntimeKernelList(Zoo("resnet50"), {.batch = 1}, pt);
  ASSERT_TRUE(kl1.ok());
  PredictOptions opt;
  opt.runtime = pt;
  auto m1 = PredictModel(*kl1, a100, LoadSnapshot::Idle(), opt);
  ASSERT_TRUE(m1.ok());
  int launched = 0;
  for (const Kernel& k : kl1->kernels) launched += !k.view_only;
  EXPECT_NEAR(m1->host_ms, launched * 0.0262, 1e-9);
  EXPECT_GT(m1->idle_ms, m1->device_ms);  // host-bound
  EXPECT_LT(m1->demand, 0.4);
  EXPECT_GE(m1->latency_ms, m1->host_ms);
  EXPECT_EQ(m1->precision, Precision::kTf32Conv);

  auto kl64 = BuildRuntimeKernelList(Zoo("resnet50"), {.batch = 64}, pt);
  ASSERT_TRUE(kl64.ok());
  auto m64 = PredictModel(*kl64, a100, LoadSnapshot::Idle(), opt);
  ASSERT_TRUE(m64.ok());
  EXPECT_GT(m64->demand, 0.95);

  const RuntimeProfile graph = *FindRuntime("ort-cuda-graph");
  auto klg = BuildRuntimeKernelList(Zoo("resnet50"), {.batch = 1}, graph);
  ASSERT_TRUE(klg.ok());
  PredictOptions go;
  go.runtime = graph;
  auto mg = PredictModel(*klg, a100, LoadSnapshot::Idle(), go);
  ASSERT_TRUE(mg.ok());
  EXPECT_NEAR(mg->host_ms, 0.010, 1e-12);  // one graph launch
  EXPECT_GT(mg->demand, 0.85);
  EXPECT_LT(mg->latency_ms, m1->latency_ms / 3);
}

}  // namespace
}  // namespace hase
