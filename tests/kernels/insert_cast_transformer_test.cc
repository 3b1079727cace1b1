// InsertCastTransformer (ort-cpu): float16 nodes without a CPU float16 kernel run in float
// between Casts, as onnxruntime-node 1.30's CPU EP runs them. Each case is a small ONNX file
// built here; each asserts hase's kernel list and, where onnxruntime-node is installed
// (tools/ort/node_modules; a failure under CI=true when missing), that ORT's optimised graph
// lists the same kernels in the same order.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/test_models.h"
#include "kernels/ort_cpu_graph.h"
#include "hase/graph/onnx_loader.h"
#include "hase/kernels/kernel_list_builder.h"
#include "hase/kernels/rules/insert_cast_transformer.h"
#include "testing.h"

namespace hase {
namespace {

using hase::testing::ModelBuilder;
using V = std::vector<std::string>;

constexpr int32_t kF32 = 1;
constexpr int32_t kF16 = 10;
constexpr int32_t kI64 = 7;
constexpr int32_t kBool = 9;

using hase::testing::Build;
using hase::testing::OrtCpuTypes;
using hase::testing::Types;

void ExpectOrtAgrees(const std::string& path, const KernelList& l) {
  if (auto ort = OrtCpuTypes(path)) {
    EXPECT_EQ(Types(l), *ort) << path;
  }
}

// x[N,16] → Sigmoid → Mul(x, ·) → y, in `dtype`.
std::string Silu(int32_t dtype, const std::string& file) {
  ModelBuilder b;
  b.Input("x", {"N", "16"}, dtype);
  b.Node("Sigmoid", {"x"}, {"sg"});
  b.Node("Mul", {"x", "sg"}, {"y"});
  b.Output("y", dtype);
  return b.Write(file);
}

// The case measured for issue 12: ORT's CPU graph is Cast, Sigmoid, Mul, Cast. One Cast of x
// serves both readers; the Casts between Sigmoid and Mul cancel (RemoveDuplicateCast). Had the
// level-2 rules seen the float Sigmoid → Mul, QuickGeluFusion would have fused it: the rule runs
// once, after them, as ORT runs it.
TEST(InsertCastTransformer, Float16SigmoidMulRunsInFloat) {
  const std::string path = Silu(kF16, "silu_fp16_cast.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"Cast", "Sigmoid", "Mul", "Cast"}));
  const Kernel& up = l.kernels[0];
  EXPECT_EQ(up.inputs[0].name, "x");
  EXPECT_EQ(up.inputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(up.outputs[0].name, "InsertedPrecisionFreeCast_x");
  EXPECT_EQ(up.outputs[0].dtype, DType::kFloat);
  EXPECT_EQ(up.outputs[0].shape, (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(up.attributes.at("to"), (std::vector<int64_t>{1}));
  // A Cast is an elementwise kernel: 32 elements, 1 FLOP each, 2 B read and 4 B written each.
  EXPECT_EQ(up.flops, 32);
  EXPECT_EQ(up.activation_bytes_read, 64);
  EXPECT_EQ(up.bytes_written, 128);
  EXPECT_EQ(up.parameters, 0);
  // Sigmoid and Mul read and write float.
  EXPECT_EQ(l.kernels[1].inputs[0].dtype, DType::kFloat);
  EXPECT_EQ(l.kernels[1].bytes_written, 128);
  EXPECT_EQ(l.kernels[2].inputs.size(), 2u);
  for (const auto& t : l.kernels[2].inputs) EXPECT_EQ(t.dtype, DType::kFloat) << t.name;
  // The last Cast writes the graph output y, float16.
  const Kernel& down = l.kernels[3];
  EXPECT_EQ(down.outputs[0].name, "y");
  EXPECT_EQ(down.outputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(down.attributes.at("to"), (std::vector<int64_t>{10}));
  EXPECT_EQ(down.activation_bytes_read, 128);
  EXPECT_EQ(down.bytes_written, 64);
  EXPECT_EQ(l.graph_outputs[0].dtype, DType::kFloat16);
  // Under ort-cuda the same file is one QuickGelu (no Casts: the CUDA EP runs float16).
  EXPECT_EQ(Types(Build(path, {.profile = "ort-cuda"})), (V{"QuickGelu"}));
  // Disabled by name, the rule leaves the float16 nodes as they are.
  EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu", .disabled_rules = {"InsertCastTransformer"}})),
            (V{"Sigmoid", "Mul"}));
  ExpectOrtAgrees(path, l);
}

// Issue 12 C03: a float16 Gemm on the CPU EP runs in float (MLFloat16 Gemm is not registered in
// v1.21.0; measured so with 1.30); its float16 weight and bias are cast too, by Casts that stay
// (InsertCastTransformer runs after constant folding). Gemm keeps its Relu unfused: the level-2
// GemmActivationFusion runs while the float16 Gemm has no kernel.
TEST(InsertCastTransformer, Float16GemmCastsItsWeights) {
  ModelBuilder b;
  b.Input("x", {"N", "16"}, kF16).Weight("w", {16, 8}, false, kF16).Weight("bias", {8}, false, kF16);
  b.Node("Gemm", {"x", "w", "bias"}, {"g"});
  b.Node("Relu", {"g"}, {"y"});
  b.Output("y", kF16);
  const std::string path = b.Write("gemm_relu_fp16.onnx");
  const KernelList l = Build(path, {.batch = 4, .profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"Cast", "Cast", "Cast", "Gemm", "Relu", "Cast"}));
  // ORT's order: the Casts of bias, w, x (reverse DFS from Gemm, highest node index first).
  EXPECT_EQ(l.kernels[0].weights.at(0).name, "bias");
  EXPECT_EQ(l.kernels[1].weights.at(0).name, "w");
  EXPECT_EQ(l.kernels[2].inputs.at(0).name, "x");
  // The weight's Cast reads 16·8 float16 weights (256 B), writes 512 B, holds no parameters;
  // Gemm reads the cast float weights and counts the 16·8 + 8 parameters.
  EXPECT_EQ(l.kernels[1].weight_bytes_read, 256);
  EXPECT_EQ(l.kernels[1].bytes_written, 512);
  EXPECT_EQ(l.kernels[1].parameters, 0);
  const Kernel& gemm = l.kernels[3];
  EXPECT_EQ(gemm.parameters, 16 * 8 + 8);
  EXPECT_EQ(gemm.weight_bytes_read, (16 * 8 + 8) * 4);
  EXPECT_EQ(gemm.macs, 4 * 8 * 16);
  EXPECT_EQ(gemm.inputs.at(0).dtype, DType::kFloat);
  EXPECT_EQ(l.total_parameters(), 16 * 8 + 8);
  ExpectOrtAgrees(path, l);

  // The float model: FusedGemm, no Casts.
  ModelBuilder f;
  f.Input("x", {"N", "16"}).Weight("w", {16, 8}).Weight("bias", {8});
  f.Node("Gemm", {"x", "w", "bias"}, {"g"});
  f.Node("Relu", {"g"}, {"y"});
  f.Output("y");
  const std::string fp32 = f.Write("gemm_relu_fp32.onnx");
  const KernelList lf = Build(fp32);
  EXPECT_EQ(Types(lf), (V{"FusedGemm(Relu)"}));
  ExpectOrtAgrees(fp32, lf);
}

// An op the CPU EP has a float16 kernel for (LayerNormalization 17, typed MLFloat16 in v1.21.0
// cpu_execution_provider.cc:L2810) runs as it is, in float16: no Cast.
TEST(InsertCastTransformer, Float16KernelNeedsNoCast) {
  ModelBuilder b(17);
  b.Input("x", {"N", "4", "16"}, kF16).Weight("g", {16}, false, kF16).Weight("bias", {16}, false, kF16);
  ModelBuilder::Int(b.Node("LayerNormalization", {"x", "g", "bias"}, {"y"}), "axis", -1);
  b.Output("y", kF16);
  const std::string path = b.Write("layer_norm_fp16.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"LayerNormalization"}));
  EXPECT_EQ(l.kernels[0].inputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(l.kernels[0].outputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(l.kernels[0].bytes_written, 2 * 4 * 16 * 2);
  ExpectOrtAgrees(path, l);
}

// A float model: the rule changes nothing (ApplyToGraph reports 0) and the kernel list is the
// one without it, field for field.
TEST(InsertCastTransformer, FloatModelUnchanged) {
  const std::string path = Silu(kF32, "silu_fp32_cast.onnx");
  auto loaded = graph::LoadOnnxGraph(path, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const int before = loaded->graph.LiveNodeCount();
  EXPECT_EQ(kernels::rules::InsertCastTransformer().ApplyToGraph(loaded->graph), 0);
  EXPECT_EQ(loaded->graph.LiveNodeCount(), before);
  const KernelList with = Build(path);
  const KernelList without =
      Build(path, {.profile = "ort-cpu", .disabled_rules = {"InsertCastTransformer"}});
  EXPECT_EQ(Types(with), (V{"QuickGelu"}));
  ASSERT_EQ(with.kernels.size(), without.kernels.size());
  for (size_t i = 0; i < with.kernels.size(); ++i) {
    EXPECT_EQ(with.kernels[i].type, without.kernels[i].type);
    EXPECT_EQ(with.kernels[i].flops, without.kernels[i].flops);
    EXPECT_EQ(with.kernels[i].dram_bytes(), without.kernels[i].dram_bytes());
  }
  ExpectOrtAgrees(path, with);
}

// ForceSingleNodeCPUFloat16ToFloat32: a node with a float16 kernel between nodes that are cast
// runs in float too, so no Casts surround it. For a variadic input (Concat) ORT looks at the
// first input only: Concat(sigmoid, round) runs in float, Concat(round, sigmoid) in float16.
TEST(InsertCastTransformer, IsolatedFloat16NodeRunsInFloat) {
  ModelBuilder r;
  r.Input("x", {"N", "16"}, kF16).Int64Const("shape", {-1, 4, 4});
  r.Node("Sigmoid", {"x"}, {"a"});
  r.Node("Reshape", {"a", "shape"}, {"rs"});
  r.Node("Mul", {"rs", "rs"}, {"y"});
  r.Output("y", kF16);
  const std::string reshape = r.Write("sigmoid_reshape_mul_fp16.onnx");
  const KernelList lr = Build(reshape);
  EXPECT_EQ(Types(lr), (V{"Cast", "Sigmoid", "Reshape", "Mul", "Cast"}));
  ExpectOrtAgrees(reshape, lr);

  for (bool sigmoid_first : {true, false}) {
    ModelBuilder c;
    c.Input("x", {"N", "16"}, kF16);
    c.Node("Sigmoid", {"x"}, {"a"});
    c.Node("Round", {"x"}, {"rd"});
    ModelBuilder::Int(c.Node("Concat", sigmoid_first ? V{"a", "rd"} : V{"rd", "a"}, {"cat"}),
                      "axis", 1);
    c.Node("Mul", {"cat", "cat"}, {"y"});
    c.Output("y", kF16);
    const std::string path =
        c.Write(sigmoid_first ? "concat_sigmoid_first.onnx" : "concat_round_first.onnx");
    const KernelList l = Build(path);
    EXPECT_EQ(Types(l), sigmoid_first
                            ? (V{"Round", "Cast", "Cast", "Sigmoid", "Concat", "Mul", "Cast"})
                            : (V{"Cast", "Sigmoid", "Cast", "Round", "Concat", "Cast", "Mul",
                                 "Cast"}));
    ExpectOrtAgrees(path, l);
  }
}

// The model's own Casts: float → Cast(float16) → Sigmoid → Cast(float). The inserted Cast to
// float cancels the model's Cast to float16 (both removed: float → float16 → float with the
// second not writing a graph output); the inserted Cast to float16 is removed and the model's
// last Cast, which writes the graph output, stays and reads float.
TEST(InsertCastTransformer, ModelCastsCancelInsertedOnes) {
  ModelBuilder b;
  b.Input("x", {"N", "16"});
  ModelBuilder::Int(b.Node("Cast", {"x"}, {"h"}), "to", kF16);
  b.Node("Sigmoid", {"h"}, {"s"});
  ModelBuilder::Int(b.Node("Cast", {"s"}, {"y"}), "to", kF32);
  b.Output("y");
  const std::string path = b.Write("model_casts_fp16.onnx");
  const KernelList l = Build(path);
  ASSERT_EQ(Types(l), (V{"Sigmoid", "Cast"}));
  EXPECT_EQ(l.kernels[0].inputs[0].name, "x");
  EXPECT_EQ(l.kernels[1].inputs[0].dtype, DType::kFloat);
  EXPECT_EQ(l.kernels[1].outputs[0].dtype, DType::kFloat);
  ExpectOrtAgrees(path, l);
}

// One float16 op at a time, x[N,4,8,8] → op → y (opset 17 unless given): whether ORT runs it in
// float16 (no Cast) or in float (Casts around it), measured with onnxruntime-node 1.30 (linux
// x64). Compared live where it is installed: a few ops by default (one ORT session each, about
// 0.4 s), all 61 with HASE_ORT_LIVE_ALL=1.
TEST(InsertCastTransformer, OneOpAtATimeAgainstOrt) {
  const char* all_env = std::getenv("HASE_ORT_LIVE_ALL");
  const bool live_all = all_env != nullptr && std::string(all_env) == "1";
  const std::vector<std::string> live_by_default = {"Cast", "Concat", "Max", "Reshape", "Resize",
                                                    "Sigmoid", "Conv", "MatMul"};
  struct Case {
    std::string op;
    bool float16_kernel;
    std::function<void(ModelBuilder&)> build;  // adds the node(s) writing y; default op(x)
    int32_t y_type = kF16;
    int64_t opset = 17;
  };
  auto attr = [](const char* op, const char* name, int64_t v) {
    return [=](ModelBuilder& b) { ModelBuilder::Int(b.Node(op, {"x"}, {"y"}), name, v); };
  };
  auto ints = [](const char* op, const char* name, std::vector<int64_t> v) {
    return [=](ModelBuilder& b) { ModelBuilder::Ints(b.Node(op, {"x"}, {"y"}), name, v); };
  };
  auto binary = [](const char* op) {
    return [=](ModelBuilder& b) { b.Node(op, {"x", "x"}, {"y"}); };
  };
  const std::vector<Case> cases = {
      // float16 kernels (cpu_float16_kernels.h)
      {"Cast", true, attr("Cast", "to", kF32), kF32},
      {"Clip", true, nullptr},
      {"Concat", true, [](ModelBuilder& b) { ModelBuilder::Int(b.Node("Concat", {"x", "x"}, {"y"}), "axis", 1); }},
      {"Expand", true, [](ModelBuilder& b) { b.Int64Const("s", {2, 4, 8, 8}); b.Node("Expand", {"x", "s"}, {"y"}); }},
      {"Flatten", true, nullptr},
      {"Gather", true, [](ModelBuilder& b) { b.Int64Const("i", {0}); b.Node("Gather", {"x", "i"}, {"y"}); }},
      {"Identity", true, nullptr},
      {"IsNaN", true, nullptr, kBool},
      {"Max", true, binary("Max")},
      {"Min", true, binary("Min")},
      {"Reshape", true, [](ModelBuilder& b) { b.Int64Const("s", {0, -1}); b.Node("Reshape", {"x", "s"}, {"y"}); }},
      {"Round", true, nullptr},
      {"Shape", true, nullptr, kI64},
      {"Shrink", true, nullptr},
      {"Sign", true, nullptr},
      {"Slice", true, [](ModelBuilder& b) { b.Int64Const("st", {0}).Int64Const("en", {1}); b.Node("Slice", {"x", "st", "en"}, {"y"}); }},
      {"Split", true, [](ModelBuilder& b) { b.Int64Const("sp", {2, 2}); ModelBuilder::Int(b.Node("Split", {"x", "sp"}, {"y", "z"}), "axis", 1); b.Output("z", kF16); }},
      {"Transpose", true, ints("Transpose", "perm", {0, 2, 3, 1})},
      {"Unsqueeze", true, [](ModelBuilder& b) { b.Int64Const("a", {0}); b.Node("Unsqueeze", {"x", "a"}, {"y"}); }},
      // float only on x86-64
      {"Abs", false, nullptr}, {"Ceil", false, nullptr}, {"Cos", false, nullptr},
      {"Elu", false, nullptr}, {"Erf", false, nullptr}, {"Exp", false, nullptr},
      {"Floor", false, nullptr}, {"HardSigmoid", false, nullptr}, {"Log", false, nullptr},
      {"Neg", false, nullptr}, {"Reciprocal", false, nullptr}, {"Relu", false, nullptr},
      {"Selu", false, nullptr}, {"Sigmoid", false, nullptr}, {"Sin", false, nullptr},
      {"Softplus", false, nullptr}, {"Softsign", false, nullptr}, {"Sqrt", false, nullptr},
      {"Tanh", false, nullptr}, {"ThresholdedRelu", false, nullptr},
      {"Add", false, binary("Add")}, {"Sub", false, binary("Sub")}, {"Mul", false, binary("Mul")},
      {"Div", false, binary("Div")}, {"Pow", false, binary("Pow")}, {"Sum", false, binary("Sum")},
      {"Equal", false, binary("Equal"), kBool}, {"Less", false, binary("Less"), kBool},
      {"Pad", false, [](ModelBuilder& b) { b.Int64Const("p", {0, 0, 1, 1, 0, 0, 1, 1}); b.Node("Pad", {"x", "p"}, {"y"}); }},
      {"Resize", false, [](ModelBuilder& b) { b.FloatConst("sc", {4}, {1, 1, 2, 2}); b.Node("Resize", {"x", "", "sc"}, {"y"}); }},
      {"Tile", false, [](ModelBuilder& b) { b.Int64Const("r", {1, 1, 1, 2}); b.Node("Tile", {"x", "r"}, {"y"}); }},
      {"DepthToSpace", false, attr("DepthToSpace", "blocksize", 2)},
      {"ReduceMean", false, ints("ReduceMean", "axes", {-1})},
      {"ReduceMax", false, ints("ReduceMax", "axes", {-1})},
      {"ArgMax", false, attr("ArgMax", "axis", 1), kI64},
      {"Conv", false, [](ModelBuilder& b) { b.Weight("w", {4, 4, 3, 3}, false, kF16); ModelBuilder::Ints(b.Node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1}); }},
      {"MaxPool", false, ints("MaxPool", "kernel_shape", {2, 2})},
      {"AveragePool", false, ints("AveragePool", "kernel_shape", {2, 2})},
      {"GlobalAveragePool", false, nullptr},
      {"BatchNormalization", false, [](ModelBuilder& b) { for (const char* n : {"s", "o", "m", "v"}) b.Weight(n, {4}, false, kF16); b.Node("BatchNormalization", {"x", "s", "o", "m", "v"}, {"y"}); }},
      {"MatMul", false, [](ModelBuilder& b) { b.Weight("w", {8, 8}, false, kF16); b.Node("MatMul", {"x", "w"}, {"y"}); }},
      {"Dropout", false, nullptr},  // a graph output: not eliminated; float16 kernel only to opset 11
  };
  int float16_ops = 0;
  for (const Case& c : cases) {
    ModelBuilder b(c.opset);
    b.Input("x", {"N", "4", "8", "8"}, kF16);
    if (c.build) {
      c.build(b);
    } else {
      b.Node(c.op, {"x"}, {"y"});
    }
    b.Output("y", c.y_type);
    const std::string path = b.Write("one_op_fp16_" + c.op + ".onnx");
    const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
    const V types = Types(l);
    const bool cast = std::find(types.begin(), types.end(), "Cast") != types.end() && c.op != "Cast";
    EXPECT_EQ(!cast, c.float16_kernel) << c.op;
    float16_ops += c.float16_kernel;
    if (live_all || std::find(live_by_default.begin(), live_by_default.end(), c.op) !=
                        live_by_default.end()) {
      ExpectOrtAgrees(path, l);
    }
  }
  EXPECT_EQ(float16_ops, 19);
}

}  // namespace
}  // namespace hase
