// What real exported models contain (issue 12), each built as a small ONNX file here: shape
// chains (x.view(x.size(0), -1)), batch-pinning Reshapes, precision-dependent fusions, Pad into
// pooling, shape ops the CUDA EP keeps on the host. Each asserts hase's kernel list and, where
// the CPU EP can show it, onnxruntime-node's own optimised graph (skipped without
// tools/ort/node_modules; a failure under CI=true).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/test_models.h"
#include "kernels/ort_cpu_graph.h"
#include "hase/kernels/fusion_profile.h"
#include "hase/kernels/kernel_list_builder.h"
#include "testing.h"

namespace hase {
namespace {

using hase::testing::ModelBuilder;
using V = std::vector<std::string>;

using hase::testing::Build;
using hase::testing::OrtCpuTypes;
using hase::testing::Types;

// x[N,8,16,16] → Conv 3x3 (+ Relu) → c
ModelBuilder ConvRelu(int32_t dtype = 1) {
  ModelBuilder b;
  b.Input("x", {"N", "8", "16", "16"}, dtype).Weight("w", {8, 8, 3, 3}, false, dtype);
  b.Weight("b", {8}, false, dtype);
  auto* c = b.Node("Conv", {"x", "w", "b"}, {"conv"});
  ModelBuilder::Ints(c, "kernel_shape", {3, 3});
  ModelBuilder::Ints(c, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"conv"}, {"c"});
  return b;
}

// c → Shape → Gather(index) → Unsqueeze([0]) → Concat(order) → Reshape(c, ·) → y
ModelBuilder ShapeChain(int64_t index, bool gathered_first) {
  ModelBuilder b = ConvRelu();
  b.Int64Scalar("idx", index).Int64Const("axes0", {0}).Int64Const("rest", {-1});
  b.Node("Shape", {"c"}, {"s"});
  auto* g = b.Node("Gather", {"s", "idx"}, {"d"});
  ModelBuilder::Int(g, "axis", 0);
  b.Node("Unsqueeze", {"d", "axes0"}, {"u"});
  auto* cat = b.Node("Concat", gathered_first ? V{"u", "rest"} : V{"rest", "u"}, {"t"});
  ModelBuilder::Int(cat, "axis", 0);
  b.Node("Reshape", {"c", "t"}, {"y"});
  b.Output("y");
  return b;
}

// x.view(x.size(0), -1): ORT's ReshapeFusion turns the chain into Reshape(c, [0, -1]).
TEST(FrontEndCases, ViewFlattenShapeChainFoldsIntoReshape) {
  const std::string path = ShapeChain(0, /*gathered_first=*/true).Write("view_flatten.onnx");
  for (const char* profile : {"ort-cpu", "ort-cuda"}) {
    const KernelList l = Build(path, {.batch = 4, .profile = profile});
    EXPECT_EQ(Types(l), (V{"FusedConv(Relu)", "Reshape"})) << profile;
    ASSERT_EQ(l.kernels.size(), 2u);
    EXPECT_EQ(l.kernels[1].outputs[0].shape, (std::vector<int64_t>{4, 2048}));
    EXPECT_FALSE(l.kernels[1].cpu_placed);
  }
  EXPECT_EQ(Types(Build(path, {.profile = "none"})),
            (V{"Conv", "Relu", "Shape", "Gather", "Unsqueeze", "Concat", "Reshape"}));
  if (auto ort = OrtCpuTypes(path)) {
    EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort);
  }
}

// A shape chain ReshapeFusion cannot fold stays; the CUDA EP runs it on the host.
TEST(FrontEndCases, UnfoldedShapeChainIsCpuPlacedUnderOrtCuda) {
  const std::string path = ShapeChain(0, /*gathered_first=*/false).Write("shape_chain.onnx");
  const V want = {"FusedConv(Relu)", "Shape", "Gather", "Unsqueeze", "Concat", "Reshape"};
  const KernelList cuda = Build(path, {.batch = 2, .profile = "ort-cuda"});
  ASSERT_EQ(Types(cuda), want);
  std::vector<bool> placed;
  for (const auto& k : cuda.kernels) placed.push_back(k.cpu_placed);
  EXPECT_EQ(placed, (std::vector<bool>{false, true, true, true, true, false}));
  const KernelList cpu = Build(path, {.batch = 2, .profile = "ort-cpu"});
  EXPECT_EQ(Types(cpu), want);
  for (const auto& k : cpu.kernels) EXPECT_FALSE(k.cpu_placed) << k.type;
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(cpu), *ort);
}

