// JSON (docs/kernels-json.md), CSV and table output of a KernelList.
#include <gtest/gtest.h>

#include "hase/kernels/kernel_list_builder.h"
#include "hase/kernels/kernel_list_format.h"
#include "testing.h"

namespace hase {
namespace {

KernelList ResNet18() {
  auto l = BuildKernelList(hase::testing::SourceDir() + "/models/resnet18.onnx", {.batch = 2});
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return *l;
}

TEST(KernelsJson, SchemaFieldsAndTotals) {
  const KernelList l = ResNet18();
  const nlohmann::json j = KernelListToJson(l);
  EXPECT_EQ(j.at("schema"), "hase.kernels");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("profile"), "ort-cuda");
  EXPECT_EQ(j.at("batch"), 2);
  EXPECT_EQ(j.at("inputs")[0].at("shape"), (std::vector<int64_t>{2, 3, 224, 224}));
  EXPECT_EQ(j.at("totals").at("kernels"), 24);
  EXPECT_DOUBLE_EQ(j.at("totals").at("macs").get<double>(), l.total_macs());
  EXPECT_EQ(j.at("totals").at("by_family").at("conv").at("kernels"), 20);
  const auto& k0 = j.at("kernels")[0];
  EXPECT_EQ(k0.at("type"), "FusedConv(Relu)");
  EXPECT_EQ(k0.at("family"), "conv");
  EXPECT_EQ(k0.at("attributes").at("kernel_shape"), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(k0.at("bytes_by_dtype").at("float").at("activations_read"), 2 * 3 * 224 * 224 * 4);
  EXPECT_EQ(k0.at("dram_bytes"), l.kernels[0].dram_bytes());
}

TEST(KernelsJson, RoundTrips) {
  const KernelList l = ResNet18();
  auto back = KernelListFromJson(KernelListToJson(l).dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->kernels.size(), l.kernels.size());
  for (size_t i = 0; i < l.kernels.size(); ++i) {
    const Kernel& a = l.kernels[i];
    const Kernel& b = back->kernels[i];
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.family, b.family);
    EXPECT_EQ(a.attributes, b.attributes);
    EXPECT_EQ(a.macs, b.macs);
    EXPECT_EQ(a.flops, b.flops);
    EXPECT_EQ(a.dram_bytes(), b.dram_bytes());
    EXPECT_EQ(a.parameters, b.parameters);
    ASSERT_EQ(a.outputs.size(), b.outputs.size());
    EXPECT_EQ(a.outputs[0].shape, b.outputs[0].shape);
    EXPECT_EQ(a.outputs[0].dtype, b.outputs[0].dtype);
  }
  EXPECT_EQ(back->total_macs(), l.total_macs());
}

TEST(KernelsJson, RejectsOtherSchemasAndNewerVersions) {
  auto wrong = KernelListFromJson(R"({"schema":"hase.other","schema_version":1})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(wrong.status().IsParse());
  auto newer = KernelListFromJson(R"({"schema":"hase.kernels","schema_version":2})");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().message(),
            "hase.kernels schema_version 2 is newer than this build understands (1)");
  EXPECT_FALSE(KernelListFromJson("{").ok());
}

TEST(KernelsCsv, HeaderAndQuotedFusedType) {
  const std::string csv = KernelListToCsv(ResNet18());
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "index,type,op_type,family,source_nodes,input_shapes,output_shapes,kernel_shape,"
            "strides,pads,dilations,group,macs,flops,activation_bytes_read,weight_bytes_read,"
            "bytes_written,parameters,view_only,cpu_placed");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 25);
  EXPECT_NE(csv.find(",\"FusedConv(Add,Relu)\",FusedConv,conv,"), std::string::npos);
}

TEST(KernelsTable, TotalsLine) {
  const std::string t = KernelListToTable(ResNet18());
  EXPECT_NE(t.find("total: 24 kernels, 3.628 GMAC"), std::string::npos) << t.substr(t.rfind("total"));
}

}  // namespace
}  // namespace hase
