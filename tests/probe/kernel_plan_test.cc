#include "kernel_list_json.h"
#include "kernel_plan.h"
#include "training_row.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

// ResNet-50's last bottleneck: 1x1 conv 512→2048 on 7x7 with the residual Add and Relu fused,
// and its stem conv; MobileNetV2's depthwise 3x3; a classifier Gemm; a Softmax; a Concat.
constexpr char kJson[] = R"json({
  "schema": "hase.kernels", "schema_version": 1,
  "model": "resnet50.onnx", "profile": "ort-cuda", "batch": 1,
  "inputs": [{"name": "data", "shape": [1, 3, 224, 224], "dtype": "float"}],
  "kernels": [
    {"index": 0, "type": "FusedConv(Relu)", "op_type": "FusedConv", "fused_ops": ["Relu"],
     "family": "conv", "source_nodes": ["conv1", "relu1"],
     "inputs": [{"name": "data", "shape": [1, 3, 224, 224], "dtype": "float"}],
     "weights": [{"name": "w0", "shape": [64, 3, 7, 7], "dtype": "float"},
                 {"name": "b0", "shape": [64], "dtype": "float"}],
     "outputs": [{"name": "c1", "shape": [1, 64, 112, 112], "dtype": "float"}],
     "attributes": {"kernel_shape": [7, 7], "strides": [2, 2], "pads": [3, 3, 3, 3],
                    "dilations": [1, 1], "group": 1, "auto_pad_note": "ignored"},
     "macs": 118013952, "flops": 236027904, "activation_bytes_read": 602112,
     "weight_bytes_read": 37888, "bytes_written": 3211264, "parameters": 9472},
    {"index": 1, "type": "FusedConv(Add,Relu)", "op_type": "FusedConv",
     "fused_ops": ["Add", "Relu"], "family": "conv",
     "inputs": [{"name": "x", "shape": [1, 512, 7, 7], "dtype": 1},
                {"name": "skip", "shape": [1, 2048, 7, 7], "dtype": 1}],
     "weights": [{"name": "w", "shape": [2048, 512, 1, 1]}, {"name": "b", "shape": [2048]}],
     "outputs": [{"name": "y", "shape": [1, 2048, 7, 7]}],
     "attributes": {"kernel_shape": [1, 1], "strides": [1, 1], "pads": [0, 0, 0, 0], "group": 1},
     "flops": 102760448},
    {"index": 2, "type": "FusedConv(Clip)", "op_type": "FusedConv", "fused_ops": ["Clip"],
     "family": "grouped_conv",
     "inputs": [{"name": "dx", "shape": [1, 32, 112, 112]}],
     "weights": [{"name": "dw", "shape": [32, 1, 3, 3]}, {"name": "db", "shape": [32]}],
     "outputs": [{"name": "dy", "shape": [1, 32, 112, 112]}],
     "attributes": {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "group": 32}},
    {"index": 3, "type": "Gemm", "op_type": "Gemm", "family": "gemm",
     "inputs": [{"name": "flat", "shape": [1, 2048]}],
     "weights": [{"name": "fc_w", "shape": [1000, 2048]}, {"name": "fc_b", "shape": [1000]}],
     "outputs": [{"name": "logits", "shape": [1, 1000]}],
     "attributes": {"transB": 1, "alpha_note": [1.0]}},
    {"index": 4, "type": "Softmax", "op_type": "Softmax", "family": "normalization",
     "inputs": [{"name": "logits", "shape": [1, 1000]}],
     "outputs": [{"name": "prob", "shape": [1, 1000]}], "attributes": {"axis": -1}},
    {"index": 5, "type": "Concat", "op_type": "Concat", "family": "data_movement",
     "inputs": [{"name": "a", "shape": [1, 16, 80, 80]}, {"name": "b", "shape": [1, 32, 80, 80]}],
     "outputs": [{"name": "ab", "shape": [1, 48, 80, 80]}], "attributes": {"axis": 1}},
    {"index": 6, "type": "Flatten", "op_type": "Flatten", "family": "data_movement",
     "view_only": true,
     "inputs": [{"name": "pool", "shape": [1, 2048, 1, 1]}],
     "outputs": [{"name": "flat", "shape": [1, 2048]}]},
    {"index": 7, "type": "MatMul", "op_type": "MatMul", "family": "gemm",
     "inputs": [{"name": "q", "shape": [2, 8, 64, 32]}, {"name": "kt", "shape": [2, 8, 32, 64]}],
     "outputs": [{"name": "att", "shape": [2, 8, 64, 64]}]},
    {"index": 8, "type": "GlobalAveragePool", "op_type": "GlobalAveragePool", "family": "pooling",
     "inputs": [{"name": "f", "shape": [1, 2048, 7, 7]}],
     "outputs": [{"name": "pool", "shape": [1, 2048, 1, 1]}]},
    {"index": 9, "type": "Add(Relu)", "op_type": "Add", "fused_ops": ["Relu"],
     "family": "elementwise",
     "inputs": [{"name": "e1", "shape": [1, 64, 56, 56]}, {"name": "e2", "shape": [1, 64, 56, 56]}],
     "outputs": [{"name": "e3", "shape": [1, 64, 56, 56]}]}
  ]
})json";

class KernelPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto l = ParseKernelListJson(kJson, "test.json");
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    list_ = *l;
  }
  KernelPlan Plan(int i) {
    auto p = PlanKernel(list_.kernels.at(i));
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : KernelPlan{};
  }
  KernelList list_;
};

TEST_F(KernelPlanTest, JsonFieldsParsed) {
  EXPECT_EQ(list_.model, "resnet50.onnx");
  EXPECT_EQ(list_.profile, "ort-cuda");
  ASSERT_EQ(list_.graph_inputs.size(), 1u);
  EXPECT_EQ(list_.graph_inputs[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
  ASSERT_EQ(list_.kernels.size(), 10u);
  const Kernel& k = list_.kernels[0];
  EXPECT_EQ(k.type, "FusedConv(Relu)");
  EXPECT_EQ(k.family, KernelFamily::kConv);
  EXPECT_EQ(k.fused_ops, std::vector<std::string>{"Relu"});
  EXPECT_EQ(k.attributes.at("pads"), (std::vector<int64_t>{3, 3, 3, 3}));
  EXPECT_EQ(k.attributes.at("group"), std::vector<int64_t>{1});
  EXPECT_EQ(k.attributes.count("auto_pad_note"), 0u);  // strings are not integer attributes
  EXPECT_DOUBLE_EQ(k.flops, 236027904);
  EXPECT_EQ(k.dram_bytes(), 602112 + 37888 + 3211264);
  EXPECT_EQ(list_.kernels[1].inputs[0].dtype, DType::kFloat);  // dtype as ONNX number
  EXPECT_TRUE(list_.kernels[6].view_only);
  EXPECT_EQ(list_.kernels[3].attributes.count("alpha_note"), 0u);  // float lists are dropped
}

TEST_F(KernelPlanTest, StemConvWithRelu) {
  KernelPlan p = Plan(0);
  EXPECT_EQ(p.backend, Backend::kCudnnConv);
  EXPECT_EQ(p.op, "conv2d_relu");
  const ConvDims& d = p.conv;
  EXPECT_EQ(d.n, 1); EXPECT_EQ(d.c, 3); EXPECT_EQ(d.h, 224); EXPECT_EQ(d.w, 224);
  EXPECT_EQ(d.k, 64); EXPECT_EQ(d.r, 7); EXPECT_EQ(d.s, 7);
  EXPECT_EQ(d.stride_h, 2); EXPECT_EQ(d.pad_h, 3); EXPECT_EQ(d.groups, 1);
  EXPECT_EQ(d.p, 112); EXPECT_EQ(d.q, 112);  // (224 + 6 − 7) / 2 + 1
  EXPECT_TRUE(d.bias);
  EXPECT_TRUE(d.relu);
  EXPECT_FALSE(d.residual);
  EXPECT_TRUE(d.epilogue.empty());
  EXPECT_FALSE(p.approximate);
}

TEST_F(KernelPlanTest, ResidualConvAndDepthwiseClip) {
  KernelPlan p = Plan(1);
  EXPECT_EQ(p.op, "conv2d_add_relu");
  EXPECT_TRUE(p.conv.residual);
  EXPECT_TRUE(p.conv.relu);
  EXPECT_EQ(p.conv.p, 7);
  KernelPlan dw = Plan(2);
  EXPECT_EQ(dw.op, "depthwise_conv2d_clip");
  EXPECT_EQ(dw.conv.groups, 32);
  EXPECT_FALSE(dw.conv.relu);
  EXPECT_EQ(dw.conv.epilogue, std::vector<EltOp>{EltOp::kClip});
  EXPECT_EQ(dw.conv.p, 112);
}

TEST_F(KernelPlanTest, GemmShapes) {
  KernelPlan fc = Plan(3);
  EXPECT_EQ(fc.backend, Backend::kCublasGemm);
  EXPECT_EQ(fc.op, "linear");
  EXPECT_EQ(fc.gemm.m, 1); EXPECT_EQ(fc.gemm.n, 1000); EXPECT_EQ(fc.gemm.k, 2048);
  EXPECT_TRUE(fc.gemm.trans_b);
  EXPECT_TRUE(fc.gemm.bias);
  EXPECT_EQ(fc.gemm.batch, 1);
  KernelPlan bmm = Plan(7);
  EXPECT_EQ(bmm.op, "bmm");
  EXPECT_EQ(bmm.gemm.batch, 16);
  EXPECT_EQ(bmm.gemm.m, 64); EXPECT_EQ(bmm.gemm.n, 64); EXPECT_EQ(bmm.gemm.k, 32);
  EXPECT_TRUE(bmm.gemm.a_batched);
  EXPECT_TRUE(bmm.gemm.b_batched);
  EXPECT_FALSE(bmm.gemm.bias);
}

TEST_F(KernelPlanTest, NormConcatViewPoolElementwise) {
  KernelPlan sm = Plan(4);
  EXPECT_EQ(sm.backend, Backend::kRowNorm);
  EXPECT_EQ(sm.rows, 1);
  EXPECT_EQ(sm.inner, 1000);
  KernelPlan cat = Plan(5);
  EXPECT_EQ(cat.backend, Backend::kConcat);
  EXPECT_EQ(cat.outer, 1);
  EXPECT_EQ(cat.concat_inner, (std::vector<int64_t>{16 * 6400, 32 * 6400}));
  EXPECT_EQ(Plan(6).backend, Backend::kSkip);
  KernelPlan gap = Plan(8);
  EXPECT_EQ(gap.backend, Backend::kCudnnPool);
  EXPECT_FALSE(gap.pool.max);
  EXPECT_EQ(gap.pool.r, 7);
  EXPECT_EQ(gap.pool.p, 1);
  EXPECT_EQ(gap.op, "globalaveragepool");
  KernelPlan add = Plan(9);
  EXPECT_EQ(add.backend, Backend::kElementwise);
  EXPECT_EQ(add.ops, (std::vector<EltOp>{EltOp::kAdd, EltOp::kRelu}));
  EXPECT_EQ(add.operand_elements, (std::vector<int64_t>{200704, 200704}));
  EXPECT_EQ(add.op, "add_relu");
}

TEST(KernelPlan, SplitAlongChannels) {
  // YOLOv8n's C2f split: [1, 32, 160, 160] → 2 × [1, 16, 160, 160] on axis 1.
  Kernel k;
  k.op_type = k.type = "Split";
  k.family = KernelFamily::kDataMovement;
  k.inputs = {{"x", {1, 32, 160, 160}, DType::kFloat}};
  k.weights = {{"split", {2}, DType::kInt64}};
  k.outputs = {{"a", {1, 16, 160, 160}, DType::kFloat}, {"b", {1, 16, 160, 160}, DType::kFloat}};
  k.attributes["axis"] = {1};
  auto p = PlanKernel(k);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->backend, Backend::kSplit);
  EXPECT_EQ(p->outer, 1);
  EXPECT_EQ(p->concat_inner, (std::vector<int64_t>{16 * 25600, 16 * 25600}));
  EXPECT_EQ(p->out_elements, 32 * 25600);
}

TEST_F(KernelPlanTest, UnsupportedAndBadInput) {
  Kernel k3d = list_.kernels[0];
  k3d.inputs[0].shape = {1, 3, 16, 112, 112};
  EXPECT_TRUE(PlanKernel(k3d).status().IsUnsupported());
  Kernel noweight = list_.kernels[0];
  noweight.weights.clear();
  EXPECT_TRUE(PlanKernel(noweight).status().IsInvalidArgument());
  Kernel unknown_act = list_.kernels[9];
  unknown_act.fused_ops = {"Frobnicate"};
  auto p = PlanKernel(unknown_act);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->approximate);
}

