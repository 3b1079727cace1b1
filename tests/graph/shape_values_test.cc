// ResolveShapeComputedDims: shape arithmetic evaluated once dims are bound.
#include "hase/graph/shape_values.h"

#include <gtest/gtest.h>
#include <onnx/shape_inference/implementation.h>

#include "graph/test_models.h"
#include "hase/graph/onnx_loader.h"

namespace hase::graph {
namespace {

using hase::testing::ModelBuilder;

std::vector<int64_t> Dims(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& vi : m.graph().value_info()) {
    if (vi.name() != name) continue;
    std::vector<int64_t> d;
    for (const auto& x : vi.type().tensor_type().shape().dim()) {
      d.push_back(x.has_dim_value() ? x.dim_value() : -1);
    }
    return d;
  }
  return {};
}

// Two dependent computed Reshapes, as in every attention block: r1 = x.view(n, -1), then
// r2 = r1.view(-1, r1.size(1)) whose target reads the Shape of r1 — a shape ONNX inference
// cannot know until r1 is resolved. Both resolve in one call (one inference round): the Shape of
// r1 is evaluated from r1's dims resolved earlier in the same pass.
TEST(ShapeValues, DependentReshapesResolveInOnePass) {
  ModelBuilder b;
  b.Input("x", {"N", "4", "6"});
  b.Int64Scalar("i0", 0).Int64Scalar("i1", 1).Int64Const("axes0", {0}).Int64Const("m1", {-1});
  b.Node("Shape", {"x"}, {"s"});
  ModelBuilder::Int(b.Node("Gather", {"s", "i0"}, {"n"}), "axis", 0);
  b.Node("Unsqueeze", {"n", "axes0"}, {"nu"});
  ModelBuilder::Int(b.Node("Concat", {"nu", "m1"}, {"t1"}), "axis", 0);
  b.Node("Reshape", {"x", "t1"}, {"r1"});
  b.Node("Shape", {"r1"}, {"s1"});
  ModelBuilder::Int(b.Node("Gather", {"s1", "i1"}, {"c"}), "axis", 0);
  b.Node("Unsqueeze", {"c", "axes0"}, {"cu"});
  ModelBuilder::Int(b.Node("Concat", {"m1", "cu"}, {"t2"}), "axis", 0);
  b.Node("Reshape", {"r1", "t2"}, {"r2"});
  b.Node("Relu", {"r2"}, {"y"});
  b.Output("y");
  onnx::ModelProto m = b.model();
  auto* d0 = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
                 ->mutable_shape()->mutable_dim(0);
  d0->clear_dim_param();
  d0->set_dim_value(2);
  onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/1,
                                   /*enable_data_propagation=*/true);
  onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  EXPECT_TRUE(Dims(m, "r2").empty() || Dims(m, "r2")[0] < 0);  // ONNX alone leaves it open
  EXPECT_EQ(ResolveShapeComputedDims(&m), 3);  // r1, r2 and the Relu after it (carried on)
  EXPECT_EQ(Dims(m, "r1"), (std::vector<int64_t>{2, 24}));
  EXPECT_EQ(Dims(m, "r2"), (std::vector<int64_t>{2, 24}));
  EXPECT_EQ(ResolveShapeComputedDims(&m), 0);  // idempotent
}

