// Fusion rules and the cost model on tiny in-code models, per profile.
#include <algorithm>

#include <gtest/gtest.h>

#include "graph/test_models.h"
#include "hase/kernels/fusion_profile.h"
#include "hase/kernels/kernel_list_builder.h"
#include "testing.h"

namespace hase {
namespace {

using hase::testing::ModelBuilder;

std::vector<std::string> Types(const std::string& path, const std::string& profile) {
  auto l = BuildKernelList(path, {.profile = profile});
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  std::vector<std::string> t;
  if (l.ok()) {
    for (const auto& k : l->kernels) t.push_back(k.type);
  }
  return t;
}

using V = std::vector<std::string>;

// x[N,8,16,16] → Conv(W[8,8,3,3], pad 1) (→ …)
onnx::NodeProto* Conv3x3(ModelBuilder& b, const std::string& x, const std::string& y, bool bias) {
  auto* c = b.Node("Conv", bias ? V{x, "w", "b"} : V{x, "w"}, {y});
  ModelBuilder::Ints(c, "kernel_shape", {3, 3});
  ModelBuilder::Ints(c, "pads", {1, 1, 1, 1});
  return c;
}

ModelBuilder Base(bool bias = true) {
  ModelBuilder b;
  b.Input("x", {"N", "8", "16", "16"}).Weight("w", {8, 8, 3, 3});
  if (bias) b.Weight("b", {8});
  return b;
}

TEST(ConvBnFold, FoldsBnAndAddsBias) {
  ModelBuilder b = Base(/*bias=*/false);
  Conv3x3(b, "x", "c", false);
  b.Weight("s", {8}).Weight("sh", {8}).Weight("m", {8}).Weight("v", {8});
  b.Node("BatchNormalization", {"c", "s", "sh", "m", "v"}, {"bn"});
  b.Node("Relu", {"bn"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("conv_bn.onnx");
  auto l = BuildKernelList(path, {});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->kernels.size(), 1u);
  const Kernel& k = l->kernels[0];
  EXPECT_EQ(k.type, "FusedConv(Relu)");
  EXPECT_EQ(k.source_nodes, (V{"Conv_1", "BatchNormalization_2", "Relu_3"}));
  EXPECT_EQ(k.parameters, 8 * 8 * 9 + 8);  // W + the folded bias
  // Unfused: BN counts scale and shift as parameters, mean/var as bytes only.
  auto none = BuildKernelList(path, {.profile = "none"});
  ASSERT_TRUE(none.ok());
  ASSERT_EQ(none->kernels.size(), 3u);
  EXPECT_EQ(none->kernels[1].parameters, 16);
  EXPECT_EQ(none->kernels[1].weight_bytes_read, 4 * 8 * 4);
  EXPECT_EQ(none->kernels[1].flops, 2.0 * 8 * 16 * 16);
}

TEST(ConvAddFusion, PerChannelConstantFoldsActivationTensorDoesNot) {
  ModelBuilder b = Base();
  Conv3x3(b, "x", "c", true);
  b.FloatConst("k", {8, 1, 1}, std::vector<float>(8, 0.5f));
  b.Node("Add", {"c", "k"}, {"a"});
  b.Node("Relu", {"a"}, {"y"});
  b.Output("y");
  EXPECT_EQ(Types(b.Write("conv_add.onnx"), "ort-cpu"), (V{"FusedConv(Relu)"}));

  ModelBuilder r = Base();  // residual: Add of two activations
  Conv3x3(r, "x", "c", true);
  r.Node("Add", {"c", "x"}, {"a"});
  r.Node("Relu", {"a"}, {"y"});
  r.Output("y");
  const std::string path = r.Write("residual.onnx");
  EXPECT_EQ(Types(path, "ort-cpu"), (V{"Conv", "Add", "Relu"}));
  EXPECT_EQ(Types(path, "ort-cuda"), (V{"FusedConv(Add,Relu)"}));
  auto l = BuildKernelList(path, {});
  ASSERT_TRUE(l.ok());
  const Kernel& k = l->kernels[0];
  EXPECT_EQ(k.op_type, "FusedConv");
  EXPECT_EQ(k.fused_ops, (V{"Add", "Relu"}));
  ASSERT_EQ(k.inputs.size(), 1u);  // x is both X and Z: read once
  // 8·16·16 outputs · 8·3·3 MACs; FLOPs add bias, Add, Relu per output element.
  EXPECT_EQ(k.macs, 2048.0 * 72);
  EXPECT_EQ(k.flops, 2 * 2048.0 * 72 + 2048.0 * 3);
}

TEST(ConvActivationFusion, ClipFusesOnCpuOnlyAndOnlyWithConstantBounds) {
  ModelBuilder b = Base();
  Conv3x3(b, "x", "c", true);
  b.FloatConst("lo", {}, {0.0f}).FloatConst("hi", {}, {6.0f});
  b.Node("Clip", {"c", "lo", "hi"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("relu6.onnx");
  EXPECT_EQ(Types(path, "ort-cpu"), (V{"FusedConv(Clip)"}));
  EXPECT_EQ(Types(path, "ort-cuda"), (V{"Conv", "Clip"}));

  ModelBuilder d = Base();
  d.Input("hi", {});
  Conv3x3(d, "x", "c", true);
  d.FloatConst("lo", {}, {0.0f});
  d.Node("Clip", {"c", "lo", "hi"}, {"y"});
  d.Output("y");
  EXPECT_EQ(Types(d.Write("clip_dynamic.onnx"), "ort-cpu"), (V{"Conv", "Clip"}));
}

TEST(ConvActivationFusion, NotWhenConvOutputHasTwoConsumersOrIsAGraphOutput) {
  ModelBuilder b = Base();
  Conv3x3(b, "x", "c", true);
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y").Output("c");
  EXPECT_EQ(Types(b.Write("conv_out.onnx"), "ort-cuda"), (V{"Conv", "Relu"}));
}

TEST(QuickGeluFusion, SiluAndScaledSigmoid) {
  ModelBuilder b = Base();
  Conv3x3(b, "x", "c", true);
  b.Node("Sigmoid", {"c"}, {"s"});
  b.Node("Mul", {"c", "s"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("silu.onnx");
  EXPECT_EQ(Types(path, "ort-cuda"), (V{"Conv", "QuickGelu"}));
  EXPECT_EQ(Types(path, "ort-cpu"), (V{"Conv", "QuickGelu"}));
  EXPECT_EQ(Types(path, "none"), (V{"Conv", "Sigmoid", "Mul"}));

  ModelBuilder a;
  a.Input("x", {"N", "16"}).FloatConst("alpha", {}, {1.702f});
  a.Node("Mul", {"x", "alpha"}, {"xa"});
  a.Node("Sigmoid", {"xa"}, {"s"});
  a.Node("Mul", {"x", "s"}, {"y"});
  a.Output("y");
  auto l = BuildKernelList(a.Write("quick_gelu.onnx"), {});
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->kernels.size(), 1u);
  EXPECT_EQ(l->kernels[0].type, "QuickGelu");
  EXPECT_EQ(l->kernels[0].source_nodes.size(), 3u);
  EXPECT_EQ(l->kernels[0].flops, 16 * 5.0);
}

TEST(GemmActivationFusion, CpuOnly) {
  ModelBuilder b;
  b.Input("x", {"N", "64"}).Weight("w", {32, 64}).Weight("b", {32});
  auto* g = b.Node("Gemm", {"x", "w", "b"}, {"g"});
  ModelBuilder::Int(g, "transB", 1);
  b.Node("Relu", {"g"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("gemm_relu.onnx");
  EXPECT_EQ(Types(path, "ort-cpu"), (V{"FusedGemm(Relu)"}));
  EXPECT_EQ(Types(path, "ort-cuda"), (V{"Gemm", "Relu"}));
  auto l = BuildKernelList(path, {.batch = 4});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->kernels[0].macs, 4.0 * 32 * 64);
  EXPECT_EQ(l->kernels[0].parameters, 32 * 64 + 32);
  EXPECT_EQ(l->kernels[0].weight_bytes_read, (32 * 64 + 32) * 4);
}

TEST(MatMulAddFusion, BecomesGemm) {
  ModelBuilder b;
  b.Input("x", {"N", "64"}).Weight("w", {64, 32}).Weight("b", {32});
  b.Node("MatMul", {"x", "w"}, {"m"});
  b.Node("Add", {"m", "b"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("matmul_add.onnx");
  EXPECT_EQ(Types(path, "ort-cuda"), (V{"Gemm"}));
  EXPECT_EQ(Types(path, "none"), (V{"MatMul", "Add"}));
}

TEST(IdentityAndDropoutElimination, RemovedExceptUnderNone) {
  ModelBuilder b;
  b.Input("x", {"N", "16"});
  b.Node("Identity", {"x"}, {"i"});
  b.Node("Relu", {"i"}, {"r"});
  b.Node("Dropout", {"r"}, {"d"});
  b.Node("Relu", {"d"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("identity_dropout.onnx");
  EXPECT_EQ(Types(path, "ort-cuda"), (V{"Relu", "Relu"}));
  EXPECT_EQ(Types(path, "ort-cpu"), (V{"Relu", "Relu"}));
  EXPECT_EQ(Types(path, "none"), (V{"Identity", "Relu", "Dropout", "Relu"}));
}

TEST(PadFusion, ZeroPadMergesIntoConvPads) {
  ModelBuilder b = Base();
  b.Int64Const("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  auto* p = b.Node("Pad", {"x", "pads"}, {"p"});
  ModelBuilder::Str(p, "mode", "constant");
  auto* c = b.Node("Conv", {"p", "w", "b"}, {"y"});
  ModelBuilder::Ints(c, "kernel_shape", {3, 3});
  b.Output("y");
  auto l = BuildKernelList(b.Write("pad_conv.onnx"), {});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->kernels.size(), 1u);
  EXPECT_EQ(l->kernels[0].type, "Conv");
  EXPECT_EQ(l->kernels[0].attributes.at("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(l->kernels[0].outputs[0].shape, (std::vector<int64_t>{1, 8, 16, 16}));
}

TEST(ViewOnly, FlattenAndReshapeMoveNoBytes) {
  ModelBuilder b;
  b.Input("x", {"N", "8", "4", "4"}).Int64Const("shape", {-1, 128});
  b.Node("Flatten", {"x"}, {"f"});
  b.Node("Reshape", {"f", "shape"}, {"y"});
  b.Output("y");
  auto l = BuildKernelList(b.Write("views.onnx"), {});
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->kernels.size(), 2u);
  for (const auto& k : l->kernels) {
    EXPECT_TRUE(k.view_only);
    EXPECT_EQ(k.dram_bytes(), 0);
    EXPECT_EQ(k.flops, 0);
    EXPECT_EQ(k.family, KernelFamily::kDataMovement);
  }
}

TEST(Profiles, UnknownProfileAndUnknownDisabledRule) {
  auto p = kernels::MakeFusionProfile("tensorrt");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(p.status().IsUnsupported());
  EXPECT_EQ(p.status().message(), "unknown fusion profile 'tensorrt'");
  auto d = kernels::MakeFusionProfile("ort-cuda", {"GemmActivationFusion"});  // CPU-only rule
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(d.status().IsInvalidArgument());
  EXPECT_EQ(d.status().message(), "profile 'ort-cuda' has no rule 'GemmActivationFusion'");
  auto none = kernels::MakeFusionProfile("none");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // FunctionInlining is an ort-cpu rule (the CUDA EP has float16 kernels for the ops it expands).
  EXPECT_FALSE(kernels::MakeFusionProfile("ort-cuda", {"FunctionInlining"}).ok());
  auto cpu = kernels::MakeFusionProfile("ort-cpu");
  ASSERT_TRUE(cpu.ok());
  // LayerNormFusion is registered twice on ort-cpu (levels 1 and 2); --disable removes both.
  const auto count = [](const kernels::RuleList& r, const std::string& name) {
    return std::count_if(r.begin(), r.end(), [&](const auto& x) { return x->Name() == name; });
  };
  EXPECT_EQ(count(*cpu, "LayerNormFusion"), 2);
  auto cpu_off = kernels::MakeFusionProfile("ort-cpu", {"LayerNormFusion"});
  ASSERT_TRUE(cpu_off.ok());
  EXPECT_EQ(count(*cpu_off, "LayerNormFusion"), 0);
  EXPECT_EQ(cpu_off->size(), cpu->size() - 2);
}

TEST(Profiles, DisablingConvActivationFusionKeepsResNetReluSeparate) {
  auto l = BuildKernelList(hase::testing::SourceDir() + "/models/resnet18.onnx",
                           {.disabled_rules = {"ConvActivationFusion"}});
  ASSERT_TRUE(l.ok());
  int relu = 0, conv = 0;
  for (const auto& k : l->kernels) {
    relu += k.type == "Relu";
    conv += k.type == "Conv";
  }
  EXPECT_EQ(conv, 20);
  EXPECT_EQ(relu, 17);
}

TEST(UnknownOp, EstimatedWithWarningFailsOnlyWhenStrict) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"});
  b.Node("FooBar", {"x"}, {"f"}, "com.example");
  b.Node("Relu", {"f"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("unknown.onnx");
  auto l = BuildKernelList(path, {});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->kernels.size(), 2u);
  EXPECT_EQ(l->kernels[0].family, KernelFamily::kOther);
  EXPECT_EQ(l->kernels[0].flops, 3 * 8 * 8);  // 1 FLOP per output element
  EXPECT_EQ(l->kernels[0].dram_bytes(), 2 * 3 * 8 * 8 * 4);
  ASSERT_EQ(l->warnings.size(), 1u);
  EXPECT_NE(l->warnings[0].find("unknown op 'FooBar'"), std::string::npos);

  auto strict = BuildKernelList(path, {.strict = true});
  ASSERT_FALSE(strict.ok());
  EXPECT_TRUE(strict.status().IsUnsupported());
  EXPECT_EQ(strict.status().message(), "unknown op 'FooBar'");
  EXPECT_EQ(strict.status().where(), path + ": node 'FooBar_1'");
}

TEST(Options, BatchMustBePositive) {
  auto l = BuildKernelList(hase::testing::SourceDir() + "/models/resnet18.onnx", {.batch = 0});
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(l.status().IsInvalidArgument());
}

TEST(CostModel, ResNet50StemByHand) {
  auto l = BuildKernelList(hase::testing::SourceDir() + "/models/resnet50.onnx", {});
  ASSERT_TRUE(l.ok());
  const Kernel& k = l->kernels[0];  // conv1 7×7/2, 3→64, + Relu
  EXPECT_EQ(k.type, "FusedConv(Relu)");
  EXPECT_EQ(k.family, KernelFamily::kConv);
  EXPECT_EQ(k.attributes.at("kernel_shape"), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(k.attributes.at("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(k.macs, 64.0 * 112 * 112 * 3 * 7 * 7);                       // 118,013,952
  EXPECT_EQ(k.flops, 2 * k.macs + 64.0 * 112 * 112 * 2);                 // + bias + Relu
  EXPECT_EQ(k.activation_bytes_read, 3 * 224 * 224 * 4);
  EXPECT_EQ(k.weight_bytes_read, (64 * 3 * 7 * 7 + 64) * 4);
  EXPECT_EQ(k.bytes_written, 64 * 112 * 112 * 4);
  EXPECT_EQ(k.parameters, 64 * 3 * 7 * 7 + 64);
  const Kernel& fc = l->kernels.back();
  EXPECT_EQ(fc.type, "Gemm");
  EXPECT_EQ(fc.macs, 2048.0 * 1000);
  EXPECT_EQ(fc.parameters, 2048 * 1000 + 1000);
  const Kernel& flatten = l->kernels[l->kernels.size() - 2];
  EXPECT_EQ(flatten.type, "Flatten");
  EXPECT_TRUE(flatten.view_only);
  EXPECT_EQ(flatten.dram_bytes(), 0);
}

}  // namespace
}  // namespace hase
