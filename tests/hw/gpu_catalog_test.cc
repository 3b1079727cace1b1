#include "hase/hw/gpu_catalog.h"

#include <gtest/gtest.h>

#include "testing.h"

namespace hase {
namespace {

const GpuCatalog& Catalog() {
  static const GpuCatalog* cat = [] {
    auto c = GpuCatalog::Builtin();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return new GpuCatalog(std::move(c).value());
  }();
  return *cat;
}

std::string IdOf(const std::string& name) {
  auto g = Catalog().Find(name);
  return g.ok() ? (*g)->id : "ERROR: " + g.status().ToString();
}

TEST(GpuCatalog, BuiltinHasTheRequiredTypes) {
  EXPECT_GE(Catalog().size(), 25u);
  for (const char* id :
       {"K80", "M40", "P4", "P100-PCIE-16GB", "V100-PCIE-16GB", "V100-PCIE-32GB",
        "V100-SXM2-16GB", "V100-SXM2-32GB", "TITAN-V", "TITAN-Xp", "TITAN-RTX", "GTX-1080-Ti",
        "RTX-2080-Ti", "T4", "A2", "A10", "A30", "A40", "A100-PCIE-40GB", "A100-PCIE-80GB",
        "A100-SXM4-40GB", "A100-SXM4-80GB", "RTX-A6000", "RTX-3090", "RTX-4090", "L4", "L40",
        "L40S", "H100-PCIE", "H100-SXM5-80GB", "H100-NVL", "H200", "RTX-5090",
        "RTX-PRO-6000-Max-Q"}) {
    EXPECT_EQ(IdOf(id), id);
  }
  for (const auto& g : Catalog().gpus()) EXPECT_FALSE(g.source.empty()) << g.id;
}

TEST(GpuCatalog, DatasheetValues) {
  // NVIDIA A100 datasheet: 108 SMs, 19.5 TFLOP/s FP32, 312 dense FP16 tensor, 1555 GB/s, 40 MB L2.
  const GpuSpec* a100 = *Catalog().Find("A100-SXM4-40GB");
  EXPECT_EQ(a100->sms, 108);
  EXPECT_DOUBLE_EQ(a100->fp32_tflops, 19.5);
  EXPECT_DOUBLE_EQ(a100->tensor_fp16_tflops, 312);
  EXPECT_DOUBLE_EQ(a100->memory_bandwidth_gbps, 1555);
  EXPECT_DOUBLE_EQ(a100->l2_mib, 40);
  EXPECT_EQ(a100->compute_capability, "8.0");
  // T4 datasheet: 8.1 TFLOP/s, 320 GB/s, 70 W (not Habitat's 1804 GFLOP/s / 239 GB/s).
  const GpuSpec* t4 = *Catalog().Find("T4");
  EXPECT_DOUBLE_EQ(t4->fp32_tflops, 8.1);
  EXPECT_DOUBLE_EQ(t4->memory_bandwidth_gbps, 320);
  EXPECT_DOUBLE_EQ(t4->tdp_w, 70);
  // PCIe 3.0 x16 = 16 × 0.985 GB/s.
  EXPECT_NEAR(t4->pcie_peak_gbps(), 15.76, 1e-9);
}

TEST(GpuCatalog, ResolvesDcgmDatasetAndUserNames) {
  // DCGM modelName
  EXPECT_EQ(IdOf("NVIDIA A100-SXM4-40GB"), "A100-SXM4-40GB");
  EXPECT_EQ(IdOf("NVIDIA RTX A6000"), "RTX-A6000");
  EXPECT_EQ(IdOf("NVIDIA H100 80GB HBM3"), "H100-SXM5-80GB");
  EXPECT_EQ(IdOf("NVIDIA GeForce RTX 3090"), "RTX-3090");
  // NeuSight / DeepBench / TopHub / timm spellings
  EXPECT_EQ(IdOf("Tesla T4"), "T4");
  EXPECT_EQ(IdOf("A100-PCIE-40GB"), "A100-PCIE-40GB");
  EXPECT_EQ(IdOf("NVIDIA A100-PCIE-40GB"), "A100-PCIE-40GB");
  EXPECT_EQ(IdOf("NVIDIA A100 80GB PCIe"), "A100-PCIE-80GB");
  EXPECT_EQ(IdOf("A100-PCIE-80GB"), "A100-PCIE-80GB");  // word order differs from the name
  EXPECT_EQ(IdOf("Tesla V100-PCIE-32GB"), "V100-PCIE-32GB");
  EXPECT_EQ(IdOf("Tesla P100-PCIE-16GB"), "P100-PCIE-16GB");
  EXPECT_EQ(IdOf("Tesla P4"), "P4");
  EXPECT_EQ(IdOf("TitanX_Pascal"), "TITAN-X-Pascal");
  EXPECT_EQ(IdOf("TitanXp"), "TITAN-Xp");
  EXPECT_EQ(IdOf("1080Ti"), "GTX-1080-Ti");
  EXPECT_EQ(IdOf("rtx4090"), "RTX-4090");
  EXPECT_EQ(IdOf("pro6000maxq"), "RTX-PRO-6000-Max-Q");
  // users: case-insensitive, documented defaults for short names
  EXPECT_EQ(IdOf("t4"), "T4");
  EXPECT_EQ(IdOf("a100"), "A100-SXM4-40GB");
  EXPECT_EQ(IdOf("A100"), "A100-SXM4-40GB");
  EXPECT_EQ(IdOf("h100"), "H100-SXM5-80GB");
  EXPECT_EQ(IdOf("v100"), "V100-SXM2-16GB");
  EXPECT_EQ(IdOf("titanx"), "GTX-TITAN-X");
  EXPECT_EQ(IdOf("a10"), "A10");  // not A100
  EXPECT_EQ(IdOf("l40s"), "L40S");
}

TEST(GpuCatalog, UnknownNameListsNearest) {
  auto g = Catalog().Find("A100-SXM4-48GB");
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsNotFound());
  EXPECT_NE(g.status().message().find("A100-SXM4-40GB"), std::string::npos)
      << g.status().ToString();
  EXPECT_NE(g.status().hint().find("hase gpus"), std::string::npos);
  EXPECT_EQ(Catalog().Nearest("rtx 4080", 1), std::vector<std::string>{"RTX-4090"});
  EXPECT_TRUE(Catalog().Find("").status().IsNotFound());
}

TEST(GpuCatalog, BadYaml) {
  auto bad = GpuCatalog::FromYaml("gpus: [ {id: x", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsParse());

  auto missing = GpuCatalog::FromYaml("gpus:\n  - id: X\n    name: X\n", "t.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsInvalidArgument());
  EXPECT_NE(missing.status().message().find("architecture"), std::string::npos);
  EXPECT_NE(missing.status().where().find("t.yaml"), std::string::npos);

  EXPECT_TRUE(GpuCatalog::FromFile("/nonexistent/gpus.yaml").status().IsIO());
}

TEST(GpuCatalog, AmbiguousAliasIsRejected) {
  const std::string entry =
      "    architecture: a\n    chip: c\n    compute_capability: '1.0'\n    sms: 1\n"
      "    boost_clock_mhz: 1\n    fp32_tflops: 1\n    fp16_tflops: 0\n"
      "    tensor_fp16_tflops: 0\n    memory_gib: 1\n    memory_type: m\n"
      "    memory_bandwidth_gbps: 1\n    l2_mib: 1\n    pcie_gen: 3\n    pcie_lanes: 16\n"
      "    interconnect: i\n    tdp_w: 1\n    source: s\n";
  auto ok = GpuCatalog::FromYaml("gpus:\n  - id: A\n    name: A\n" + entry, "t");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  // Optional clock facts: read when present, rejected above the boost clock.
  auto clocks = GpuCatalog::FromYaml(
      "gpus:\n  - id: A\n    name: A\n    base_clock_mhz: 0.5\n"
      "    fp32_sustained_clock_mhz: 0.75\n" + entry, "t");
  ASSERT_TRUE(clocks.ok()) << clocks.status().ToString();
  EXPECT_DOUBLE_EQ(clocks->gpus()[0].base_clock_mhz, 0.5);
  EXPECT_DOUBLE_EQ(clocks->gpus()[0].fp32_sustained_clock_mhz, 0.75);
  EXPECT_DOUBLE_EQ(ok->gpus()[0].base_clock_mhz, 0);  // absent = unknown
  auto fast = GpuCatalog::FromYaml(
      "gpus:\n  - id: A\n    name: A\n    base_clock_mhz: 2\n" + entry, "t");
  ASSERT_FALSE(fast.ok());
  EXPECT_TRUE(fast.status().IsInvalidArgument());
  auto word = GpuCatalog::FromYaml(
      "gpus:\n  - id: A\n    name: A\n    fp32_sustained_clock_mhz: fast\n" + entry, "t");
  EXPECT_TRUE(word.status().IsInvalidArgument());
  auto amb = GpuCatalog::FromYaml(
      "gpus:\n  - id: A\n    name: A\n    aliases: [zz]\n" + entry +
          "  - id: B\n    name: B\n    aliases: [ZZ]\n" + entry,
      "t");
  ASSERT_FALSE(amb.ok());
  EXPECT_TRUE(amb.status().IsInvalidArgument());
}

TEST(GpuCatalog, RepoFileEqualsEmbedded) {
  auto f = GpuCatalog::FromFile(testing::SourceDir() + "/data/gpus.yaml");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->size(), Catalog().size());
}

}  // namespace
}  // namespace hase