// Reshape(x, [1, 256]) after a batch-carrying tensor: valid at batch 1 only (ORT fails at run
// time at any other batch); Reshape(x, [-1, 512]) needs an even batch.
TEST(FrontEndCases, ReshapeThatPinsTheBatch) {
  ModelBuilder b;
  b.Input("x", {"N", "256", "1", "1"}).Int64Const("shape", {1, 256});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("pinned_batch.onnx");
  const KernelList one = Build(path, {});
  EXPECT_EQ(one.batch_validity, "valid only at batch 1");
  ASSERT_FALSE(one.warnings.empty());
  EXPECT_NE(one.warnings.back().find("valid only at batch 1"), std::string::npos);
  auto at64 = BuildKernelList(path, {.batch = 64});
  ASSERT_FALSE(at64.ok());
  EXPECT_TRUE(at64.status().IsInvalidArgument());
  EXPECT_NE(at64.status().message().find("batch 64 does not fit the model: it is valid only at "
                                         "batch 1"), std::string::npos) << at64.status().ToString();
  EXPECT_NE(at64.status().ToString().find("pass --batch 1"), std::string::npos);
  auto cli = hase::testing::RunCommand(hase::testing::HaseBin() + " kernels " + path +
                                       " --batch 64");
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("pass --batch 1"), std::string::npos) << cli.err;

  ModelBuilder e;
  e.Input("x", {"N", "256"}).Int64Const("shape", {-1, 512});
  e.Node("Reshape", {"x", "shape"}, {"y"});
  e.Output("y");
  const std::string even = e.Write("even_batch.onnx");
  EXPECT_EQ(Build(even, {.batch = 4}).batch_validity,
            "valid at batch sizes that are multiples of 2");
  auto odd = BuildKernelList(even, {.batch = 3});
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().ToString().find("multiple of 2"), std::string::npos);

  // A dynamic flatten pins nothing.
  EXPECT_EQ(Build(ShapeChain(0, true).Write("free_batch.onnx"), {.batch = 7}).batch_validity,
            "valid at any batch size");
}

// ORT's CUDA conv-activation fusion is fp32-only (ConvFusionDataTypeCheck); the CPU EP of
// onnxruntime 1.30 does not fuse an fp16 x·sigmoid(x) into QuickGelu. On the CPU EP both run in
// float between Casts (InsertCastTransformer; more in insert_cast_transformer_test.cc).
TEST(FrontEndCases, PrecisionConditions) {
  ModelBuilder h = ConvRelu(/*dtype=*/10);
  h.Output("c", 10);
  const std::string fp16 = h.Write("conv_relu_fp16.onnx");
  EXPECT_EQ(Types(Build(fp16, {.profile = "ort-cuda"})), (V{"Conv", "Relu"}));
  const KernelList conv_cpu = Build(fp16, {.profile = "ort-cpu"});
  EXPECT_EQ(Types(conv_cpu), (V{"Cast", "Cast", "Cast", "Conv", "Relu", "Cast"}));
  if (auto ort = OrtCpuTypes(fp16)) EXPECT_EQ(Types(conv_cpu), *ort);
  ModelBuilder f = ConvRelu();
  f.Output("c");
  EXPECT_EQ(Types(Build(f.Write("conv_relu_fp32.onnx"), {.profile = "ort-cuda"})),
            (V{"FusedConv(Relu)"}));

  ModelBuilder s;
  s.Input("x", {"N", "16"}, 10);
  s.Node("Sigmoid", {"x"}, {"sg"});
  s.Node("Mul", {"x", "sg"}, {"y"});
  s.Output("y", 10);
  const std::string silu = s.Write("silu_fp16.onnx");
  EXPECT_EQ(Types(Build(silu, {.profile = "ort-cpu"})), (V{"Cast", "Sigmoid", "Mul", "Cast"}));
  if (auto ort = OrtCpuTypes(silu)) EXPECT_EQ(Types(Build(silu, {.profile = "ort-cpu"})), *ort);
  EXPECT_EQ(Types(Build(silu, {.profile = "ort-cuda"})), (V{"QuickGelu"}));
}