TEST_F(KernelPlanTest, TrainingRowMatchesSchema) {
  const Kernel& k = list_.kernels[1];
  KernelPlan p = Plan(1);
  TimedKernel t;
  t.model = "resnet50";
  t.batch = 8;
  t.gpu = "NVIDIA H200";
  t.load_level = "sm=0.5";
  t.kernel = &k;
  t.plan = &p;
  t.latency_ms.n = 25;
  t.latency_ms.median = 0.0421;
  t.load.gpm_sm_util_pct = 50;
  const auto& header = TrainingHeader();
  const auto row = TrainingRow(t);
  ASSERT_EQ(row.size(), header.size());
  auto col = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return row[it - header.begin()];
  };
  // Required columns of docs/training-data.md.
  EXPECT_EQ(col("source"), "probe");
  EXPECT_EQ(col("gpu"), "NVIDIA H200");
  EXPECT_EQ(col("family"), "conv");
  EXPECT_EQ(col("op"), "conv2d_add_relu");
  EXPECT_EQ(col("latency_ms"), "0.0421");
  EXPECT_EQ(col("dtype"), "float");
  EXPECT_EQ(col("n"), "1"); EXPECT_EQ(col("c"), "512"); EXPECT_EQ(col("h"), "7");
  EXPECT_EQ(col("k"), "2048"); EXPECT_EQ(col("r"), "1"); EXPECT_EQ(col("groups"), "1");
  EXPECT_EQ(col("gemm_m"), "");
  EXPECT_EQ(col("flops"), "102760448");
  EXPECT_EQ(col("sm_active"), "0.5");
  EXPECT_EQ(col("dram_active"), "");  // not measured: empty, never 0
  EXPECT_EQ(col("includes_transfer"), "0");
  EXPECT_EQ(col("flags"), "");
  EXPECT_EQ(col("impl"), "cudnn_conv");
  EXPECT_EQ(col("load_level"), "sm=0.5");
  EXPECT_EQ(col("repeats"), "25");
  EXPECT_EQ(col("batch"), "8");
}