// Swin-T's window padding as torch.onnx writes F.pad with a computed amount: the pads list is
// reordered through Reshape(-1, 2) → Slice(step -1) → Transpose → Reshape(-1) before Pad; and a
// Range whose limit is a dim. Both need values hase evaluates (N-D Slice with a negative step,
// Transpose of values, Range) for the Pad's and the Range's outputs to get dims.
TEST(ShapeValues, ComputedPadAndRangeResolve) {
  ModelBuilder b;
  b.Input("x", {"N", "4", "6"});
  b.Int64Scalar("i1", 1).Int64Scalar("i2", 2).Int64Scalar("four", 4).Int64Scalar("zero", 0);
  b.Int64Scalar("one", 1);
  b.Int64Const("axes0", {0}).Int64Const("z1", {0}).Int64Const("z2", {0, 0}).Int64Const("zz", {0, 0});
  b.Int64Const("m12", {-1, 2}).Int64Const("m1", {-1}).Int64Const("st", {-1});
  b.Int64Const("en", {-9223372036854775807LL}).Int64Const("stp", {-1});
  b.Node("Shape", {"x"}, {"s"});
  ModelBuilder::Int(b.Node("Gather", {"s", "i2"}, {"w"}), "axis", 0);
  b.Node("Sub", {"w", "four"}, {"p"});  // 6 - 4 = 2
  b.Node("Unsqueeze", {"p", "axes0"}, {"pu"});
  ModelBuilder::Int(b.Node("Concat", {"z1", "pu", "z2", "zz"}, {"full"}), "axis", 0);  // 0 2 0 0 0 0
  b.Node("Reshape", {"full", "m12"}, {"pairs"});
  b.Node("Slice", {"pairs", "st", "en", "axes0", "stp"}, {"rev"});
  ModelBuilder::Ints(b.Node("Transpose", {"rev"}, {"tr"}), "perm", {1, 0});
  b.Node("Reshape", {"tr", "m1"}, {"pads"});
  b.Node("Pad", {"x", "pads"}, {"y"});
  ModelBuilder::Int(b.Node("Gather", {"s", "i1"}, {"h"}), "axis", 0);
  b.Node("Range", {"zero", "h", "one"}, {"idx"});
  b.Output("y").Output("idx", 7);
  const std::string path = b.Write("computed_pad_range.onnx");
  auto l = LoadOnnxGraph(path, {.batch = 2});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  // pads = [0, 0, 0, 0, 0, 2]: the last dim grows by 2 at its end.
  EXPECT_EQ(l->graph.FindValue("y")->shape, (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(l->graph.FindValue("idx")->shape, (std::vector<int64_t>{4}));
}

// torchvision's DeepLabV3 / LR-ASPP heads at opset 13: F.interpolate(y, size=x.shape[-2:]) is a
// Resize whose `sizes` is Concat(Slice(Shape(y), 0, 2), Cast(Concat(Unsqueeze(Gather(Shape(x),
// 2)), Unsqueeze(Gather(Shape(x), 3))))). ONNX's Resize inference reads only initializer sizes
// ("Resize output shape unknown after shape inference" before); hase evaluates them.
TEST(ShapeValues, ResizeWithComputedSizesResolves) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "20", "24"}).Input("y", {"N", "5", "4", "6"});
  b.Int64Scalar("i2", 2).Int64Scalar("i3", 3).Int64Const("axes0", {0});
  b.Int64Const("s0", {0}).Int64Const("e2", {2}).Int64Const("ax0", {0});
  b.Node("Shape", {"x"}, {"sx"});
  ModelBuilder::Int(b.Node("Gather", {"sx", "i2"}, {"h"}), "axis", 0);
  ModelBuilder::Int(b.Node("Gather", {"sx", "i3"}, {"w"}), "axis", 0);
  b.Node("Unsqueeze", {"h", "axes0"}, {"hu"});
  b.Node("Unsqueeze", {"w", "axes0"}, {"wu"});
  ModelBuilder::Int(b.Node("Concat", {"hu", "wu"}, {"hw"}), "axis", 0);
  ModelBuilder::Int(b.Node("Cast", {"hw"}, {"hw64"}), "to", 7);
  b.Node("Shape", {"y"}, {"sy"});
  b.Node("Slice", {"sy", "s0", "e2", "ax0"}, {"nc"});
  ModelBuilder::Int(b.Node("Concat", {"nc", "hw64"}, {"sizes"}), "axis", 0);
  auto* r = b.Node("Resize", {"y", "", "", "sizes"}, {"up"});
  ModelBuilder::Str(r, "mode", "linear");
  b.Node("Relu", {"up"}, {"z"});
  b.Output("z");
  const std::string path = b.Write("resize_computed_sizes.onnx");
  auto l = LoadOnnxGraph(path, {.batch = 2});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->graph.FindValue("up")->shape, (std::vector<int64_t>{2, 5, 20, 24}));
  EXPECT_EQ(l->graph.FindValue("z")->shape, (std::vector<int64_t>{2, 5, 20, 24}));
}

