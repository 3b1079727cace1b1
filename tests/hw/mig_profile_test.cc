#include "hase/hw/mig_profile.h"

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/hw/gpu_spec.h"

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

// MIG User Guide, A100-SXM4-40GB: 1g.5gb = 1/7 of the compute (14 SMs in `nvidia-smi mig
// -lgip`), 1/8 of memory and L2; the datasheet GPU has 108 SMs, 19.5 TFLOP/s FP32, 312 FP16
// tensor, 1555 GB/s, 40 MB L2.
TEST(MigProfile, A100_40GB_1g5gb) {
  const GpuSpec* a100 = *Catalog().Find("A100-SXM4-40GB");
  Result<GpuSpec> d = DeriveMigSpec(*a100, "1g.5gb");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->id, "A100-SXM4-40GB-MIG-1g.5gb");
  EXPECT_EQ(d->name, "NVIDIA A100-SXM4-40GB MIG 1g.5gb");
  EXPECT_EQ(d->mig_parent, "A100-SXM4-40GB");
  EXPECT_EQ(d->mig_profile, "1g.5gb");
  EXPECT_TRUE(d->is_mig_instance());
  EXPECT_FALSE(d->mig.supported());
  EXPECT_EQ(d->sms, 14);
  EXPECT_DOUBLE_EQ(d->memory_gib, 4.75);
  EXPECT_NEAR(d->fp32_tflops, 19.5 * 14 / 108, 1e-9);      // 2.528
  EXPECT_NEAR(d->tensor_fp16_tflops, 312.0 * 14 / 108, 1e-9);  // 40.44
  EXPECT_NEAR(d->memory_bandwidth_gbps, 1555.0 / 8, 1e-9);     // 194.4
  EXPECT_NEAR(d->l2_mib, 40.0 / 8, 1e-9);
  EXPECT_EQ(d->compute_capability, "8.0");
  EXPECT_DOUBLE_EQ(d->boost_clock_mhz, 1410);
}

TEST(MigProfile, A100_40GB_WholeAndHalf) {
  const GpuSpec* a100 = *Catalog().Find("a100");
  // 7g.40gb: all 8 memory slices but 98 of 108 SMs (7 GPCs of 14 SMs).
  Result<GpuSpec> full = DeriveMigSpec(*a100, "MIG 7g.40gb");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->sms, 98);
  EXPECT_NEAR(full->fp32_tflops, 19.5 * 98 / 108, 1e-9);
  EXPECT_NEAR(full->memory_bandwidth_gbps, 1555, 1e-9);
  EXPECT_DOUBLE_EQ(full->memory_gib, 39.5);
  // 3g.20gb: 3 GPCs (42 SMs), 4 of 8 memory slices.
  Result<GpuSpec> half = DeriveMigSpec(*a100, "3g.20gb");
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->sms, 42);
  EXPECT_NEAR(half->memory_bandwidth_gbps, 1555.0 / 2, 1e-9);
  EXPECT_NEAR(half->l2_mib, 20, 1e-9);
  EXPECT_DOUBLE_EQ(half->memory_gib, 19.62);
  // 1g.10gb: one GPC, two memory slices.
  Result<GpuSpec> wide = DeriveMigSpec(*a100, "1g.10gb");
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->sms, 14);
  EXPECT_NEAR(wide->memory_bandwidth_gbps, 1555.0 / 4, 1e-9);
}

TEST(MigProfile, H100AndA30Geometry) {
  // H100 SXM5: 1g.10gb 16 of 132 SMs, 1/8 of 3350 GB/s; A30: 4 compute and 4 memory slices.
  Result<const GpuSpec*> h = Catalog().FindMig("h100", "1g.10gb");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ((*h)->sms, 16);
  EXPECT_NEAR((*h)->fp32_tflops, 66.9 * 16 / 132, 1e-9);
  EXPECT_NEAR((*h)->memory_bandwidth_gbps, 3350.0 / 8, 1e-9);
  EXPECT_DOUBLE_EQ((*h)->memory_gib, 9.75);
  const GpuSpec* a30 = *Catalog().Find("A30");
  EXPECT_EQ(a30->mig.compute_slices, 4);
  EXPECT_EQ(a30->mig.memory_slices, 4);
  Result<GpuSpec> a = DeriveMigSpec(*a30, "2g.12gb");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->sms, 28);
  EXPECT_NEAR(a->memory_bandwidth_gbps, 933.0 / 2, 1e-9);
  EXPECT_NEAR(a->l2_mib, 12, 1e-9);
  // A100 80GB SKUs share one table (a YAML anchor); H200 is listed.
  EXPECT_TRUE(Catalog().FindMig("A100-PCIE-80GB", "7g.80gb").ok());
  EXPECT_TRUE(Catalog().FindMig("A100-SXM4-80GB", "1g.20gb").ok());
  EXPECT_EQ((*Catalog().FindMig("H200", "7g.141gb"))->sms, 132);
}