// Zero Pad → AveragePool(count_include_pad = 0) and → MaxPool: ORT fuses both (PadFusion).
// The fused AveragePool counts the padding (count_include_pad = 1: exact, no warning); MaxPool
// pads with -inf, so hase says that the results change. An AveragePool that pads by itself with
// count_include_pad = 0 is not fused (ORT refuses it).
TEST(FrontEndCases, PadIntoPoolingFusedAndFlagged) {
  for (const char* pool : {"AveragePool", "MaxPool"}) {
    ModelBuilder b;
    b.Input("x", {"N", "4", "8", "8"}).Int64Const("pads", {0, 0, 1, 1, 0, 0, 1, 1});
    b.Node("Pad", {"x", "pads"}, {"p"});
    auto* n = b.Node(pool, {"p"}, {"y"});
    ModelBuilder::Ints(n, "kernel_shape", {3, 3});
    ModelBuilder::Ints(n, "pads", {0, 0, 0, 0});
    if (std::string(pool) == "AveragePool") ModelBuilder::Int(n, "count_include_pad", 0);
    b.Output("y");
    const std::string path = b.Write(std::string("pad_") + pool + ".onnx");
    const KernelList l = Build(path, {.profile = "ort-cpu"});
    EXPECT_EQ(Types(l), (V{pool}));
    ASSERT_EQ(l.kernels.size(), 1u);
    EXPECT_EQ(l.kernels[0].attributes.at("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    bool flagged = false;
    for (const auto& w : l.warnings) flagged = flagged || w.find("PadFusion") != std::string::npos;
    EXPECT_EQ(flagged, std::string(pool) == "MaxPool") << pool;
    if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort) << pool;
  }
  ModelBuilder b;
  b.Input("x", {"N", "4", "8", "8"}).Int64Const("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  b.Node("Pad", {"x", "pads"}, {"p"});
  auto* n = b.Node("AveragePool", {"p"}, {"y"});
  ModelBuilder::Ints(n, "kernel_shape", {3, 3});
  ModelBuilder::Ints(n, "pads", {1, 1, 1, 1});
  ModelBuilder::Int(n, "count_include_pad", 0);
  b.Output("y");
  const std::string path = b.Write("pad_own_pads_avgpool.onnx");
  const KernelList l = Build(path, {.profile = "ort-cpu"});
  EXPECT_EQ(Types(l), (V{"Pad", "AveragePool"}));
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort);
}

// A transformer MLP as torch 1.13 exports it (opset 13): F.layer_norm decomposed, Linear on a
// 3-D activation (MatMul + Add), nn.GELU as Div → Erf → Add → Mul → Mul.
TEST(FrontEndCases, LayerNormAndBiasGelu) {
  ModelBuilder b;
  b.Input("x", {"N", "4", "16"});
  b.FloatConst("two", {}, {2.0f}).FloatConst("eps", {}, {1e-5f});
  b.FloatConst("scale", {16}, std::vector<float>(16, 1.0f));
  b.FloatConst("shift", {16}, std::vector<float>(16, 0.1f));
  b.Weight("w", {16, 32}).FloatConst("bias", {32}, std::vector<float>(32, 0.1f));
  b.FloatConst("sqrt2", {}, {1.4142135f}).FloatConst("one", {}, {1.0f});
  b.FloatConst("half", {}, {0.5f});
  ModelBuilder::Ints(b.Node("ReduceMean", {"x"}, {"m"}), "axes", {-1});
  b.Node("Sub", {"x", "m"}, {"d"});
  b.Node("Pow", {"d", "two"}, {"p"});
  ModelBuilder::Ints(b.Node("ReduceMean", {"p"}, {"v"}), "axes", {-1});
  b.Node("Add", {"v", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Div", {"d", "sd"}, {"n"});
  b.Node("Mul", {"n", "scale"}, {"ns"});
  b.Node("Add", {"ns", "shift"}, {"ln"});
  b.Node("MatMul", {"ln", "w"}, {"mm"});
  b.Node("Add", {"mm", "bias"}, {"h"});
  b.Node("Div", {"h", "sqrt2"}, {"hd"});
  b.Node("Erf", {"hd"}, {"e"});
  b.Node("Add", {"e", "one"}, {"e1"});
  b.Node("Mul", {"h", "e1"}, {"g"});
  b.Node("Mul", {"g", "half"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("ln_mlp.onnx");
  const V want = {"LayerNormalization", "MatMul", "BiasGelu"};
  for (const char* profile : {"ort-cpu", "ort-cuda"}) {
    const KernelList l = Build(path, {.batch = 2, .profile = profile});
    EXPECT_EQ(Types(l), want) << profile;
    ASSERT_EQ(l.kernels.size(), 3u);
    EXPECT_EQ(l.kernels[0].attributes.at("axis"), (std::vector<int64_t>{2}));
    EXPECT_EQ(l.kernels[0].source_nodes.size(), 9u);
    EXPECT_EQ(l.kernels[2].source_nodes.size(), 6u);  // bias Add + 5 GELU nodes
    EXPECT_EQ(l.kernels[2].outputs[0].shape, (std::vector<int64_t>{2, 4, 32}));
  }
  EXPECT_EQ(Build(path, {.profile = "none"}).kernels.size(), 16u);
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort);
}

// F.layer_norm over the last axis of `x` as torch 1.13 exports it (opset 13) → `y`; needs the
// constants two, eps, `scale`, `shift`.
void DecomposedLayerNorm(ModelBuilder& b, const std::string& x, const std::string& scale,
                         const std::string& shift, const std::string& y) {
  ModelBuilder::Ints(b.Node("ReduceMean", {x}, {x + "_m"}), "axes", {-1});
  b.Node("Sub", {x, x + "_m"}, {x + "_d"});
  b.Node("Pow", {x + "_d", "two"}, {x + "_p"});
  ModelBuilder::Ints(b.Node("ReduceMean", {x + "_p"}, {x + "_v"}), "axes", {-1});
  b.Node("Add", {x + "_v", "eps"}, {x + "_ve"});
  b.Node("Sqrt", {x + "_ve"}, {x + "_sd"});
  b.Node("Div", {x + "_d", x + "_sd"}, {x + "_n"});
  b.Node("Mul", {x + "_n", scale}, {x + "_ns"});
  b.Node("Add", {x + "_ns", shift}, {y});
}

// torchvision's ConvNeXt CNBlock, then a LayerNorm2d (as in its downsampling layers), exported
// at opset 13: depthwise Conv → Transpose(0,2,3,1) → LayerNorm → Linear → GELU → Linear →
// Transpose(0,3,1,2) → layer scale Mul → residual Add → Transpose → LayerNorm → Transpose.
// ORT's TransposeOptimizer pushes the block's first Transpose through ReduceMean and Sub (then
// the cost stops it: Pow's output leads to no Transpose), so the rest of that LayerNorm fuses as
// SimplifiedLayerNormalization; it pushes the second through the layer-scale Mul (whose output
// leads, via the residual Add, to the LayerNorm2d's Transpose) but not through the Add; the
// LayerNorm2d's two Transposes meet and cancel, leaving its LayerNorm channels-first, unfused.
TEST(FrontEndCases, ConvNextBlockTransposeOptimizer) {
  ModelBuilder b;
  b.Input("x", {"N", "8", "16", "16"});
  b.Weight("dw", {8, 1, 7, 7}).Weight("dwb", {8});
  b.FloatConst("two", {}, {2.0f}).FloatConst("eps", {}, {1e-6f});
  b.Weight("g1", {8}).Weight("b1", {8}).Weight("g2", {8}).Weight("b2", {8});
  b.Weight("w1", {8, 32}).Weight("bias1", {32}).Weight("w2", {32, 8}).Weight("bias2", {8});
  b.Weight("gamma", {8, 1, 1});
  b.FloatConst("sqrt2", {}, {1.4142135f}).FloatConst("one", {}, {1.0f});
  b.FloatConst("half", {}, {0.5f});
  auto* dw = b.Node("Conv", {"x", "dw", "dwb"}, {"c"});
  ModelBuilder::Ints(dw, "kernel_shape", {7, 7});
  ModelBuilder::Ints(dw, "pads", {3, 3, 3, 3});
  ModelBuilder::Int(dw, "group", 8);
  ModelBuilder::Ints(b.Node("Transpose", {"c"}, {"ct"}), "perm", {0, 2, 3, 1});
  DecomposedLayerNorm(b, "ct", "g1", "b1", "ln");
  b.Node("MatMul", {"ln", "w1"}, {"mm1"});
  b.Node("Add", {"bias1", "mm1"}, {"h"});
  b.Node("Div", {"h", "sqrt2"}, {"hd"});
  b.Node("Erf", {"hd"}, {"e"});
  b.Node("Add", {"e", "one"}, {"e1"});
  b.Node("Mul", {"h", "e1"}, {"gl"});
  b.Node("Mul", {"gl", "half"}, {"g"});
  b.Node("MatMul", {"g", "w2"}, {"mm2"});
  b.Node("Add", {"bias2", "mm2"}, {"o"});
  ModelBuilder::Ints(b.Node("Transpose", {"o"}, {"ot"}), "perm", {0, 3, 1, 2});
  b.Node("Mul", {"gamma", "ot"}, {"s"});
  b.Node("Add", {"s", "x"}, {"r"});
  ModelBuilder::Ints(b.Node("Transpose", {"r"}, {"rt"}), "perm", {0, 2, 3, 1});
  DecomposedLayerNorm(b, "rt", "g2", "b2", "ln2");
  ModelBuilder::Ints(b.Node("Transpose", {"ln2"}, {"y"}), "perm", {0, 3, 1, 2});
  b.Output("y");
  const std::string path = b.Write("convnext_block.onnx");
  const V want = {"Conv", "ReduceMean", "Sub", "Transpose", "SimplifiedLayerNormalization",
                  "Add", "MatMul", "BiasGelu", "MatMul", "Add", "Mul", "Transpose", "Add",
                  "ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add"};
  for (int64_t batch : {1, 4}) {
    const KernelList l = Build(path, {.batch = batch, .profile = "ort-cpu"});
    EXPECT_EQ(Types(l), want) << "batch " << batch;
    ASSERT_EQ(l.kernels.size(), want.size());
    // The pushed ReduceMean now reduces the channels of the Conv's NCHW output.
    EXPECT_EQ(l.kernels[1].attributes.at("axes"), (std::vector<int64_t>{1}));
    EXPECT_EQ(l.kernels[1].outputs[0].shape, (std::vector<int64_t>{batch, 1, 16, 16}));
    // The layer scale [8,1,1] is unsqueezed and transposed in place to channels-last.
    EXPECT_EQ(l.kernels[10].inputs.size(), 1u);  // gamma is a weight, not an input
    EXPECT_EQ(l.kernels[10].outputs[0].shape, (std::vector<int64_t>{batch, 16, 16, 8}));
    // The LayerNorm2d's output keeps the graph output's name and NCHW shape.
    EXPECT_EQ(l.kernels.back().outputs[0].name, "y");
    EXPECT_EQ(l.kernels.back().outputs[0].shape, (std::vector<int64_t>{batch, 8, 16, 16}));
  }
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort);
}

// TransposeOptimizer handlers besides the elementwise ones, each checked by hand and against
// ORT: a Softmax takes the permuted axis and the Transposes cancel; a ReduceSum (opset 13: axes
// input) reduces the permuted axis and its squeezed output needs no Transpose; Shape(Transpose(x))
// becomes Gather(Shape(x), perm); Unsqueeze → Transpose composes the permutations.
TEST(FrontEndCases, TransposeOptimizerHandlers) {
  struct Case {
    const char* name;
    V want;
  };
  const Case cases[] = {{"softmax", {"Softmax", "Relu"}},
                        {"reduce_sum", {"ReduceSum", "Relu"}},
                        {"shape", {"Shape", "Gather"}},
                        {"unsqueeze", {"Unsqueeze", "Transpose", "Relu"}}};
  for (const Case& c : cases) {
    ModelBuilder b;
    b.Input("x", {"N", "8", "4", "5"});
    ModelBuilder::Ints(b.Node("Transpose", {"x"}, {"t"}), "perm", {0, 2, 3, 1});
    const std::string name = c.name;
    if (name == "softmax") {
      ModelBuilder::Int(b.Node("Softmax", {"t"}, {"s"}), "axis", -1);
      ModelBuilder::Ints(b.Node("Transpose", {"s"}, {"st"}), "perm", {0, 3, 1, 2});
      b.Node("Relu", {"st"}, {"y"});
    } else if (name == "reduce_sum") {
      b.Int64Const("axes", {-1});
      ModelBuilder::Int(b.Node("ReduceSum", {"t", "axes"}, {"r"}), "keepdims", 0);
      b.Node("Relu", {"r"}, {"y"});
    } else if (name == "shape") {
      b.Node("Shape", {"t"}, {"y"});
    } else {
      b.Int64Const("axes", {4});
      b.Node("Unsqueeze", {"t", "axes"}, {"u"});
      ModelBuilder::Ints(b.Node("Transpose", {"u"}, {"ut"}), "perm", {0, 1, 3, 2, 4});
      b.Node("Relu", {"ut"}, {"y"});
    }
    b.Output("y", name == "shape" ? 7 : 1);
    const std::string path = b.Write("transpose_" + name + ".onnx");
    const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
    EXPECT_EQ(Types(l), c.want) << name;
    if (name == "softmax" && l.kernels.size() == 2) {
      EXPECT_EQ(l.kernels[0].attributes.at("axis"), (std::vector<int64_t>{1}));
      EXPECT_EQ(l.kernels[1].outputs[0].shape, (std::vector<int64_t>{2, 8, 4, 5}));
    }
    if (name == "reduce_sum" && l.kernels.size() == 2) {
      EXPECT_EQ(l.kernels[1].outputs[0].shape, (std::vector<int64_t>{2, 4, 5}));
    }
    if (auto ort = OrtCpuTypes(path)) {
      EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort) << name;
    }
  }
}

// A Cast to the type its input already has is removed (torch writes them around `h // p` in shape
// arithmetic); a Cast to another type stays, and so does one writing a graph output.
TEST(FrontEndCases, CastElimination) {
  ModelBuilder b;
  b.Input("x", {"N", "4"});
  ModelBuilder::Int(b.Node("Cast", {"x"}, {"xf"}), "to", 1);   // float → float: removed
  b.Node("Relu", {"xf"}, {"r"});
  ModelBuilder::Int(b.Node("Cast", {"r"}, {"y"}), "to", 7);    // float → int64: kept
  ModelBuilder::Int(b.Node("Cast", {"x"}, {"z"}), "to", 1);    // writes a graph output: kept
  b.Output("y", 7).Output("z");
  const std::string path = b.Write("cast_elimination.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  std::vector<std::string> types = Types(l);
  std::sort(types.begin(), types.end());
  EXPECT_EQ(types, (V{"Cast", "Cast", "Relu"}));
  for (const auto& k : l.kernels) {
    if (k.type == "Relu") EXPECT_EQ(k.inputs[0].name, "x");
  }
  EXPECT_EQ(Build(path, {.profile = "none"}).kernels.size(), 4u);
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort);
}

// ConstantOfShape(shape) filled with the float `value`, stored as raw_data as torch writes it.
void ConstantOfShape(ModelBuilder& b, const std::string& shape, const std::string& out,
                     float value) {
  onnx::AttributeProto* a = b.Node("ConstantOfShape", {shape}, {out})->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->set_raw_data(std::string(reinterpret_cast<const char*>(&value), sizeof value));
}

// torch.onnx writes one shape chain per use of x.shape, each with its own Constant indices:
// ConstantSharing makes the equal small initializers one, CommonSubexpressionElimination then
// keeps one Shape → Gather → Unsqueeze → Concat. Not merged: a node writing a graph output (the
// second Reshape), a ConstantOfShape with another fill value, non-deterministic ops.
TEST(FrontEndCases, CommonSubexpressionElimination) {
  ModelBuilder b;
  b.Input("x", {"N", "8", "4"});
  for (const std::string k : {"a", "b"}) {  // two copies of every constant and of the chain
    b.Int64Scalar("idx_" + k, 0).Int64Const("axes_" + k, {0}).Int64Const("rest_" + k, {-1});
    b.Node("Shape", {"x"}, {"s_" + k});
    ModelBuilder::Int(b.Node("Gather", {"s_" + k, "idx_" + k}, {"g_" + k}), "axis", 0);
    b.Node("Unsqueeze", {"g_" + k, "axes_" + k}, {"u_" + k});
    ModelBuilder::Int(b.Node("Concat", {"rest_" + k, "u_" + k}, {"t_" + k}), "axis", 0);
    b.Node("Reshape", {"x", "t_" + k}, {"y_" + k});  // [32, N]; both graph outputs
    ConstantOfShape(b, "u_" + k, "c_" + k, 1.0f);     // [N] of ones
    b.Node("RandomUniformLike", {"x"}, {"r_" + k});
  }
  ConstantOfShape(b, "u_a", "c_two", 2.0f);
  b.Node("Add", {"c_a", "c_b"}, {"cc"});
  b.Node("Mul", {"cc", "c_two"}, {"z"});
  b.Node("Add", {"r_a", "r_b"}, {"w"});
  b.Output("y_a").Output("y_b").Output("z").Output("w");
  const std::string path = b.Write("common_subexpression.onnx");

  auto sorted = [](V v) { std::sort(v.begin(), v.end()); return v; };
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  EXPECT_EQ(sorted(Types(l)),
            (V{"Add", "Add", "Concat", "ConstantOfShape", "ConstantOfShape", "Gather", "Mul",
               "RandomUniformLike", "RandomUniformLike", "Reshape", "Reshape", "Shape",
               "Unsqueeze"}));
  // The chain kept is the one first in ORT's topological order (chain b: the reverse DFS from
  // the leaves reaches the higher node index first): both Reshapes and the Add read its values.
  std::vector<std::string> reshape_shapes, add_inputs;
  for (const auto& k : l.kernels) {
    if (k.type == "Reshape") reshape_shapes.push_back(k.inputs[1].name);
    if (k.type == "Add") {  // a kernel lists an input read twice once
      std::string in;
      for (const auto& t : k.inputs) in += (in.empty() ? "" : "+") + t.name;
      add_inputs.push_back(in);
    }
  }
  EXPECT_EQ(reshape_shapes, (V{"t_b", "t_b"}));
  EXPECT_EQ(sorted(add_inputs), (V{"c_b", "r_a+r_b"}));
  // Without ConstantSharing only the Shapes share inputs (x); idx_a and idx_b stay apart, and
  // so does everything computed from them.
  EXPECT_EQ(Build(path, {.batch = 2, .profile = "ort-cpu",
                         .disabled_rules = {"ConstantSharing"}}).kernels.size(), 17u);
  EXPECT_EQ(Build(path, {.batch = 2, .profile = "ort-cpu",
                         .disabled_rules = {"CommonSubexpressionElimination"}}).kernels.size(), 18u);
  EXPECT_EQ(Build(path, {.profile = "none"}).kernels.size(), 18u);
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort);
}

// ConstantSharing's bounds: equal 8-element constants become one (their Adds then merge), equal
// 9-element ones stay apart; Shapes with different `start` attributes are different values.
TEST(FrontEndCases, ConstantSharingLimitAndAttributes) {
  ModelBuilder b(15);
  b.Input("x8", {"N", "8"}).Input("x9", {"N", "9"});
  for (int n : {8, 9}) {
    const std::string s = std::to_string(n);
    const std::vector<float> v(n, 0.5f);
    b.FloatConst("k" + s + "a", {n}, v).FloatConst("k" + s + "b", {n}, v);
    b.Node("Add", {"x" + s, "k" + s + "a"}, {"a" + s});
    b.Node("Add", {"x" + s, "k" + s + "b"}, {"b" + s});
    b.Node("Add", {"a" + s, "b" + s}, {"y" + s});
  }
  b.Node("Shape", {"x9"}, {"s_all"});
  ModelBuilder::Int(b.Node("Shape", {"x9"}, {"s_tail"}), "start", 1);
  ModelBuilder::Int(b.Node("Concat", {"s_all", "s_tail"}, {"dims"}), "axis", 0);
  b.Output("y8").Output("y9").Output("dims", 7);
  const std::string path = b.Write("constant_sharing_limit.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  std::vector<std::string> types = Types(l);
  std::sort(types.begin(), types.end());
  EXPECT_EQ(types, (V{"Add", "Add", "Add", "Add", "Add", "Concat", "Shape", "Shape"}));
  for (const auto& k : l.kernels) {
    if (k.outputs[0].name == "y8") EXPECT_EQ(k.inputs.size(), 1u);  // Add(a8, a8)
    if (k.outputs[0].name == "y9") EXPECT_EQ(k.inputs.size(), 2u);
  }
  EXPECT_EQ(Build(path, {.profile = "none"}).kernels.size(), 9u);
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort);
}

// RMSNorm as exported (x / sqrt(mean(x²) + eps) · scale) → SimplifiedLayerNormalization; not
// when the mean is over a non-last axis, nor when Pow's input is not Div's.
TEST(FrontEndCases, SimplifiedLayerNormFusion) {
  for (int variant = 0; variant < 3; ++variant) {
    ModelBuilder b;
    b.Input("x", {"N", "4", "16"});
    b.FloatConst("two", {}, {2.0f}).FloatConst("eps", {}, {1e-6f});
    b.Weight("scale", {16});
    b.Node("Pow", {"x", "two"}, {"p"});
    ModelBuilder::Ints(b.Node("ReduceMean", {"p"}, {"v"}), "axes", {variant == 1 ? 1 : -1});
    b.Node("Add", {"v", "eps"}, {"ve"});
    b.Node("Sqrt", {"ve"}, {"sd"});
    if (variant == 2) {
      b.Node("Relu", {"x"}, {"xr"});
      b.Node("Div", {"xr", "sd"}, {"n"});
    } else {
      b.Node("Div", {"x", "sd"}, {"n"});
    }
    b.Node("Mul", {"n", "scale"}, {"y"});
    b.Output("y");
    const std::string path = b.Write("rms_norm_" + std::to_string(variant) + ".onnx");
    const V fused = {"SimplifiedLayerNormalization"};
    const V plain = {"Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul"};
    const V relu_plain = {"Relu", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul"};
    for (const char* profile : {"ort-cpu", "ort-cuda"}) {
      const KernelList l = Build(path, {.batch = 2, .profile = profile});
      EXPECT_EQ(Types(l), variant == 0 ? fused : variant == 1 ? plain : relu_plain)
          << variant << " " << profile;
      if (variant == 0) {
        EXPECT_EQ(l.kernels[0].source_nodes.size(), 6u);
        EXPECT_EQ(l.kernels[0].outputs[0].shape, (std::vector<int64_t>{2, 4, 16}));
      }
    }
    if (auto ort = OrtCpuTypes(path)) {
      EXPECT_EQ(Types(Build(path, {.profile = "ort-cpu"})), *ort) << variant;
    }
  }
}

// ViT-B/16's patch embedding: x.reshape(n, 768, h/16 · w/16) reads n from the model input's
// Shape, not the Conv output's, and computes h/16 · w/16 from shapes. ORT (1.30) gives 0 for a
// dim whose symbolic name matches the Reshape input's ("N" = "N") and -1 for the one-element
// product: Reshape(conv, [0, 8, -1]), the shape subgraph gone. A dim named otherwise stays.
TEST(FrontEndCases, ReshapeFusionMatchesSymbolicDimsAndComputedElements) {
  for (const char* other : {"N", "M"}) {
    ModelBuilder b;
    b.Input("x", {"N", "3", "16", "16"}).Weight("w", {8, 3, 4, 4});
    b.Input("z", {other, "5"});
    b.Int64Scalar("i0", 0).Int64Scalar("i2", 2).Int64Scalar("i3", 3).Int64Scalar("p", 4);
    b.Int64Const("axes0", {0}).Int64Const("hid", {8});
    auto* c = b.Node("Conv", {"x", "w"}, {"cv"});
    ModelBuilder::Ints(c, "kernel_shape", {4, 4});
    ModelBuilder::Ints(c, "strides", {4, 4});
    b.Node("Shape", {"z"}, {"sz"});
    b.Node("Shape", {"x"}, {"sx"});
    ModelBuilder::Int(b.Node("Gather", {"sz", "i0"}, {"n"}), "axis", 0);
    ModelBuilder::Int(b.Node("Gather", {"sx", "i2"}, {"h"}), "axis", 0);
    ModelBuilder::Int(b.Node("Gather", {"sx", "i3"}, {"w_"}), "axis", 0);
    b.Node("Div", {"h", "p"}, {"hp"});
    b.Node("Div", {"w_", "p"}, {"wp"});
    b.Node("Mul", {"hp", "wp"}, {"hw"});
    b.Node("Unsqueeze", {"n", "axes0"}, {"un"});
    b.Node("Unsqueeze", {"hw", "axes0"}, {"uhw"});
    ModelBuilder::Int(b.Node("Concat", {"un", "hid", "uhw"}, {"t"}), "axis", 0);
    b.Node("Reshape", {"cv", "t"}, {"y"});
    b.Output("y");
    const std::string path = b.Write(std::string("vit_patch_reshape_") + other + ".onnx");
    const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
    if (std::string(other) == "N") {
      EXPECT_EQ(Types(l), (V{"Conv", "Reshape"}));
      ASSERT_EQ(l.kernels.size(), 2u);
      EXPECT_EQ(l.kernels[1].outputs[0].shape, (std::vector<int64_t>{2, 8, 16}));
    } else {
      // n is not the Reshape input's dim 0: it is one element too, and two -1s are refused.
      EXPECT_EQ(l.kernels.size(), 13u);
    }
    if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort) << other;
  }
}

// A Shape whose input dims ORT knows is folded, and what follows from constants with it (Swin-T's
// window-padding arithmetic: a Concat of computed scalars has a static shape [2]); x + 0 and
// x · 1 are removed (NoopElimination); Where(Not(c), a, b) becomes Where(c, b, a).
TEST(FrontEndCases, StaticShapeFoldingNoopAndNotWhere) {
  ModelBuilder b;
  b.Input("x", {"N", "4", "6"});
  b.Int64Scalar("i2", 2).Int64Const("axes0", {0}).Int64Const("zero1", {0});
  b.FloatConst("one", {1}, {1.0f}).FloatConst("fzero", {}, {0.0f});
  b.Node("Shape", {"x"}, {"sx"});
  ModelBuilder::Int(b.Node("Gather", {"sx", "i2"}, {"d"}), "axis", 0);
  b.Node("Unsqueeze", {"d", "axes0"}, {"u"});
  ModelBuilder::Int(b.Node("Concat", {"u", "zero1"}, {"cc"}), "axis", 0);
  b.Node("Shape", {"cc"}, {"s2"});                // [2]: folded
  b.Node("ConstantOfShape", {"s2"}, {"zf"});      // folded with it
  ModelBuilder::Int(b.Node("Cast", {"zf"}, {"zeros"}), "to", 7);  // and this
  b.Node("Add", {"cc", "zeros"}, {"pads"});
  b.Output("pads", 7);
  b.Node("Mul", {"x", "one"}, {"x0"});             // x · 1 of a graph input: kept
  b.Node("Relu", {"x0"}, {"xr"});
  b.Node("Mul", {"xr", "one"}, {"x1"});            // x · 1: removed
  b.Node("Add", {"x1", "fzero"}, {"x2"});          // + 0: removed
  b.Node("Greater", {"x2", "fzero"}, {"pos"});
  b.Node("Not", {"pos"}, {"neg"});
  b.Node("Neg", {"x2"}, {"nx"});
  b.Node("Where", {"neg", "x2", "nx"}, {"y"});     // Where(pos, nx, x2)
  b.Output("y");
  const std::string path = b.Write("static_shape_noop_not_where.onnx");
  const KernelList l = Build(path, {.batch = 3, .profile = "ort-cpu"});
  EXPECT_EQ(Types(l), (V{"Mul", "Relu", "Neg", "Greater", "Where", "Shape", "Gather", "Unsqueeze",
                         "Concat", "Add"}));
  EXPECT_EQ(Types(Build(path, {.batch = 3, .profile = "none"})).size(), 16u);
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort);
}

