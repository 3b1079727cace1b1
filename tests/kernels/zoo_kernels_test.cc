// The zoo through BuildKernelList: ORT CUDA kernel counts, published MAC/parameter totals,
// and ORT CPU's optimised graph (committed reference) node for node.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hase/kernels/kernel_list_builder.h"
#include "testing.h"

namespace hase {
namespace {

std::string Zoo(const std::string& name) {
  return hase::testing::SourceDir() + "/models/" + name + ".onnx";
}

std::map<std::string, int> CountTypes(const KernelList& l) {
  std::map<std::string, int> m;
  for (const auto& k : l.kernels) m[k.type] += 1;
  return m;
}

KernelList Build(const std::string& model, KernelListOptions o = {}) {
  auto l = BuildKernelList(Zoo(model), o);
  EXPECT_TRUE(l.ok()) << model << ": " << l.status().ToString();
  return l.ok() ? *l : KernelList{};
}

// ../shared/REFERENCE.md, "Observed on the CUDA execution provider".
TEST(ZooOrtCuda, ResNet50Is57Kernels) {
  const KernelList l = Build("resnet50");
  EXPECT_EQ(l.kernels.size(), 57u);
  EXPECT_EQ(CountTypes(l), (std::map<std::string, int>{{"FusedConv(Relu)", 33},
                                                        {"FusedConv(Add,Relu)", 16},
                                                        {"Conv", 4},
                                                        {"MaxPool", 1},
                                                        {"GlobalAveragePool", 1},
                                                        {"Flatten", 1},
                                                        {"Gemm", 1}}));
  // The residual Add is FusedConv's 4th input Z; the downsample Conv stays plain.
  for (const auto& k : l.kernels) {
    if (k.type == "FusedConv(Add,Relu)") {
      EXPECT_EQ(k.inputs.size(), 2u) << k.source_nodes[0];  // X and Z (W, B are weights)
      EXPECT_EQ(k.source_nodes.size(), 3u);                 // Conv, Add, Relu
    }
  }
}

TEST(ZooOrtCuda, ResNet18Is24Kernels) {
  const KernelList l = Build("resnet18");
  EXPECT_EQ(l.kernels.size(), 24u);
  EXPECT_EQ(CountTypes(l), (std::map<std::string, int>{{"FusedConv(Relu)", 9},
                                                        {"FusedConv(Add,Relu)", 8},
                                                        {"Conv", 3},
                                                        {"MaxPool", 1},
                                                        {"GlobalAveragePool", 1},
                                                        {"Flatten", 1},
                                                        {"Gemm", 1}}));
}

TEST(ZooOrtCuda, Vgg11Is20KernelsGemmReluNotFused) {
  const KernelList l = Build("vgg11");
  EXPECT_EQ(l.kernels.size(), 20u);
  EXPECT_EQ(CountTypes(l), (std::map<std::string, int>{{"FusedConv(Relu)", 8},
                                                        {"MaxPool", 5},
                                                        {"AveragePool", 1},
                                                        {"Flatten", 1},
                                                        {"Gemm", 3},
                                                        {"Relu", 2}}));
}

// Published totals, ../shared/REFERENCE.md ("Published model costs", torchvision model docs:
// their "GFLOPS" are GMACs; batch 1, 224×224). Tolerance 1 %, or half a unit of the last
// published digit where the published figure is coarser (MobileNetV3-Large "0.22" = 0.215–0.225).
struct Published {
  const char* model;
  double gmacs;
  double mparams;  // 0 = not published in REFERENCE.md
};

TEST(ZooTotals, MacsAndParametersMatchPublishedWithin1Percent) {
  const Published kPublished[] = {
      {"resnet18", 1.81, 0},       {"resnet50", 4.09, 25.6},   {"vgg16", 15.47, 138.4},
      {"densenet121", 2.83, 8.0},  {"mobilenet_v2", 0.30, 3.5}, {"mobilenet_v3_large", 0.22, 0},
      // torchvision 0.14 model docs (issue 12's zoo growth).
      {"efficientnet_b0", 0.39, 5.29}, {"regnet_y_400mf", 0.40, 4.34},
      {"resnext50_32x4d", 4.23, 25.03}, {"convnext_tiny", 4.46, 28.59},
  };
  for (const auto& p : kPublished) {
    if (!std::filesystem::exists(Zoo(p.model))) {
      if (hase::testing::InCi()) ADD_FAILURE() << Zoo(p.model) << " missing";
      continue;
    }
    for (const char* profile : {"ort-cuda", "ort-cpu", "none"}) {
      const KernelList l = Build(p.model, {.profile = profile});
      const double gmacs = l.total_macs() / 1e9;
      EXPECT_NEAR(gmacs, p.gmacs, std::max(0.01 * p.gmacs, 0.005)) << p.model << " " << profile;
      if (p.mparams > 0) {
        const double mp = l.total_parameters() / 1e6;
        EXPECT_NEAR(mp, p.mparams, std::max(0.01 * p.mparams, 0.05)) << p.model << " " << profile;
      }
    }
  }
}

// BN-folded counts on Debian torchvision 0.14 exports (REFERENCE.md): 4.089 / 15.470 / 2.834 /
// 0.301 GMAC; 25.51 / 138.35 / 7.93 / 3.48 M parameters. hase counts each Conv's bias on its own
// (torch's exporter shares identical zero biases of untrained models), hence 25.53 for ResNet-50.
TEST(ZooTotals, FoldedCountsOfTheExports) {
  const Published kFolded[] = {{"resnet50", 4.089, 25.51}, {"vgg16", 15.470, 138.35},
                               {"densenet121", 2.834, 7.93}, {"mobilenet_v2", 0.301, 3.48}};
  for (const auto& p : kFolded) {
    if (!std::filesystem::exists(Zoo(p.model))) {
      if (hase::testing::InCi()) ADD_FAILURE() << Zoo(p.model) << " missing";
      continue;
    }
    const KernelList l = Build(p.model);
    EXPECT_NEAR(l.total_macs() / 1e9, p.gmacs, 0.0015) << p.model;
    EXPECT_NEAR(l.total_parameters() / 1e6, p.mparams, 0.01 * p.mparams) << p.model;
  }
}

// tools/export_zoo.py's ViewFlattenCnn, counted by hand in its docstring; x.view(x.size(0), -1)
// with a dynamic batch, so the Gemm's input dims are known only once the batch is bound.
TEST(ZooTotals, ViewFlattenCnnByHand) {
  for (int64_t batch : {1, 8}) {
    const KernelList l = Build("view_flatten_cnn", {.batch = batch});
    EXPECT_EQ(l.total_macs(), batch * 80482304.0);
    EXPECT_EQ(l.total_parameters(), 1008618);
    EXPECT_EQ(l.batch_validity, "valid at any batch size");
    ASSERT_EQ(l.kernels.size(), 6u);
    EXPECT_EQ(l.kernels[4].type, "Reshape");
    EXPECT_EQ(l.kernels[4].outputs[0].shape, (std::vector<int64_t>{batch, 100352}));
  }
}

TEST(ZooTotals, MacsScaleWithBatchWeightsDoNot) {
  const KernelList one = Build("resnet50");
  const KernelList eight = Build("resnet50", {.batch = 8});
  EXPECT_DOUBLE_EQ(eight.total_macs(), 8 * one.total_macs());
  EXPECT_EQ(eight.total_parameters(), one.total_parameters());
  EXPECT_EQ(eight.kernels[0].weight_bytes_read, one.kernels[0].weight_bytes_read);
  EXPECT_EQ(eight.kernels[0].activation_bytes_read, 8 * one.kernels[0].activation_bytes_read);
  EXPECT_EQ(eight.batch, 8);
}

// tests/data/ort_cpu_ops.json: onnxruntime-node 1.30's own optimised graph (CPU EP, level
// "extended") of every zoo model, written by tools/ort/make_reference.js.
TEST(ZooOrtCpu, MatchesOnnxRuntimeOptimisedGraphNodeForNode) {
  std::ifstream f(hase::testing::SourceDir() + "/tests/data/ort_cpu_ops.json");
  ASSERT_TRUE(f.good());
  const nlohmann::json ref = nlohmann::json::parse(f);
  ASSERT_EQ(ref.at("level"), "extended");
  int checked = 0;
  for (const auto& [name, m] : ref.at("models").items()) {
    if (!std::filesystem::exists(Zoo(name))) {
      if (hase::testing::InCi()) ADD_FAILURE() << Zoo(name) << " missing";
      continue;
    }
    const KernelList l = Build(name, {.profile = "ort-cpu"});
    std::vector<std::string> got;
    for (const auto& k : l.kernels) got.push_back(k.type);
    const auto want = m.at("sequence").get<std::vector<std::string>>();
    EXPECT_EQ(got.size(), want.size()) << name;
    EXPECT_EQ(got, want) << name << ": hase's ort-cpu kernels differ from ORT's optimised graph";
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

}  // namespace
}  // namespace hase
