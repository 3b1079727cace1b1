// What ONNX Runtime 1.30 knows of shapes while it optimises a file with an open batch, and the
// fusions that depend on it (issue 24): Reshape-14 reads propagated targets (data propagation
// and the target's length), Reshape-13 does not; Slice-13 keeps its rank with computed ends;
// attention's MatMul + K-Transpose + 1/sqrt(d) become FusedMatMul once ranks are known;
// Not → Where fuses at opset 17. Each case is a small model built here; hase's ort-cpu kernels
// are asserted, and compared with onnxruntime-node's own optimised graph where it is installed
// (skipped without tools/ort/node_modules; a failure under CI=true).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/test_models.h"
#include "kernels/ort_cpu_graph.h"
#include "hase/kernels/kernel_list_builder.h"

namespace hase {
namespace {

using hase::testing::Build;
using hase::testing::ModelBuilder;
using hase::testing::OrtCpuTypes;
using hase::testing::Types;
using V = std::vector<std::string>;

// y = GELU(r · W + b) with the erf formula torch exports; r is [.., 8].
void LinearGelu(ModelBuilder& b, const std::string& r) {
  b.Weight("w", {8, 16}).FloatConst("bias", {16}, std::vector<float>(16, 0.1f));
  b.FloatConst("sqrt2", {}, {1.4142135f}).FloatConst("onef", {}, {1.0f});
  b.FloatConst("half", {}, {0.5f});
  b.Node("MatMul", {r, "w"}, {"lg_mm"});
  b.Node("Add", {"lg_mm", "bias"}, {"lg_h"});
  b.Node("Div", {"lg_h", "sqrt2"}, {"lg_hd"});
  b.Node("Erf", {"lg_hd"}, {"lg_e"});
  b.Node("Add", {"lg_e", "onef"}, {"lg_e1"});
  b.Node("Mul", {"lg_h", "lg_e1"}, {"lg_g"});
  b.Node("Mul", {"lg_g", "half"}, {"y"});
  b.Output("y");
}

// x[N,6,8] → Reshape(x, target) → Linear → GELU, the target computed from shapes:
// "slice": Concat(Slice(Shape(x), 0, 1), [6], [-1]) = [N, 6, -1], known to data propagation
//          only (N symbolic);
// "range": Concat(Shape(Range(0, N, 1)), [6], [-1]): values unknown, length 3 known.
std::string ComputedReshape(int64_t opset, const std::string& kind) {
  ModelBuilder b(opset);
  b.Input("x", {"N", "6", "8"});
  b.Int64Const("z", {0}).Int64Const("e1", {1}).Int64Const("six", {6}).Int64Const("m1", {-1});
  b.Int64Scalar("s0", 0).Int64Scalar("s1", 1);
  b.Node("Shape", {"x"}, {"s"});
  if (kind == "slice") {
    b.Node("Slice", {"s", "z", "e1"}, {"n"});
  } else {
    ModelBuilder::Int(b.Node("Gather", {"s", "s0"}, {"g"}), "axis", 0);
    b.Node("Range", {"s0", "g", "s1"}, {"rg"});
    b.Node("Shape", {"rg"}, {"n"});
  }
  ModelBuilder::Int(b.Node("Concat", {"n", "six", "m1"}, {"t"}), "axis", 0);
  b.Node("Reshape", {"x", "t"}, {"r"});
  LinearGelu(b, "r");
  return b.Write("reshape_" + kind + "_o" + std::to_string(opset) + ".onnx");
}

// ORT knows the Reshape's rank at opset 17 (Reshape-14 reads the propagated target or its
// length), so MatMul's output has a last dim and the bias Add joins the Gelu; Reshape-13's
// inference reads constant targets only, so at opset 13 the Add stays.
TEST(OrtShapeKnowledge, ReshapeRankFromComputedTargetAtOpset14Only) {
  for (const char* kind : {"slice", "range"}) {
    for (int64_t opset : {13, 17}) {
      const std::string path = ComputedReshape(opset, kind);
      const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
      const V got = Types(l);
      ASSERT_GE(got.size(), 2u) << kind << " " << opset;
      const V tail(got.end() - (opset >= 14 ? 2 : 3), got.end());
      EXPECT_EQ(tail, opset >= 14 ? (V{"MatMul", "BiasGelu"}) : (V{"MatMul", "Add", "Gelu"}))
          << kind << " opset " << opset;
      EXPECT_EQ(l.kernels.back().outputs[0].shape, (std::vector<int64_t>{2, 6, 16}));
      if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(got, *ort) << kind << " opset " << opset;
    }
  }
}

// Slice-13 with computed ends keeps its rank in ORT (whatever the opset), so the Linear after it
// fuses its bias into the Gelu. ONNX 1.12 alone gives that Slice no rank.
TEST(OrtShapeKnowledge, SliceWithComputedEndsKeepsRank) {
  for (int64_t opset : {13, 17}) {
    ModelBuilder b(opset);
    b.Input("x", {"N", "6", "8"});
    b.Int64Const("z", {0}).Int64Const("ax1", {1}).Int64Scalar("s0", 0).Int64Scalar("s1", 1);
    b.Node("Shape", {"x"}, {"s"});
    ModelBuilder::Int(b.Node("Gather", {"s", "s0"}, {"g"}), "axis", 0);
    b.Node("Range", {"s0", "g", "s1"}, {"rg"});
    b.Node("Shape", {"rg"}, {"end"});  // [N]: a value ORT does not know
    b.Node("Slice", {"x", "z", "end", "ax1"}, {"r"});
    LinearGelu(b, "r");
    const std::string path = b.Write("slice_computed_o" + std::to_string(opset) + ".onnx");
    const V got = Types(Build(path, {.batch = 2, .profile = "ort-cpu"}));
    EXPECT_EQ(got, (V{"Shape", "Gather", "Range", "Shape", "Slice", "MatMul", "BiasGelu"}))
        << opset;
    if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(got, *ort) << opset;
  }
}

// Scaled dot-product attention as torchvision's ViT exports it at opset 17, operands of known
// (here static) shapes: scores = (q / sqrt(8)) · Transpose(k, 0,1,3,2); out = softmax(scores) ·
// Transpose(v', 1,2,0,3) with v' stored [S, N, H, D]. MatMulScaleFusion folds the Div into alpha
// and MatmulTransposeFusion both Transposes (transB; transBatchB), as ORT 1.30 does.
TEST(OrtShapeKnowledge, AttentionMatMulsBecomeFusedMatMul) {
  ModelBuilder b(17);
  b.Input("q", {"2", "2", "5", "8"}).Input("k", {"2", "2", "5", "8"});
  b.Input("v", {"5", "2", "2", "8"});
  b.FloatConst("sqrt_d", {}, {2.828427f});
  ModelBuilder::Ints(b.Node("Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
  b.Node("Div", {"q", "sqrt_d"}, {"qs"});
  b.Node("MatMul", {"qs", "kt"}, {"scores"});
  ModelBuilder::Int(b.Node("Softmax", {"scores"}, {"p"}), "axis", -1);
  ModelBuilder::Ints(b.Node("Transpose", {"v"}, {"vt"}), "perm", {1, 2, 0, 3});
  b.Node("MatMul", {"p", "vt"}, {"o"});
  b.Output("o");
  const std::string path = b.Write("attention_o17.onnx");
  const KernelList l = Build(path, {.profile = "ort-cpu"});
  ASSERT_EQ(Types(l), (V{"FusedMatMul", "Softmax", "FusedMatMul"}));
  EXPECT_EQ(l.kernels[0].attributes.at("transB"), (std::vector<int64_t>{1}));
  EXPECT_EQ(l.kernels[0].attributes.at("transBatchB"), (std::vector<int64_t>{0}));
  EXPECT_EQ(l.kernels[2].attributes.at("transB"), (std::vector<int64_t>{0}));
  EXPECT_EQ(l.kernels[2].attributes.at("transBatchB"), (std::vector<int64_t>{1}));
  // scores [2,2,5,5] = 100 elements × K 8; out [2,2,5,8] = 160 elements × K 5.
  EXPECT_EQ(l.kernels[0].macs, 800);
  EXPECT_EQ(l.kernels[2].macs, 800);
  EXPECT_EQ(l.kernels[0].source_nodes.size(), 3u);  // MatMul, Transpose, Div
  if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort);
  // Without the ort-cpu profile nothing fuses.
  EXPECT_EQ(Types(Build(path, {.profile = "none"})),
            (V{"Transpose", "Div", "Transpose", "MatMul", "Softmax", "MatMul"}));
}

// boxes[:, 0], boxes[:, 1:2] (index [1]) and boxes[:, 2:4] of one tensor become one Split along
// the axis, with a Squeeze after the scalar-index piece (GatherSliceToSplitFusion; torchvision's
// box coders). Opset 13 and 17 alike.
TEST(OrtShapeKnowledge, GathersAndSlicesOfOneAxisBecomeSplit) {
  for (int64_t opset : {13, 17}) {
    ModelBuilder b(opset);
    b.Input("x", {"N", "4", "6"});
    b.Int64Scalar("i0", 0).Int64Const("i1", {1});
    b.Int64Const("s2", {2}).Int64Const("e4", {4}).Int64Const("ax1", {1});
    b.Node("Relu", {"x"}, {"r"});
    ModelBuilder::Int(b.Node("Gather", {"r", "i0"}, {"a"}), "axis", 1);
    ModelBuilder::Int(b.Node("Gather", {"r", "i1"}, {"b"}), "axis", 1);
    b.Node("Slice", {"r", "s2", "e4", "ax1"}, {"c"});
    b.Output("a").Output("b").Output("c");
    const std::string path = b.Write("gather_slice_split_o" + std::to_string(opset) + ".onnx");
    const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
    ASSERT_EQ(Types(l), (V{"Relu", "Split", "Squeeze"})) << opset;
    EXPECT_EQ(l.kernels[1].outputs.size(), 3u);
    EXPECT_EQ(l.kernels[1].outputs[2].shape, (std::vector<int64_t>{2, 2, 6}));
    EXPECT_EQ(l.kernels[2].outputs[0].shape, (std::vector<int64_t>{2, 6}));
    if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort) << opset;
  }
}

// Where(Not(c), a, b) → Where(c, b, a) at opset 15, 16 and 17 alike (Where-16 included).
TEST(OrtShapeKnowledge, NotWhereFusesAtOpset16And17) {
  for (int64_t opset : {15, 16, 17}) {
    ModelBuilder b(opset);
    b.Input("c", {"N", "4"}, 9).Input("a", {"N", "4"}).Input("x", {"N", "4"});
    b.Node("Not", {"c"}, {"nc"});
    b.Node("Where", {"nc", "a", "x"}, {"y"});
    b.Output("y");
    const std::string path = b.Write("not_where_o" + std::to_string(opset) + ".onnx");
    const KernelList l = Build(path, {.batch = 2, .profile = "ort-cpu"});
    ASSERT_EQ(Types(l), (V{"Where"})) << opset;
    EXPECT_EQ(l.kernels[0].inputs[1].name, "x") << opset;  // operands swapped
    if (auto ort = OrtCpuTypes(path)) EXPECT_EQ(Types(l), *ort) << opset;
  }
}

}  // namespace
}  // namespace hase