// torchvision's GeneralizedRCNNTransform computes its resize in float on constants: size =
// Floor(Cast(ReduceMin([320, 320]) to float)⁻¹ × 320 × 320) → Cast to int64; scale factors as
// floats. ORT constant-folds both; hase evaluates them (Resize with computed sizes or scales).
TEST(ShapeValues, FloatConstantArithmeticResolvesResize) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "20", "24"});
  b.Int64Const("hw", {40, 60}).Int64Const("s0", {0}).Int64Const("e2", {2}).Int64Const("ax0", {0});
  b.FloatConst("k", {}, {30.0f}).FloatConst("ones", {2}, {1.0f, 1.0f});
  b.FloatConst("half", {}, {0.5f});
  ModelBuilder::Int(b.Node("ReduceMin", {"hw"}, {"m"}), "keepdims", 0);    // 40
  ModelBuilder::Int(b.Node("Cast", {"m"}, {"mf"}), "to", 1);
  b.Node("Reciprocal", {"mf"}, {"r"});                                       // 0.025
  b.Node("Mul", {"r", "k"}, {"sc"});                                         // 0.75
  b.Node("Mul", {"sc", "k"}, {"side"});                                      // 22.5
  b.Node("Floor", {"side"}, {"fl"});                                         // 22
  ModelBuilder::Int(b.Node("Cast", {"fl"}, {"fi"}), "to", 7);
  b.Int64Const("axes0", {0});
  b.Node("Unsqueeze", {"fi", "axes0"}, {"fu"});
  b.Node("Shape", {"x"}, {"sx"});
  b.Node("Slice", {"sx", "s0", "e2", "ax0"}, {"nc"});
  ModelBuilder::Int(b.Node("Concat", {"nc", "fu", "fu"}, {"sizes"}), "axis", 0);
  ModelBuilder::Str(b.Node("Resize", {"x", "", "", "sizes"}, {"a"}), "mode", "linear");
  b.Node("Reciprocal", {"half"}, {"two"});                                   // 2.0
  b.Node("Unsqueeze", {"two", "axes0"}, {"twou"});
  ModelBuilder::Int(b.Node("Concat", {"ones", "twou", "twou"}, {"scales"}), "axis", 0);
  ModelBuilder::Str(b.Node("Resize", {"a", "", "scales"}, {"y"}), "mode", "nearest");
  b.Output("y");
  const std::string path = b.Write("resize_float_arith.onnx");
  auto l = LoadOnnxGraph(path, {.batch = 2});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->graph.FindValue("a")->shape, (std::vector<int64_t>{2, 3, 22, 22}));
  EXPECT_EQ(l->graph.FindValue("y")->shape, (std::vector<int64_t>{2, 3, 44, 44}));
}

// SSD's anchor generator tiles its anchors by the feature map's H·W; Faster R-CNN's RPN keeps
// TopK(min(pre_nms_top_n, anchors)) scores. Both repeats and k come from shapes.
TEST(ShapeValues, TileRepeatsAndTopKFromShapes) {
  ModelBuilder b;
  b.Input("f", {"N", "4", "5", "6"}).Input("s", {"N", "100"});
  b.Weight("anchors", {1, 4});
  b.Int64Scalar("i2", 2).Int64Scalar("i3", 3).Int64Scalar("i1", 1).Int64Const("axes0", {0});
  b.Int64Const("one", {1}).Int64Const("pre", {64}).Int64Const("shape1", {1});
  b.Node("Shape", {"f"}, {"sf"});
  ModelBuilder::Int(b.Node("Gather", {"sf", "i2"}, {"h"}), "axis", 0);
  ModelBuilder::Int(b.Node("Gather", {"sf", "i3"}, {"w"}), "axis", 0);
  b.Node("Mul", {"h", "w"}, {"hw"});
  b.Node("Unsqueeze", {"hw", "axes0"}, {"hwu"});
  ModelBuilder::Int(b.Node("Concat", {"hwu", "one"}, {"rep"}), "axis", 0);
  b.Node("Tile", {"anchors", "rep"}, {"tiled"});
  b.Output("tiled");
  b.Node("Shape", {"s"}, {"ss"});
  ModelBuilder::Int(b.Node("Gather", {"ss", "i1"}, {"n"}), "axis", 0);
  b.Node("Unsqueeze", {"n", "axes0"}, {"nu"});
  ModelBuilder::Int(b.Node("Concat", {"pre", "nu"}, {"cands"}), "axis", 0);
  ModelBuilder::Int(b.Node("ReduceMin", {"cands"}, {"kmin"}), "keepdims", 0);
  b.Node("Reshape", {"kmin", "shape1"}, {"k"});
  ModelBuilder::Int(b.Node("TopK", {"s", "k"}, {"top", "idx"}), "axis", 1);
  b.Output("top").Output("idx", 7);
  const std::string path = b.Write("tile_topk.onnx");
  auto l = LoadOnnxGraph(path, {.batch = 2});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->graph.FindValue("tiled")->shape, (std::vector<int64_t>{30, 4}));
  EXPECT_EQ(l->graph.FindValue("top")->shape, (std::vector<int64_t>{2, 64}));
  EXPECT_EQ(l->graph.FindValue("idx")->shape, (std::vector<int64_t>{2, 64}));
}