TEST(MigProfile, CatalogResolvesDerivedTypesByIdAndCudaName) {
  Result<const GpuSpec*> by_id = Catalog().Find("A100-SXM4-40GB-MIG-2g.10gb");
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_EQ((*by_id)->sms, 28);
  Result<const GpuSpec*> by_name = Catalog().Find("NVIDIA A100-SXM4-40GB MIG 2g.10gb");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(*by_name, *by_id);
  // Derived types are not listed among whole GPUs (`hase gpus`), only in mig_gpus().
  for (const GpuSpec& g : Catalog().gpus()) EXPECT_FALSE(g.is_mig_instance()) << g.id;
  // 6 (A30 3) profiles: A30 3 + A100 40GB 6 x2 + 80GB 6 x2 + H100 PCIe 6 + SXM 6 + H200 6.
  EXPECT_EQ(Catalog().mig_gpus().size(), 3u + 12 + 12 + 6 + 6 + 6);
}

// Slurm's MIG GRES types (AutoDetect=nvml: "<gpu name>_<profile>", as sites spell them in
// --gres=gpu:a100_3g.20gb:1) and GPU feature labels resolve to the derived types.
TEST(MigProfile, SlurmAndLabelSpellings) {
  auto id = [](const char* n) {
    Result<const GpuSpec*> g = Catalog().Find(n);
    return g.ok() ? (*g)->id : g.status().ToString();
  };
  EXPECT_EQ(id("a100_3g.20gb"), "A100-SXM4-40GB-MIG-3g.20gb");
  EXPECT_EQ(id("nvidia_a100_1g.5gb"), "A100-SXM4-40GB-MIG-1g.5gb");
  EXPECT_EQ(id("nvidia_h100_80gb_hbm3_3g.40gb"), "H100-SXM5-80GB-MIG-3g.40gb");
  EXPECT_EQ(id("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"), "A100-SXM4-80GB-MIG-1g.10gb");
  EXPECT_EQ(id("a30_2g.12gb"), "A30-MIG-2g.12gb");
  // A profile the parent lacks, or a parent without MIG: not found.
  EXPECT_TRUE(Catalog().Find("a100_3g.40gb").status().IsNotFound());
  EXPECT_TRUE(Catalog().Find("t4_1g.5gb").status().IsNotFound());
}

TEST(MigProfile, UnknownProfileIsNotFoundWithTheValidOnes) {
  Result<const GpuSpec*> r = Catalog().FindMig("A100-SXM4-40GB", "1g.10gb.x");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound());
  EXPECT_NE(r.status().ToString().find("1g.5gb, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb"),
            std::string::npos)
      << r.status().ToString();
  // An 80GB profile name on the 40GB part.
  EXPECT_TRUE(Catalog().FindMig("A100-SXM4-40GB", "7g.80gb").status().IsNotFound());
  // A GPU type without MIG.
  Result<const GpuSpec*> t4 = Catalog().FindMig("T4", "1g.5gb");
  ASSERT_FALSE(t4.ok());
  EXPECT_TRUE(t4.status().IsNotFound());
  EXPECT_NE(t4.status().ToString().find("has no MIG"), std::string::npos);
}

TEST(MigProfile, CatalogRejectsAProfileLargerThanItsGpu) {
  const std::string yaml = R"(gpus:
  - id: X
    name: X
    architecture: Ampere
    chip: GA100
    compute_capability: "8.0"
    sms: 10
    boost_clock_mhz: 1000
    fp32_tflops: 1
    fp16_tflops: 1
    tensor_fp16_tflops: 1
    memory_gib: 8
    memory_type: HBM2
    memory_bandwidth_gbps: 100
    l2_mib: 1
    pcie_gen: 4
    pcie_lanes: 16
    interconnect: x
    tdp_w: 1
    source: test
    mig:
      compute_slices: 7
      memory_slices: 8
      source: test
      profiles:
        - {name: 1g.1gb, compute_slices: 1, memory_slices: 9, sms: 1, memory_gib: 1, max_instances: 7}
)";
  Result<GpuCatalog> c = GpuCatalog::FromYaml(yaml, "t.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsInvalidArgument());
  EXPECT_NE(c.status().ToString().find("t.yaml (X):26"), std::string::npos) << c.status().ToString();
}

}  // namespace
}  // namespace hase