TEST(KernelListJson, Errors) {
  EXPECT_TRUE(ParseKernelListJson("{not json", "x.json").status().IsParse());
  EXPECT_TRUE(ParseKernelListJson("{}", "x.json").status().IsInvalidArgument());
  auto bad_family = ParseKernelListJson(
      R"({"kernels": [{"op_type": "Conv", "family": "convolution"}]})", "x.json");
  ASSERT_FALSE(bad_family.ok());
  EXPECT_TRUE(bad_family.status().IsInvalidArgument());
  EXPECT_NE(bad_family.status().where().find("kernels[0]"), std::string::npos);
  auto symbolic = ParseKernelListJson(
      R"({"kernels": [{"op_type": "Relu", "family": "elementwise",
          "inputs": [{"name": "x", "shape": ["N", 3]}]}]})", "x.json");
  EXPECT_TRUE(symbolic.status().IsInvalidArgument());
  auto wrong_type = ParseKernelListJson(
      R"({"model": 3, "kernels": []})", "x.json");
  EXPECT_TRUE(wrong_type.status().IsInvalidArgument());
  EXPECT_TRUE(LoadKernelListJson("/nonexistent/k.json").status().IsIO());
  EXPECT_TRUE(ParseKernelListJson(R"({"schema": "other", "kernels": []})", "x.json")
                  .status().IsParse());
  EXPECT_TRUE(ParseKernelListJson(
                  R"({"schema": "hase.kernels", "schema_version": 2, "kernels": []})", "x.json")
                  .status().IsParse());
}

}  // namespace
}  // namespace hase::probe