// Box post-processing: NonZero and NonMaxSuppression sizes depend on the data. hase bounds them
// at the largest output their inputs allow, with one warning each, and resolves what follows.
TEST(ShapeValues, DataDependentSizesAreBoundedWithAWarning) {
  ModelBuilder b;
  b.Input("x", {"N", "10"}).Input("boxes", {"1", "50", "4"}).Input("scores", {"1", "3", "50"});
  b.FloatConst("zero", {}, {0.0f}).Int64Const("max_out", {10});
  b.Node("Greater", {"x", "zero"}, {"pos"});
  b.Node("NonZero", {"pos"}, {"nz"});
  ModelBuilder::Ints(b.Node("Transpose", {"nz"}, {"nzt"}), "perm", {1, 0});
  b.Output("nzt", 7);
  b.Node("NonMaxSuppression", {"boxes", "scores", "max_out"}, {"sel"});
  b.Output("sel", 7);
  const std::string path = b.Write("data_dependent.onnx");
  auto l = LoadOnnxGraph(path, {.batch = 2});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->graph.FindValue("nz")->shape, (std::vector<int64_t>{2, 20}));
  EXPECT_EQ(l->graph.FindValue("nzt")->shape, (std::vector<int64_t>{20, 2}));
  EXPECT_EQ(l->graph.FindValue("sel")->shape, (std::vector<int64_t>{30, 3}));  // 1·3·min(50, 10)
  int noted = 0;
  for (const std::string& w : l->warnings) {
    if (w.find("depends on the data; bounded at 2x20") != std::string::npos) ++noted;
    if (w.find("(NonMaxSuppression): its output size depends on the data; bounded at 30x3") !=
        std::string::npos) {
      ++noted;
    }
  }
  EXPECT_EQ(noted, 2);
}

// torchvision's batched_nms: If(boxes.numel() == 0) { empty } else { NMS(...)[:, 2] }. Once the
// boxes are bounded the condition is known (false), and the If takes the else branch's dims,
// with the NMS inside bounded too (its warning included).
TEST(ShapeValues, IfWithComputedConditionTakesTheBranchDims) {
  ModelBuilder b(17);
  b.Input("x", {"N", "10"}).Input("boxes", {"1", "50", "4"}).Input("scores", {"1", "3", "50"});
  b.FloatConst("zero", {}, {0.0f}).Int64Const("zero_i", {0});
  b.Node("Greater", {"x", "zero"}, {"pos"});
  b.Node("NonZero", {"pos"}, {"nz"});
  b.Node("Shape", {"nz"}, {"nzs"});
  ModelBuilder::Int(b.Node("ReduceProd", {"nzs"}, {"numel"}), "keepdims", 0);
  b.Node("Equal", {"numel", "zero_i"}, {"empty"});
  onnx::NodeProto* node = b.Node("If", {"empty"}, {"keep"});
  auto branch = [](const std::string& name, bool empty) {
    onnx::GraphProto g;
    g.set_name(name);
    auto* c = g.add_node();
    if (empty) {
      c->set_op_type("Constant");
      c->add_output("none");
      auto* a = c->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
      a->mutable_t()->add_dims(0);
    } else {
      c->set_op_type("NonMaxSuppression");
      c->add_input("boxes");
      c->add_input("scores");
      c->add_input("max_out");
      c->add_output("sel");
      auto* k = g.add_initializer();
      k->set_name("max_out");
      k->set_data_type(onnx::TensorProto::INT64);
      k->add_dims(1);
      k->add_int64_data(10);
      auto* ga = g.add_node();
      ga->set_op_type("Gather");
      ga->add_input("sel");
      ga->add_input("col");
      ga->add_output("kept");
      auto* ax = ga->add_attribute();
      ax->set_name("axis");
      ax->set_type(onnx::AttributeProto::INT);
      ax->set_i(1);
      auto* col = g.add_initializer();
      col->set_name("col");
      col->set_data_type(onnx::TensorProto::INT64);
      col->add_int64_data(2);
    }
    auto* o = g.add_output();
    o->set_name(empty ? "none" : "kept");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    return g;
  };
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch(name, std::string(name) == "then_branch");
  }
  b.Output("keep", 7);
  const std::string path = b.Write("batched_nms_if.onnx");
  auto l = LoadOnnxGraph(path, {.batch = 2});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->graph.FindValue("keep")->shape, (std::vector<int64_t>{30}));  // 1·3·min(50, 10)
  int nms_notes = 0;
  for (const std::string& w : l->warnings) {
    nms_notes += w.find("(NonMaxSuppression): its output size depends on the data; bounded at "
                        "30x3") != std::string::npos;
  }
  EXPECT_EQ(nms_notes, 1);
}

}  // namespace
}  // namespace hase::graph

