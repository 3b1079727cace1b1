// Float16 graphs on ort-cpu where what ORT fuses depends on the optimisation level a rule runs
// at: LayerNormFusion's level-1 registration (opset ≥ 17, before partitioning, so float16
// fuses) against its level-2 one (float only on the CPU EP). Each case is a small ONNX file
// built here; each asserts hase's kernel list and, where onnxruntime-node is installed
// (tools/ort/node_modules; a failure under CI=true when missing), that ORT's optimised graph
// lists the same kernels in the same order.
#include <algorithm>

#include <gtest/gtest.h>

#include "graph/test_models.h"
#include "kernels/ort_cpu_graph.h"
#include "hase/graph/onnx_loader.h"
#include "hase/kernels/kernel_list_builder.h"
#include "hase/kernels/rules/layer_norm_fusion.h"
#include "testing.h"

namespace hase {
namespace {

using hase::testing::Build;
using hase::testing::ModelBuilder;
using hase::testing::OrtCpuTypes;
using hase::testing::Types;
using V = std::vector<std::string>;

constexpr int32_t kF32 = 1;
constexpr int32_t kF16 = 10;
constexpr int32_t kBool = 9;

void ExpectOrtAgrees(const std::string& path, const KernelList& l) {
  if (auto ort = OrtCpuTypes(path)) {
    EXPECT_EQ(Types(l), *ort) << path;
  }
}

// x[N,4,16] → the decomposed layer norm torch exports below opset 17 (ReduceMean → Sub → Pow →
// ReduceMean → Add → Sqrt → Div → Mul → Add) over `axes`, in `dtype`, at `opset`.
std::string DecomposedLayerNorm(int32_t dtype, int64_t opset, const std::string& file,
                                std::vector<int64_t> axes = {-1}) {
  ModelBuilder b(opset);
  b.Input("x", {"N", "4", "16"}, dtype);
  const std::vector<int64_t> norm = axes.size() == 1 ? std::vector<int64_t>{16}
                                                     : std::vector<int64_t>{4, 16};
  if (dtype == kF16) {
    b.Float16Const("two", {}, {2.0f}).Float16Const("eps", {}, {1e-3f});
  } else {
    b.FloatConst("two", {}, {2.0f}).FloatConst("eps", {}, {1e-3f});
  }
  b.Weight("gamma", norm, false, dtype).Weight("beta", norm, false, dtype);
  ModelBuilder::Ints(b.Node("ReduceMean", {"x"}, {"m"}), "axes", axes);
  b.Node("Sub", {"x", "m"}, {"d"});
  b.Node("Pow", {"d", "two"}, {"d2"});
  ModelBuilder::Ints(b.Node("ReduceMean", {"d2"}, {"v"}), "axes", axes);
  b.Node("Add", {"v", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Div", {"d", "sd"}, {"n"});
  b.Node("Mul", {"n", "gamma"}, {"sc"});
  b.Node("Add", {"sc", "beta"}, {"y"});
  b.Output("y", dtype);
  return b.Write(file);
}

// Issue 12 item 2: at opset 17 ORT's level-1 LayerNormFusion fuses before partitioning, so the
// float16 pattern becomes one float16 LayerNormalization, which the CPU EP runs in float16: no
// Cast. ε is ORT's default 1e-5: ORT reads ε only from a float constant.
TEST(Float16Fusion, LayerNormFusionAtOpset17FusesFloat16) {
  const std::string path = DecomposedLayerNorm(kF16, 17, "ln_decomposed_fp16_op17.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"LayerNormalization"}));
  const Kernel& ln = l.kernels[0];
  EXPECT_EQ(ln.inputs.at(0).name, "x");
  EXPECT_EQ(ln.inputs.at(0).dtype, DType::kFloat16);
  EXPECT_EQ(ln.outputs.at(0).name, "y");
  EXPECT_EQ(ln.outputs.at(0).dtype, DType::kFloat16);
  EXPECT_EQ(ln.bytes_written, 2 * 4 * 16 * 2);
  EXPECT_EQ(ln.parameters, 16 + 16);
  EXPECT_EQ(ln.attributes.at("axis"), (std::vector<int64_t>{2}));
  ExpectOrtAgrees(path, l);
  // Disabled by name, both registrations go: the nine nodes run in float between Casts.
  const KernelList off =
      Build(path, {.batch = 2, .profile = "ort-cpu", .disabled_rules = {"LayerNormFusion"}});
  const V off_types = Types(off);
  EXPECT_EQ(std::count(off_types.begin(), off_types.end(), std::string("ReduceMean")), 2);
}

// The same float16 pattern at opset 16: only the level-2 instance may fuse, and on the CPU EP
// it leaves float16 alone, so the nine nodes run in float between Casts (x once; the float16
// constants two, eps, gamma, beta each through a Cast that stays; one Cast back for
// y). Measured so with
// onnxruntime-node 1.30.
TEST(Float16Fusion, LayerNormFusionBelowOpset17LeavesFloat16ToInsertCast) {
  const std::string path = DecomposedLayerNorm(kF16, 16, "ln_decomposed_fp16_op16.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  EXPECT_EQ(Types(l), (V{"Cast", "Cast", "Cast", "Cast", "Cast", "ReduceMean", "Sub", "Pow",
                         "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add", "Cast"}));
  for (size_t i = 5; i < 14; ++i) {
    EXPECT_EQ(l.kernels[i].outputs.at(0).dtype, DType::kFloat) << l.kernels[i].type;
  }
  ExpectOrtAgrees(path, l);
}

// Float: fused at opset 17 (level 1) and at opset 13 (level 2) alike; the rule itself says which
// registration fuses which opset (ort-cuda's single level-2 instance: both).
TEST(Float16Fusion, LayerNormFusionLevelFollowsOpset) {
  for (int64_t opset : {13, 17}) {
    const std::string path = DecomposedLayerNorm(
        kF32, opset, "ln_decomposed_fp32_op" + std::to_string(opset) + ".onnx");
    const KernelList l = Build(path);
    ASSERT_EQ(Types(l), (V{"LayerNormalization"})) << opset;
    ExpectOrtAgrees(path, l);
    // ort-cuda (1.17.3: no level-1 registration) fuses at both opsets with its level-2 one.
    EXPECT_EQ(Types(Build(path, {.profile = "ort-cuda"})), (V{"LayerNormalization"})) << opset;

    using kernels::rules::LayerNormFusion;
    for (auto level : {LayerNormFusion::Level::kBasic, LayerNormFusion::Level::kExtended,
                       LayerNormFusion::Level::kExtendedOnly}) {
      auto loaded = graph::LoadOnnxGraph(path, {});
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      graph::Graph& g = loaded->graph;
      const LayerNormFusion rule(level);
      int fused = 0;
      for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
        if (!g.node(id).removed && g.node(id).op_type == "ReduceMean" &&
            rule.TryApply(g, id) != kernels::RuleEffect::kUnchanged) {
          ++fused;
        }
      }
      const bool level1 = level == LayerNormFusion::Level::kBasic;
      const bool fuses =
          level == LayerNormFusion::Level::kExtendedOnly || level1 == (opset >= 17);
      EXPECT_EQ(fused, fuses ? 1 : 0) << opset << " level " << static_cast<int>(level);
    }
  }
}

// ORT (an inference build) fuses a layer norm over one axis only (layer_norm_fusion.cc
// L420-L423): over the last two axes the nine nodes stay.
TEST(Float16Fusion, LayerNormFusionNeedsOneAxis) {
  const std::string path = DecomposedLayerNorm(kF32, 13, "ln_decomposed_two_axes.onnx", {-2, -1});
  const KernelList l = Build(path);
  EXPECT_EQ(Types(l), (V{"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul",
                         "Add"}));
  ExpectOrtAgrees(path, l);
}

// SimplifiedLayerNormFusion has no level-1 registration in ORT (graph_transformer_utils.cc: level
// 2 only, L345): a float16 RMSNorm at opset 17 is not fused on the CPU EP and runs in float
// between Casts.
TEST(Float16Fusion, SimplifiedLayerNormFusionStaysLevel2) {
  ModelBuilder b(17);
  b.Input("x", {"N", "4", "16"}, kF16);
  b.Float16Const("two", {}, {2.0f}).Float16Const("eps", {}, {1e-3f});
  b.Weight("gamma", {16}, false, kF16);
  b.Node("Pow", {"x", "two"}, {"x2"});
  ModelBuilder::Ints(b.Node("ReduceMean", {"x2"}, {"v"}), "axes", {-1});
  b.Node("Add", {"v", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Div", {"x", "sd"}, {"n"});
  b.Node("Mul", {"n", "gamma"}, {"y"});
  b.Output("y", kF16);
  const std::string path = b.Write("rms_norm_fp16_op17.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  const V types = Types(l);
  EXPECT_EQ(std::count(types.begin(), types.end(), std::string("SimplifiedLayerNormalization")), 0);
  EXPECT_EQ(std::count(types.begin(), types.end(), std::string("Pow")), 1);
  EXPECT_GT(std::count(types.begin(), types.end(), std::string("Cast")), 0);
  ExpectOrtAgrees(path, l);
}

// Function inlining: float16 ops without a CPU kernel whose schema has a function body run as
// the body. Each row: the op alone in a float16 model, x[N,4,16] → op → y, and the kernels
// onnxruntime-node 1.30 lists (measured; compared live below).
TEST(Float16Fusion, FunctionInliningAgainstOrt) {
  struct Case {
    std::string op;
    int64_t opset;
    int inputs;
    int32_t y_type;
    V want;
  };
  const std::vector<Case> cases = {
      {"Softmax", 13, 1, kF16, {"Cast", "ReduceMax", "Sub", "Exp", "ReduceSum", "Div", "Cast"}},
      {"Softmax", 17, 1, kF16, {"Cast", "ReduceMax", "Sub", "Exp", "ReduceSum", "Div", "Cast"}},
      // Softmax 11 has no function body: one float Softmax between Casts.
      {"Softmax", 11, 1, kF16, {"Cast", "Softmax", "Cast"}},
      {"LogSoftmax", 13, 1, kF16,
       {"Cast", "ReduceMax", "Sub", "Exp", "ReduceSum", "Log", "Sub", "Cast"}},
      {"HardSwish", 14, 1, kF16, {"Cast", "HardSigmoid", "Mul", "Cast"}},
      {"GreaterOrEqual", 16, 2, kBool, {"Cast", "Equal", "Greater", "Or"}},
      {"LessOrEqual", 12, 2, kBool, {"Cast", "Equal", "Less", "Or"}},
  };
  for (const Case& c : cases) {
    ModelBuilder b(c.opset);
    b.Input("x", {"N", "4", "16"}, kF16);
    auto* n = b.Node(c.op, c.inputs == 2 ? V{"x", "x"} : V{"x"}, {"y"});
    if (c.op == "Softmax" || c.op == "LogSoftmax") ModelBuilder::Int(n, "axis", -1);
    b.Output("y", c.y_type);
    const std::string path =
        b.Write("inline_fp16_" + c.op + "_" + std::to_string(c.opset) + ".onnx");
    const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
    EXPECT_EQ(Types(l), c.want) << c.op << " " << c.opset;
    ExpectOrtAgrees(path, l);
  }
}

// The inlined Softmax in detail: the body's values are named as ORT names them (float values
// InsertCastTransformer writes through prefixed InsertedPrecisionFreeCast_), ReduceMax
// reduces the last axis (keepdims 1), ReduceSum reads the axes initializer the body's Constant
// became, and each body node runs in float on bound shapes.
TEST(Float16Fusion, FunctionInliningSoftmaxBody) {
  ModelBuilder b(13);
  b.Input("x", {"N", "4", "16"}, kF16);
  ModelBuilder::Int(b.Node("Softmax", {"x"}, {"y"}), "axis", -1);
  b.Output("y", kF16);
  const std::string path = b.Write("inline_fp16_softmax_body.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"Cast", "ReduceMax", "Sub", "Exp", "ReduceSum", "Div", "Cast"}));
  const Kernel& max = l.kernels[1];
  EXPECT_EQ(max.outputs.at(0).name, "InsertedPrecisionFreeCast__inlfunc_Softmax_X_ReduceMax");
  EXPECT_EQ(max.outputs.at(0).shape, (std::vector<int64_t>{2, 4, 1}));
  EXPECT_EQ(max.outputs.at(0).dtype, DType::kFloat);
  EXPECT_EQ(max.attributes.at("axes"), (std::vector<int64_t>{-1}));
  EXPECT_EQ(max.attributes.at("keepdims"), (std::vector<int64_t>{1}));
  const Kernel& exp = l.kernels[3];
  EXPECT_EQ(exp.outputs.at(0).shape, (std::vector<int64_t>{2, 4, 16}));
  EXPECT_EQ(exp.outputs.at(0).dtype, DType::kFloat);
  const Kernel& sum = l.kernels[4];
  EXPECT_EQ(sum.outputs.at(0).shape, (std::vector<int64_t>{2, 4, 1}));
  bool reads_axes = false;
  for (const auto& t : sum.inputs) reads_axes = reads_axes || t.name == "_inlfunc_Softmax_axes";
  for (const auto& t : sum.weights) reads_axes = reads_axes || t.name == "_inlfunc_Softmax_axes";
  EXPECT_TRUE(reads_axes);
  EXPECT_EQ(l.kernels[6].outputs.at(0).name, "y");
  EXPECT_EQ(l.kernels[6].outputs.at(0).dtype, DType::kFloat16);
  // The float model keeps its Softmax: the CPU EP has a float kernel.
  ModelBuilder f(13);
  f.Input("x", {"N", "4", "16"});
  ModelBuilder::Int(f.Node("Softmax", {"x"}, {"y"}), "axis", -1);
  f.Output("y");
  const std::string fp32 = f.Write("inline_fp32_softmax.onnx");
  const KernelList lf = Build(fp32);
  EXPECT_EQ(Types(lf), (V{"Softmax"}));
  ExpectOrtAgrees(fp32, lf);
  // Disabled by name, the float16 Softmax runs as one float Softmax between Casts.
  EXPECT_EQ(Types(Build(path, {.batch = 2, .profile = "ort-cpu",
                               .disabled_rules = {"FunctionInlining"}})),
            (V{"Cast", "Softmax", "Cast"}));
}

// Scaled dot-product attention in float16 (opset 13): the Softmax every transformer has becomes
// its body, and with the MatMuls and Mul it runs in float: Casts of x, of the scale and of the
// Transpose's output (the Transpose has a float16 kernel and reads x as it is), one Cast out.
// onnxruntime-node 1.30 lists the same 13 kernels in the same order.
TEST(Float16Fusion, FunctionInliningAttention) {
  ModelBuilder b(13);
  b.Input("x", {"N", "4", "16", "8"}, kF16).Float16Const("scale", {}, {0.35f});
  ModelBuilder::Ints(b.Node("Transpose", {"x"}, {"kt"}), "perm", {0, 1, 3, 2});
  b.Node("MatMul", {"x", "kt"}, {"s"});
  b.Node("Mul", {"s", "scale"}, {"ss"});
  ModelBuilder::Int(b.Node("Softmax", {"ss"}, {"p"}), "axis", -1);
  b.Node("MatMul", {"p", "x"}, {"y"});
  b.Output("y", kF16);
  const std::string path = b.Write("attention_fp16.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"Cast", "Cast", "Transpose", "Cast", "MatMul", "Mul", "ReduceMax", "Sub",
                         "Exp", "ReduceSum", "Div", "MatMul", "Cast"}));
  EXPECT_EQ(l.kernels[2].inputs.at(0).name, "x");
  EXPECT_EQ(l.kernels[2].outputs.at(0).dtype, DType::kFloat16);
  EXPECT_EQ(l.kernels[3].inputs.at(0).name, "kt");
  EXPECT_EQ(l.kernels[10].outputs.at(0).name, "InsertedPrecisionFreeCast_p");
  EXPECT_EQ(l.kernels[10].outputs.at(0).shape, (std::vector<int64_t>{2, 4, 16, 16}));
  ExpectOrtAgrees(path, l);
}

// Issue 24: mobilenet_v3_large in float16 at opset 17 had 20 Casts more than ORT. Its HardSwish
// ops (no float16 CPU kernel) are inlined as HardSigmoid + Mul, and every inlined body used the
// same prefix, so the second body's HardSigmoid overwrote the first's tensor
// (_inlfunc_HardSwish_HS_X) and the graph lost its ops and gained Casts. Each body now gets its
// own prefix (_inlfunc_HardSwish, _inlfunc_HardSwish_token_0, …), as Graph::GenerateNodeName does.
// Conv → HardSwish → Conv → HardSwish in float16: two HardSigmoid + Mul pairs, shapes of their
// own, and the same kernels as onnxruntime-node 1.30 in the same order.
TEST(Float16Fusion, FunctionInliningTwiceKeepsEachBody) {
  ModelBuilder b(17);
  b.Input("x", {"N", "3", "8", "8"}, kF16);
  b.Weight("w1", {4, 3, 3, 3}, false, kF16).Weight("w2", {6, 4, 1, 1}, false, kF16);
  ModelBuilder::Ints(b.Node("Conv", {"x", "w1"}, {"c1"}), "strides", {2, 2});
  b.Node("HardSwish", {"c1"}, {"h1"});
  b.Node("Conv", {"h1", "w2"}, {"c2"});
  b.Node("HardSwish", {"c2"}, {"y"});
  b.Output("y", kF16);
  const std::string path = b.Write("inline_fp16_hardswish_twice.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"Cast", "Cast", "Cast", "Conv", "HardSigmoid", "Mul", "Conv",
                         "HardSigmoid", "Mul", "Cast"}));
  EXPECT_EQ(l.kernels[4].outputs.at(0).shape, (std::vector<int64_t>{2, 4, 3, 3}));
  EXPECT_EQ(l.kernels[7].outputs.at(0).shape, (std::vector<int64_t>{2, 6, 3, 3}));
  EXPECT_NE(l.kernels[4].outputs.at(0).name, l.kernels[7].outputs.at(0).name);
  ExpectOrtAgrees(path, l);
}

}  // namespace
}  // namespace hase
