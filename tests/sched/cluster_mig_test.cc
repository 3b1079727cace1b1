// MIG instances in cluster files (cluster_file.h): each instance a schedulable Gpu of its
// derived catalog type; slices checked against the parent; errors with FILE:LINE.
#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"

namespace hase::sched {
namespace {

const GpuCatalog& Catalog() {
  static const GpuCatalog c = *GpuCatalog::Builtin();
  return c;
}

Result<Cluster> Parse(const std::string& gpus) {
  return ParseClusterYaml("nodes:\n  - name: node-a\n    gpus:\n" + gpus, "c.yaml", Catalog());
}

TEST(ClusterMig, InstancesBecomeGpusOfTheirDerivedTypes) {
  auto c = Parse(
      "      - {type: T4, count: 1}\n"
      "      - {type: A100-SXM4-40GB, count: 1, mig: [3g.20gb, 2g.10gb, 1g.5gb, {profile: 1g.5gb, gi: 13}]}\n"
      "      - {type: T4, count: 1}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->gpus.size(), 6u);
  // T4, then four instances of physical GPU 1, then T4 as physical GPU 2.
  EXPECT_EQ(c->GpuLabel(0), "node-a/0");
  EXPECT_EQ(c->GpuLabel(1), "node-a/1/mig0-3g.20gb");
  EXPECT_EQ(c->GpuLabel(2), "node-a/1/mig1-2g.10gb");
  EXPECT_EQ(c->GpuLabel(3), "node-a/1/mig2-1g.5gb");
  EXPECT_EQ(c->GpuLabel(4), "node-a/1/mig3-1g.5gb");
  EXPECT_EQ(c->GpuLabel(5), "node-a/2");
  for (int g = 1; g <= 4; ++g) EXPECT_EQ(c->gpus[g].index, 1);
  EXPECT_EQ(c->gpus[4].mig_gpu_instance, 13);
  EXPECT_EQ(c->gpus[3].mig_gpu_instance, -1);
  // Types: T4 and the three derived types; no A100-SXM4-40GB (no whole one exists).
  ASSERT_EQ(c->types.size(), 4u);
  EXPECT_EQ(c->TypeIndex("A100-SXM4-40GB"), -1);
  const GpuType& t = c->types[c->gpus[3].type];
  EXPECT_EQ(t.name, "A100-SXM4-40GB-MIG-1g.5gb");
  EXPECT_DOUBLE_EQ(t.memory_mib, 4.75 * 1024);          // nvidia-smi mig -lgip: 4.75 GiB
  EXPECT_NEAR(t.peak_fp32_tflops, 19.5 * 14 / 108, 1e-9);  // 14 of 108 SMs
  EXPECT_NEAR(t.dram_gbps, 1555.0 / 8, 1e-9);              // 1 of 8 memory slices
  EXPECT_DOUBLE_EQ(c->gpus[1].memory_mib, 19.62 * 1024);
  EXPECT_EQ(c->CountByType()[c->gpus[3].type], 2);
}

TEST(ClusterMig, CountRepeatsTheLayoutPerGpu) {
  auto c = Parse("      - {type: h100, count: 2, mig: [4g.40gb, 3g.40gb]}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->gpus.size(), 4u);
  EXPECT_EQ(c->GpuLabel(2), "node-a/1/mig0-4g.40gb");
  EXPECT_EQ(c->types[c->gpus[0].type].name, "H100-SXM5-80GB-MIG-4g.40gb");
}

TEST(ClusterMig, TooManySlicesIsAnErrorWithTheLine) {
  // 3g.20gb + 3g.20gb + 1g.5gb: 7 compute slices but 4 + 4 + 1 = 9 of 8 memory slices.
  auto c = Parse("      - {type: A100-SXM4-40GB, mig: [3g.20gb, 3g.20gb, 1g.5gb]}\n");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsInvalidArgument());
  EXPECT_EQ(c.status().where(), "c.yaml:4") << c.status().ToString();
  EXPECT_NE(c.status().ToString().find("7 compute and 9 memory slices; A100-SXM4-40GB has 7 and 8"),
            std::string::npos)
      << c.status().ToString();
  // Eight 1g.5gb: the 8th exceeds max_instances 7.
  auto many = Parse("      - {type: A100-SXM4-40GB, mig: [1g.5gb, 1g.5gb, 1g.5gb, 1g.5gb, 1g.5gb, 1g.5gb, 1g.5gb, 1g.5gb]}\n");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().ToString().find("at most 7 1g.5gb"), std::string::npos) << many.status().ToString();
  // A30 has 4 compute slices.
  auto a30 = Parse("      - {type: A30, mig: [4g.24gb, 1g.6gb]}\n");
  ASSERT_FALSE(a30.ok());
  EXPECT_NE(a30.status().ToString().find("5 compute and 5 memory slices; A30 has 4 and 4"), std::string::npos)
      << a30.status().ToString();
}

TEST(ClusterMig, UnknownProfileNamesTheValidOnes) {
  auto c = Parse("      - {type: A100-SXM4-40GB,\n         mig: [3g.20gb, 7g.80gb]}\n");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsNotFound());
  EXPECT_NE(c.status().where().find("c.yaml:5"), std::string::npos) << c.status().ToString();
  EXPECT_NE(c.status().ToString().find("1g.5gb, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb"),
            std::string::npos)
      << c.status().ToString();
}

TEST(ClusterMig, OtherMistakes) {
  auto t4 = Parse("      - {type: T4, mig: [1g.5gb]}\n");
  ASSERT_FALSE(t4.ok());
  EXPECT_NE(t4.status().ToString().find("T4 has no MIG"), std::string::npos) << t4.status().ToString();
  EXPECT_EQ(t4.status().where(), "c.yaml:4");
  auto mem = Parse("      - {type: a100, memory_mib: 1000, mig: [1g.5gb]}\n");
  ASSERT_FALSE(mem.ok());
  EXPECT_NE(mem.status().ToString().find("memory_mib cannot be combined with mig"), std::string::npos);
  auto gi = Parse("      - {type: a100, mig: [{profile: 1g.5gb, gi: 7}, {profile: 1g.5gb, gi: 7}]}\n");
  ASSERT_FALSE(gi.ok());
  EXPECT_NE(gi.status().ToString().find("gi 7"), std::string::npos) << gi.status().ToString();
  auto empty = Parse("      - {type: a100, mig: []}\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(empty.status().IsInvalidArgument());
  auto noprof = Parse("      - {type: a100, mig: [{gi: 3}]}\n");
  ASSERT_FALSE(noprof.ok());
  EXPECT_NE(noprof.status().ToString().find("without 'profile'"), std::string::npos);
}

}  // namespace
}  // namespace hase::sched