namespace hase::graph {
namespace {

using Ints64 = std::vector<int64_t>;

std::optional<EinsumShape> Einsum(const std::string& eq, const std::vector<Ints64>& in) {
  std::vector<const Ints64*> p;
  for (const Ints64& d : in) p.push_back(&d);
  return ComputeEinsumShape(eq, p);
}

// Issue 24: maxvit_t was refused ("Einsum output shape unknown"); ONNX 1.12 infers only the rank.
TEST(EinsumShape, ExplicitImplicitEllipsisAndErrors) {
  // MaxViT's relative attention: q·kᵀ then attn·v over [batch, windows, heads, tokens, dim].
  auto qk = Einsum("...ij,...kj->...ik", {{1, 64, 2, 49, 32}, {1, 64, 2, 49, 32}});
  ASSERT_TRUE(qk);
  EXPECT_EQ(qk->output, (Ints64{1, 64, 2, 49, 49}));
  EXPECT_EQ(qk->contracted, 32);
  auto av = Einsum("bhij, bhjd -> bhid", {{2, 4, 7, 7}, {2, 4, 7, 16}});
  ASSERT_TRUE(av);
  EXPECT_EQ(av->output, (Ints64{2, 4, 7, 16}));
  EXPECT_EQ(av->contracted, 7);
  // Implicit output: letters used once, in ASCII order (matmul "ij,jk" → "ik"; "ba" → "ab").
  EXPECT_EQ(Einsum("ij,jk", {{3, 5}, {5, 2}})->output, (Ints64{3, 2}));
  EXPECT_EQ(Einsum("ba", {{3, 5}})->output, (Ints64{5, 3}));
  // Trace and sum: everything contracted.
  auto trace = Einsum("ii->", {{4, 4}});
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->output, Ints64{});
  EXPECT_EQ(trace->contracted, 4);
  // Broadcast "..." dims and a size-1 letter.
  EXPECT_EQ(Einsum("...i,...i->...", {{8, 1, 3}, {5, 3}})->output, (Ints64{8, 5}));
  EXPECT_EQ(Einsum("ij,ij->ij", {{1, 3}, {4, 3}})->output, (Ints64{4, 3}));
  // Does not fit: operand count, rank, sizes, an output letter no input has.
  EXPECT_FALSE(Einsum("ij,jk->ik", {{3, 5}}));
  EXPECT_FALSE(Einsum("ij->ij", {{3, 5, 2}}));
  EXPECT_FALSE(Einsum("ij,jk->ik", {{3, 5}, {4, 2}}));
  EXPECT_FALSE(Einsum("ij->iz", {{3, 5}}));
  EXPECT_FALSE(Einsum("i1->i", {{3, 5}}));
}

TEST(EinsumShape, LoaderResolvesEinsumOutputsAndWhatFollows) {
  ModelBuilder b(17);
  b.Input("q", {"N", "2", "49", "32"}).Input("k", {"N", "2", "49", "32"});
  ModelBuilder::Str(b.Node("Einsum", {"q", "k"}, {"a"}), "equation", "...ij,...kj->...ik");
  b.Node("Softmax", {"a"}, {"y"});
  b.Output("y");
  LoadOptions o;
  o.batch = 3;
  auto g = LoadOnnxGraph(b.Write("einsum.onnx"), o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.FindValue("a")->shape, (Ints64{3, 2, 49, 49}));
  EXPECT_EQ(g->graph.FindValue("y")->shape, (Ints64{3, 2, 49, 49}));
}

}  // namespace
}  // namespace hase::graph
