// Test helpers shared by the kernel-list tests that compare hase's ort-cpu profile with
// onnxruntime-node's own optimised graph (tools/ort/optimized_ops.js).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hase/kernels/kernel_list_builder.h"
#include "testing.h"

namespace hase::testing {

// Kernel types of `l` in launch order ("FusedConv(Relu)", "Reshape", …).
inline std::vector<std::string> Types(const KernelList& l) {
  std::vector<std::string> t;
  for (const auto& k : l.kernels) t.push_back(k.type);
  return t;
}

// BuildKernelList that records a test failure (and returns an empty list) on error.
inline KernelList Build(const std::string& path, KernelListOptions o = {.profile = "ort-cpu"}) {
  auto l = BuildKernelList(path, o);
  EXPECT_TRUE(l.ok()) << path << ": " << l.status().ToString();
  return l.ok() ? *l : KernelList{};
}

// tools/ort/optimized_ops.js's JSON as kernel types in its node order ("FusedConv(Relu)", …).
inline std::vector<std::string> OrtNodeTypes(const std::string& optimized_ops_json) {
  std::vector<std::string> types;
  const nlohmann::json doc = nlohmann::json::parse(optimized_ops_json);  // outlives the loop
  for (const auto& n : doc.at("nodes")) {
    std::string t = n.at("op_type").get<std::string>();
    if (n.contains("activation")) t += "(" + n.at("activation").get<std::string>() + ")";
    types.push_back(t);
  }
  return types;
}

// onnxruntime-node's optimised graph (CPU EP, level extended) of `path` as kernel types, or
// nullopt when onnxruntime-node is not installed (then the caller skips the comparison; a
// failure under CI=true).
inline std::optional<std::vector<std::string>> OrtCpuTypes(const std::string& path) {
  const std::string root = SourceDir();
  if (!std::filesystem::exists(root + "/tools/ort/node_modules/onnxruntime-node/package.json") ||
      RunCommand("node --version").exit_code != 0) {
    if (InCi()) ADD_FAILURE() << "onnxruntime-node missing under CI";
    return std::nullopt;
  }
  auto r = RunCommand("node " + root + "/tools/ort/optimized_ops.js " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return std::vector<std::string>{};
  return OrtNodeTypes(r.out);
}

}  // namespace hase::testing