// Swin-T's k = qkv[1].transpose(-2, -1): Transpose → Gather(scalar) → Transpose becomes Gather
// (on the untransposed axis) → one Transpose (onnxruntime-node 1.30's Gather handler); q = qkv[0]
// followed by a Mul keeps its Transpose → Gather when ORT knows no rank for the Gather output.
TEST(FrontEndCases, TransposeOptimizerPushesThroughScalarGather) {
  ModelBuilder b;
  b.Input("x", {"N", "49", "3", "3", "32"});
  b.Int64Scalar("i1", 1);
  ModelBuilder::Ints(b.Node("Transpose", {"x"}, {"t"}), "perm", {2, 0, 3, 1, 4});
  ModelBuilder::Int(b.Node("Gather", {"t", "i1"}, {"k"}), "axis", 0);
  ModelBuilder::Ints(b.Node("Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
  b.Output("kt");
  const std::string path = b.Write("transpose_gather.onnx");
  const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
  EXPECT_EQ(Types(l), (V{"Gather", "Transpose"}));
  ASSERT_EQ(l.kernels.size(), 2u);
  EXPECT_EQ(l.kernels[0].attributes.at("axis"), (std::vector<int64_t>{2}));
  EXPECT_EQ(l.kernels[1].outputs[0].shape, (std::vector<int64_t>{2, 3, 32, 49}));
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort);
}

TEST(FrontEndCases, KernelsJsonNamesTheOrtRelease) {
  ModelBuilder f = ConvRelu();
  f.Output("c");
  const std::string path = f.Write("release.onnx");
  EXPECT_EQ(Build(path, {.profile = "ort-cpu"}).ort_release,
            "onnxruntime-node 1.30.0 (CPU EP, level extended)");
  EXPECT_EQ(Build(path, {.profile = "ort-cuda"}).ort_release, "onnxruntime 1.17.3 (CUDA EP)");
  EXPECT_EQ(Build(path, {.profile = "none"}).ort_release, "");
  auto r = hase::testing::RunCommand(hase::testing::HaseBin() + " kernels " + path +
                                     " --format json --profile ort-cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ort_release"), "onnxruntime-node 1.30.0 (CPU EP, level extended)");
  EXPECT_EQ(j.at("batch_validity"), "valid at any batch size");
  EXPECT_EQ(j.at("kernels").at(0).at("cpu_placed"), false);
  auto cuda = hase::testing::RunCommand(hase::testing::HaseBin() + " kernels " + path +
                                        " --format json --profile ort-cuda");
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_EQ(nlohmann::json::parse(cuda.out).at("ort_release"), "onnxruntime 1.17.3 (CUDA EP)");
}

// The release names in the JSON are the ones the docs and the reference install state: the
// ort-cpu name carries tools/ort/package.json's onnxruntime-node version, and
// docs/kernels-json.md quotes both names verbatim.
TEST(FrontEndCases, OrtReleaseNamesAgreeWithDocsAndReference) {
  const std::string root = hase::testing::SourceDir();
  std::ifstream pkg(root + "/tools/ort/package.json");
  ASSERT_TRUE(pkg) << "tools/ort/package.json missing";
  const std::string node_version =
      nlohmann::json::parse(pkg).at("dependencies").at("onnxruntime-node").get<std::string>();
  EXPECT_EQ(kernels::FusionProfileOrtRelease("ort-cpu"),
            "onnxruntime-node " + node_version + " (CPU EP, level extended)");
  std::ifstream md(root + "/docs/kernels-json.md");
  ASSERT_TRUE(md) << "docs/kernels-json.md missing";
  const std::string doc((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  for (const char* profile : {"ort-cuda", "ort-cpu"}) {
    const std::string name = kernels::FusionProfileOrtRelease(profile);
    EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << profile << ": " << name;
  }
}

}  // namespace
}  // namespace hase
