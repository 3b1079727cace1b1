// ort-cpu against live onnxruntime-node (tools/ort/optimized_ops.js, CPU EP, level "extended"):
// one test per models/*.onnx. Each model is first materialised with random weights
// (hase_materialize) because ORT needs weight data to load it. Skips when tools/ort/node_modules
// is absent (tools/install-deps.sh installs it); fails instead under CI=true.
//
// Materialising and optimising a model costs 5–35 s (VGGs: 120–170 s, 550 MB written twice), so
// by default one model per architecture family runs live (kLiveByDefault, ~60 s); set
// HASE_ORT_LIVE_ALL=1 to run all of them. Every model is still compared on every run with ORT's
// committed graphs (tests/data/ort_cpu_ops.json, ZooOrtCpu in zoo_kernels_test.cc).
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hase/kernels/kernel_list_builder.h"
#include "ort_cpu_graph.h"
#include "testing.h"

namespace hase {
namespace {

std::vector<std::string> ZooModels() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(hase::testing::SourceDir()) / "models", ec)) {
    if (e.path().extension() == ".onnx") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

const std::vector<std::string> kLiveByDefault = {"convnext_tiny", "densenet121", "mobilenet_v2",
                                                 "mobilenet_v3_small", "resnet50", "yolov5s",
                                                 "yolov8n", "view_flatten_cnn"};

class OrtCpuLive : public ::testing::TestWithParam<std::string> {};

TEST_P(OrtCpuLive, MatchesOnnxRuntimeNodeForNode) {
  const std::string root = hase::testing::SourceDir();
  const bool have_ort =
      std::filesystem::exists(root + "/tools/ort/node_modules/onnxruntime-node/package.json");
#ifdef HASE_MATERIALIZE_BIN
  const std::string materialize = HASE_MATERIALIZE_BIN;
#else
  const std::string materialize;
#endif
  if (!have_ort || materialize.empty() || hase::testing::RunCommand("node --version").exit_code != 0) {
    if (hase::testing::InCi()) FAIL() << "onnxruntime-node or hase_materialize missing under CI";
    GTEST_SKIP() << "tools/ort/node_modules missing (run tools/install-deps.sh)";
  }
  const char* all = std::getenv("HASE_ORT_LIVE_ALL");
  if (!(all && std::string(all) == "1") &&
      std::find(kLiveByDefault.begin(), kLiveByDefault.end(), GetParam()) == kLiveByDefault.end()) {
    GTEST_SKIP() << "live ORT run of " << GetParam() << " only with HASE_ORT_LIVE_ALL=1 (checked "
                 << "against tests/data/ort_cpu_ops.json by ZooOrtCpu)";
  }
  const std::string model = root + "/models/" + GetParam() + ".onnx";
  auto r = hase::testing::RunCommand("node " + root + "/tools/ort/optimized_ops.js " + model +
                                     " --materialize " + materialize);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> want = hase::testing::OrtNodeTypes(r.out);
  auto l = BuildKernelList(model, {.profile = "ort-cpu"});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  std::vector<std::string> got;
  for (const auto& k : l->kernels) got.push_back(k.type);
  EXPECT_EQ(got, want) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Zoo, OrtCpuLive, ::testing::ValuesIn(ZooModels()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hase
