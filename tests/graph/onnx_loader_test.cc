// LoadOnnxGraph / ReadModelProto: zoo files, dim binding, weight skipping, every bad input.
#include "hase/graph/onnx_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "graph/test_models.h"
#include "hase/graph/topological_order.h"
#include "testing.h"

namespace hase::graph {
namespace {

using hase::testing::ModelBuilder;

std::string Zoo(const std::string& name) {
  return hase::testing::SourceDir() + "/models/" + name + ".onnx";
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += !node.removed && node.op_type == op;
  return n;
}

// x[N,3,8,8] → Conv(W[4,3,3,3], B[4], pad 1) → Relu → y
ModelBuilder ConvRelu(int64_t opset = 13) {
  ModelBuilder b(opset);
  b.Input("x", {"N", "3", "8", "8"}).Weight("w", {4, 3, 3, 3}).Weight("b", {4});
  auto* c = b.Node("Conv", {"x", "w", "b"}, {"c"});
  ModelBuilder::Ints(c, "kernel_shape", {3, 3});
  ModelBuilder::Ints(c, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y");
  return b;
}

TEST(OnnxLoader, LoadsWeightFreeZooModelWithoutItsExternalDataFile) {
  ModelReadStats stats;
  auto model = ReadModelProto(Zoo("resnet50"), &stats);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_GT(stats.external_initializers, 50);
  EXPECT_EQ(stats.missing_external_files, 1);  // models/resnet50.onnx.data is never committed

  auto g = LoadOnnxGraph(Zoo("resnet50"), {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(CountOp(g->graph, "Conv"), 53);
  EXPECT_EQ(CountOp(g->graph, "Gemm"), 1);
  const Value* in = g->graph.FindValue(g->graph.inputs()[0]);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->shape, (std::vector<int64_t>{1, 3, 224, 224}));
  const Value* out = g->graph.FindValue(g->graph.outputs()[0]);
  EXPECT_EQ(out->shape, (std::vector<int64_t>{1, 1000}));
  EXPECT_TRUE(g->warnings.empty());
}

TEST(OnnxLoader, BindsBatchAndPropagatesShapes) {
  auto g = LoadOnnxGraph(Zoo("resnet18"), {.batch = 8});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.FindValue(g->graph.outputs()[0])->shape, (std::vector<int64_t>{8, 1000}));
  // Every value a node touches has a shape.
  for (const auto& n : g->graph.nodes()) {
    for (const auto& o : n.outputs) EXPECT_TRUE(g->graph.FindValue(o)->shape_known()) << o;
  }
}

TEST(OnnxLoader, EmbeddedWeightBytesAreSkippedSmallConstantsKept) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "32", "32"}).Weight("w", {64, 3, 7, 7});
  b.FloatConst("lo", {}, {0.0f}).FloatConst("hi", {}, {6.0f});
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Clip", {"c", "lo", "hi"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("embedded.onnx");
  ModelReadStats stats;
  ASSERT_TRUE(ReadModelProto(path, &stats).ok());
  EXPECT_EQ(stats.stripped_initializers, 1);
  EXPECT_GE(stats.skipped_data_bytes, 64 * 3 * 7 * 7 * 4);  // 37632 bytes of W never copied
  EXPECT_EQ(stats.external_initializers, 0);

  auto g = LoadOnnxGraph(path, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Value* w = g->graph.FindValue("w");
  EXPECT_TRUE(w->is_initializer);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{64, 3, 7, 7}));
  EXPECT_FALSE(w->constant.has_value());
  ASSERT_TRUE(g->graph.FindValue("hi")->constant.has_value());
  EXPECT_EQ((*g->graph.FindValue("hi")->constant)[0], 6.0);
  EXPECT_EQ(g->graph.FindValue("y")->shape, (std::vector<int64_t>{1, 64, 26, 26}));
}

TEST(OnnxLoader, ExternalWeightsWithAbsentFileLoad) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"}).Weight("w", {4, 3, 3, 3}, /*external=*/true);
  b.Node("Conv", {"x", "w"}, {"y"});
  b.Output("y");
  ModelReadStats stats;
  auto g = LoadOnnxGraph(b.Write("external.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->read_stats.external_initializers, 1);
  EXPECT_EQ(g->read_stats.missing_external_files, 1);
  EXPECT_EQ(g->graph.FindValue("y")->shape, (std::vector<int64_t>{1, 4, 6, 6}));
}

TEST(OnnxLoader, MissingFileIsNotFound) {
  auto g = LoadOnnxGraph("/nonexistent/model.onnx", {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsNotFound());
  EXPECT_EQ(g.status().message(), "no such file");
  EXPECT_EQ(g.status().where(), "/nonexistent/model.onnx");
}

TEST(OnnxLoader, EmptyFileIsParseError) {
  auto g = LoadOnnxGraph(hase::testing::WriteFile("empty.onnx", ""), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsParse());
  EXPECT_EQ(g.status().message(), "not a valid ONNX model: the file is empty");
}

TEST(OnnxLoader, TruncatedFileIsParseError) {
  std::ifstream f(Zoo("resnet18"), std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  ASSERT_GT(bytes.size(), 1000u);
  auto g = LoadOnnxGraph(hase::testing::WriteFile("truncated.onnx", bytes.substr(0, bytes.size() * 6 / 10)), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsParse());
  EXPECT_NE(g.status().message().find("not a valid ONNX model: truncated or corrupt protobuf"),
            std::string::npos) << g.status().ToString();
  EXPECT_NE(g.status().where().find("byte "), std::string::npos);
}

TEST(OnnxLoader, TextFileIsNotOnnx) {
  auto g = LoadOnnxGraph(hase::testing::WriteFile("readme.onnx", "# not a model\nhello\n"), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsParse());
  EXPECT_EQ(g.status().message().rfind("not a valid ONNX model", 0), 0u) << g.status().ToString();
}

TEST(OnnxLoader, ValidProtobufWithoutGraphIsNotOnnx) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto g = LoadOnnxGraph(hase::testing::WriteFile("nograph.onnx", m.SerializeAsString()), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsParse());
  EXPECT_EQ(g.status().message(), "not a valid ONNX model: no graph in the file");
}

TEST(OnnxLoader, AcceptsOpsets7To17RejectsOthers) {
  for (int64_t opset : {7, 11, 13, 17}) {
    auto g = LoadOnnxGraph(ConvRelu(opset).Write("opset.onnx"), {});
    EXPECT_TRUE(g.ok()) << opset << ": " << g.status().ToString();
  }
  for (int64_t opset : {6, 18}) {
    auto g = LoadOnnxGraph(ConvRelu(opset).Write("opset_bad.onnx"), {});
    ASSERT_FALSE(g.ok());
    EXPECT_TRUE(g.status().IsUnsupported());
    EXPECT_EQ(g.status().message(), "ai.onnx opset " + std::to_string(opset) + " is outside 7–17");
  }
}

TEST(OnnxLoader, UnboundDynamicDimIsInvalidArgument) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "H", "W"}).Weight("w", {4, 3, 3, 3});
  b.Node("Conv", {"x", "w"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("dynamic_hw.onnx");
  auto g = LoadOnnxGraph(path, {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsInvalidArgument());
  EXPECT_EQ(g.status().message(), "dynamic dim 2 ('H') of graph input 'x' is not bound");
  EXPECT_NE(g.status().hint().find("--input-shape"), std::string::npos);

  auto ok = LoadOnnxGraph(path, {.batch = 2, .input_shape = {3, 64, 48}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->graph.FindValue("y")->shape, (std::vector<int64_t>{2, 4, 62, 46}));

  auto bad_rank = LoadOnnxGraph(path, {.input_shape = {64, 48}});
  ASSERT_FALSE(bad_rank.ok());
  EXPECT_TRUE(bad_rank.status().IsInvalidArgument());
  EXPECT_EQ(bad_rank.status().message(),
            "--input-shape 64x48 has 2 dims but graph input 'x' has rank 4");

  auto unbound_batch = LoadOnnxGraph(path, {.batch = 0, .input_shape = {3, 8, 8}});
  ASSERT_FALSE(unbound_batch.ok());
  EXPECT_EQ(unbound_batch.status().message(), "dynamic dim 0 ('N') of graph input 'x' is not bound");
}

// A sequence-first RNN export (nn.LSTM without batch_first, dynamic_axes {0: "seq", 1: "batch"})
// has [seq, batch, features]: --batch binds the dim the file names the batch, and
// --input-shape gives the others in order. Binding dim 0 priced N time steps of a batch of 1.
TEST(OnnxLoader, BatchBindsTheDimTheFileNamesBatch) {
  ModelBuilder b;
  b.Input("x", {"seq", "batch_size", "64"});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("seq_first.onnx");
  auto g = LoadOnnxGraph(path, {.batch = 8, .input_shape = {35, 64}});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.FindValue("y")->shape, (std::vector<int64_t>{35, 8, 64}));

  auto unbound = LoadOnnxGraph(path, {.batch = 8});
  ASSERT_FALSE(unbound.ok());
  EXPECT_EQ(unbound.status().message(), "dynamic dim 0 ('seq') of graph input 'x' is not bound");
  EXPECT_NE(unbound.status().hint().find("dim 1, which the model names the batch"), std::string::npos)
      << unbound.status().hint();
}

TEST(OnnxLoader, OverridingAFixedDimWarns) {
  auto g = LoadOnnxGraph(Zoo("resnet18"), {.input_shape = {3, 320, 320}});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->warnings.size(), 2u);
  EXPECT_EQ(g->warnings[0], "graph input 'input' dim 2 is fixed to 224 in the model; overridden with 320");
}

TEST(OnnxLoader, UnknownOpGetsInputShapeAndWarning) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"});
  b.Node("FooBar", {"x"}, {"f"}, "com.example");
  b.Node("Relu", {"f"}, {"y"});
  b.Output("y");
  auto g = LoadOnnxGraph(b.Write("unknown_op.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->unknown_op_nodes.size(), 1u);
  ASSERT_EQ(g->warnings.size(), 1u);
  EXPECT_EQ(g->warnings[0].rfind("unknown op 'FooBar' (domain 'com.example') at node 'FooBar_1'", 0), 0u)
      << g->warnings[0];
  EXPECT_EQ(g->graph.FindValue("y")->shape, (std::vector<int64_t>{1, 3, 8, 8}));
}

TEST(OnnxLoader, ShapeUnknownAfterInferenceIsInvalidArgument) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"}).Input("s", {"4"}, /*elem_type=*/7);
  b.Node("Reshape", {"x", "s"}, {"r"});
  b.Node("Relu", {"r"}, {"y"});
  b.Output("y");
  auto g = LoadOnnxGraph(b.Write("data_dependent.onnx"), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsInvalidArgument());
  EXPECT_EQ(g.status().message(), "shape of tensor 'r' is unknown after shape inference");
  EXPECT_NE(g.status().where().find("node 'Reshape_1' (Reshape)"), std::string::npos);
}

TEST(OnnxLoader, ConstantNodesBecomeInitializers) {
  ModelBuilder b;
  b.Input("x", {"N", "4"});
  auto* c = b.Node("Constant", {}, {"shape"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->add_int64_data(2);
  a->mutable_t()->add_int64_data(2);
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  auto g = LoadOnnxGraph(b.Write("constant.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.LiveNodeCount(), 1);
  EXPECT_TRUE(g->graph.IsConstant("shape"));
  EXPECT_EQ(*g->graph.FindValue("shape")->constant, (std::vector<double>{2, 2}));
  EXPECT_EQ(g->graph.FindValue("y")->shape, (std::vector<int64_t>{2, 2}));
}

TEST(OnnxLoader, FilesOver2GBAreUnsupported) {
  const std::string path = hase::testing::TestTempDir() + "/huge.onnx";
  {
    std::ofstream f(path, std::ios::binary);
  }
  std::filesystem::resize_file(path, (int64_t{1} << 31) + 1);  // sparse: no disk used
  auto g = ReadModelProto(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsUnsupported());
  EXPECT_EQ(g.status().message(), "file is 2147483649 bytes, over protobuf's 2 GB message limit");
}

TEST(OnnxLoader, ResolutionAModelFixesFailsWithAHint) {
  auto g = LoadOnnxGraph(Zoo("yolov8n"), {.input_shape = {3, 320, 320}});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsInvalidArgument());
  EXPECT_EQ(g.status().message().rfind("ONNX shape inference failed", 0), 0u);
  // One line: the first (root) error, the cascade only counted.
  EXPECT_EQ(g.status().message().find('\n'), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("follow-on errors"), std::string::npos);
  EXPECT_NE(g.status().hint().find("fixed to 640"), std::string::npos) << g.status().hint();
}

TEST(OnnxLoader, ParseShape) {
  EXPECT_EQ(*ParseShape("3x640x640"), (std::vector<int64_t>{3, 640, 640}));
  EXPECT_EQ(*ParseShape("1,3,224,224"), (std::vector<int64_t>{1, 3, 224, 224}));
  for (const char* bad : {"", "3x", "3xax4", "0x3", "-1x2"}) {
    auto s = ParseShape(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(s.status().IsInvalidArgument());
  }
}

TEST(OrtTopologicalOrder, VisitsHigherIndexProducersFirstFromTheLeaves) {
  // Diamond a → {b, c} → d: ORT's stack pops the higher-index producer c first, so it emits
  // a, c, b, d; once b is re-created by a fusion (new, higher index) the order is a, b, c, d.
  ModelBuilder m;
  m.Input("x", {"1", "4"});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Relu", {"a"}, {"b"});
  m.Node("Relu", {"a"}, {"c"});
  m.Node("Add", {"b", "c"}, {"d"});
  m.Output("d");
  auto g = LoadOnnxGraph(m.Write("diamond.onnx"), {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(OrtTopologicalOrder(g->graph), (std::vector<NodeId>{0, 2, 1, 3}));
  g->graph.mutable_node(1).order_key = g->graph.NewOrderKey();
  EXPECT_EQ(OrtTopologicalOrder(g->graph), (std::vector<NodeId>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace hase::graph

namespace hase::graph {
namespace {

// A window op with a zero stride, dilation or kernel size used to kill the process with
// SIGFPE inside ONNX's shape inference; now one InvalidArgument naming the node and attribute.
TEST(OnnxLoaderHostile, ZeroStrideOrKernelIsAnErrorNotACrash) {
  struct Case {
    const char* op;
    const char* attr;
    std::vector<int64_t> value;
  };
  for (const Case& c : {Case{"Conv", "strides", {0, 1}}, Case{"Conv", "dilations", {1, 0}},
                        Case{"MaxPool", "strides", {0, 0}}, Case{"AveragePool", "kernel_shape", {0, 2}},
                        Case{"Conv", "pads", {-1, 0, 0, 0}}}) {
    hase::testing::ModelBuilder b(13);
    b.Input("x", {"N", "3", "8", "8"});
    onnx::NodeProto* n;
    if (std::string(c.op) == "Conv") {
      b.Weight("w", {4, 3, 3, 3});
      n = b.Node("Conv", {"x", "w"}, {"y"});
      if (std::string(c.attr) != "kernel_shape") hase::testing::ModelBuilder::Ints(n, "kernel_shape", {3, 3});
    } else {
      n = b.Node(c.op, {"x"}, {"y"});
      if (std::string(c.attr) != "kernel_shape") hase::testing::ModelBuilder::Ints(n, "kernel_shape", {2, 2});
    }
    hase::testing::ModelBuilder::Ints(n, c.attr, c.value);
    b.Output("y");
    const std::string path = b.Write(std::string("bad_") + c.op + "_" + c.attr + ".onnx");
    auto g = LoadOnnxGraph(path, {});
    ASSERT_FALSE(g.ok()) << c.op << " " << c.attr;
    EXPECT_TRUE(g.status().IsInvalidArgument()) << g.status().ToString();
    EXPECT_NE(g.status().ToString().find(c.attr), std::string::npos) << g.status().ToString();
    EXPECT_NE(g.status().ToString().find(c.op), std::string::npos) << g.status().ToString();
  }
}

// A batch that makes a tensor's byte count overflow int64 is refused with the tensor's name
// (it used to wrap into garbage FLOPs and bytes: signed overflow, undefined behaviour).
TEST(OnnxLoaderHostile, HugeBatchIsRefusedWithTheTensor) {
  LoadOptions o;
  o.batch = int64_t{1} << 40;
  auto g = LoadOnnxGraph(Zoo("resnet50"), o);
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsInvalidArgument()) << g.status().ToString();
  EXPECT_NE(g.status().ToString().find("too large"), std::string::npos) << g.status().ToString();
  o.batch = 4096;  // large but real: loads
  EXPECT_TRUE(LoadOnnxGraph(Zoo("resnet50"), o).ok());
}

}  // namespace
}  // namespace hase::graph

namespace hase::graph {
namespace {

// Issue 12, C08/C09: invalid models ORT rejects get one clear error instead of a prediction.
TEST(OnnxLoaderInvalid, ResizeWithBothScalesAndSizes) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"}).FloatConst("scales", {4}, {1, 1, 2, 2});
  b.Int64Const("sizes", {1, 3, 16, 16});
  b.Node("Resize", {"x", "", "scales", "sizes"}, {"y"});
  b.Output("y");
  auto g = LoadOnnxGraph(b.Write("resize_both.onnx"), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsInvalidArgument());
  EXPECT_NE(g.status().ToString().find("Resize has both 'scales' and 'sizes' inputs"),
            std::string::npos) << g.status().ToString();

  // An empty scales tensor next to sizes (what exporters write) is fine.
  ModelBuilder ok;
  ok.Input("x", {"N", "3", "8", "8"}).FloatConst("scales", {0}, {});
  ok.Int64Const("sizes", {1, 3, 16, 16});
  ok.Node("Resize", {"x", "", "scales", "sizes"}, {"y"});
  ok.Output("y");
  EXPECT_TRUE(LoadOnnxGraph(ok.Write("resize_sizes.onnx"), {}).ok());
}

TEST(OnnxLoaderInvalid, UpsampleScaleBelowOne) {
  ModelBuilder b(9);
  b.Input("x", {"N", "3", "8", "8"}).FloatConst("scales", {4}, {1, 1, 0.5f, 0.5f});
  b.Node("Upsample", {"x", "scales"}, {"y"});
  b.Output("y");
  auto g = LoadOnnxGraph(b.Write("upsample_half.onnx"), {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().ToString().find("Upsample scale 0.5 on dim 2 is below 1"),
            std::string::npos) << g.status().ToString();
  ModelBuilder up(9);
  up.Input("x", {"N", "3", "8", "8"}).FloatConst("scales", {4}, {1, 1, 2, 2});
  up.Node("Upsample", {"x", "scales"}, {"y"});
  up.Output("y");
  EXPECT_TRUE(LoadOnnxGraph(up.Write("upsample_2x.onnx"), {}).ok());
}

// External data: an absent file is the zoo's design; a present file too short is an error.
TEST(OnnxLoaderInvalid, ExternalDataPastTheEndOfAPresentFile) {
  ModelBuilder b = ConvRelu();
  onnx::ModelProto m = b.model();
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != "w") continue;
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : {std::pair<const char*, const char*>{"location", "short_weights.bin"},
                        {"offset", "64"}, {"length", "432"}}) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
  }
  const std::string path = hase::testing::WriteFile("short_external.onnx", m.SerializeAsString());
  const std::string data = hase::testing::TestTempDir() + "/short_weights.bin";
  std::filesystem::remove(data);
  auto absent = LoadOnnxGraph(path, {});  // absent: loads, with one warning naming file and tensor
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  ASSERT_EQ(absent->warnings.size(), 1u);
  EXPECT_EQ(absent->warnings[0], "external data file '" + data + "' is missing: 1 initializer has "
            "no weight bytes (first 'w'); kernels and latencies do not need the bytes, running the "
            "model does (ONNX Runtime refuses it)");
  hase::testing::WriteFile("short_weights.bin", std::string(400, '\0'));
  auto g = LoadOnnxGraph(path, {});  // too short: loads (no bytes needed), one warning
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->warnings.size(), 1u);
  EXPECT_NE(g->warnings[0].find("external data file '" + data + "' does not match the model: "
                                "initializer 'w' points at bytes 64..496 of 'short_weights.bin', "
                                "which has only 400 bytes"),
            std::string::npos) << g->warnings[0];
  ASSERT_EQ(g->read_stats.external_data_issues.size(), 1u);
  EXPECT_EQ(g->read_stats.external_data_issues[0].kind, ExternalDataIssue::kPastTheEnd);
  hase::testing::WriteFile("short_weights.bin", std::string(496, '\0'));
  auto full = LoadOnnxGraph(path, {});  // long enough: no warning
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full->warnings.empty());
}

}  // namespace
}  // namespace hase::graph

namespace hase::graph {
namespace {

// Issue 24: torchvision ssdlite320_mobilenet_v3_large / fasterrcnn_mobilenet_v3_large_320_fpn
// (opset 17) killed `hase kernels` with SIGSEGV. Traced at batch 1, their transform splits the
// batch with Split(split=[1]); at batch 2 (kernels retries other batches to say which fit) that
// Split fails inference, its output stays untyped, and ONNX 1.12's Shape-15 data propagation
// dereferences the missing type. The same construct, small:
//   x[N,3,4,4] → Split(axis 0, split [1]) → Squeeze(0) → Unsqueeze(0) → Shape → Reshape(u, ·)
ModelBuilder SplitThenShape() {
  ModelBuilder b(17);
  b.Input("x", {"N", "3", "4", "4"}).Int64Const("split", {1}).Int64Const("axes", {0});
  ModelBuilder::Int(b.Node("Split", {"x", "split"}, {"s"}), "axis", 0);
  b.Node("Squeeze", {"s", "axes"}, {"q"});
  b.Node("Unsqueeze", {"q", "axes"}, {"u"});
  b.Node("Shape", {"u"}, {"shape"});
  b.Node("Reshape", {"u", "shape"}, {"y"});
  b.Output("y");
  return b;
}

TEST(OnnxLoaderHostile, ShapeAfterAFailedSplitIsAnErrorNotACrash) {
  const std::string path = SplitThenShape().Write("split_then_shape.onnx");
  LoadOptions o;
  o.batch = 1;
  auto g1 = LoadOnnxGraph(path, o);
  ASSERT_TRUE(g1.ok()) << g1.status().ToString();
  EXPECT_EQ(g1->graph.FindValue("y")->shape, (std::vector<int64_t>{1, 3, 4, 4}));
  o.batch = 2;
  auto g2 = LoadOnnxGraph(path, o);
  ASSERT_FALSE(g2.ok());
  EXPECT_TRUE(g2.status().IsInvalidArgument()) << g2.status().ToString();
  EXPECT_NE(g2.status().ToString().find("Mismatch between the sum of 'split' (1) and the split "
                                        "dimension of the input (2)"),
            std::string::npos)
      << g2.status().ToString();
}

// Shape (opset 17) of a name no node produces and no input declares: the same dereference.
TEST(OnnxLoaderHostile, ShapeOfAnUndeclaredTensorIsAnErrorNotACrash) {
  ModelBuilder b(17);
  b.Input("x", {"N", "3"});
  b.Node("Shape", {"nowhere"}, {"shape"});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  auto g = LoadOnnxGraph(b.Write("shape_of_nowhere.onnx"), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsInvalidArgument()) << g.status().ToString();
}

// Scan without its required 'body' crashed ONNX 1.12's inference; ORT refuses the node.
TEST(OnnxLoaderHostile, MissingRequiredAttributeIsAnErrorNotACrash) {
  ModelBuilder b(17);
  b.Input("x", {"N", "3"});
  ModelBuilder::Int(b.Node("Scan", {"x"}, {"y"}), "num_scan_inputs", 1);
  b.Output("y");
  auto g = LoadOnnxGraph(b.Write("scan_without_body.onnx"), {});
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.status().IsInvalidArgument()) << g.status().ToString();
  EXPECT_NE(g.status().ToString().find("node 'Scan_1' (Scan): required attribute 'body' of "
                                       "Scan-16 is missing"),
            std::string::npos)
      << g.status().ToString();
}

// What no check foresees: Split with no outputs divides by zero inside ONNX 1.12 (SIGFPE). The
// inference runs in a child process, so this is one Internal error and the caller lives on.
TEST(OnnxLoaderHostile, CrashInsideLibonnxIsCaught) {
  ModelBuilder b(17);
  b.Input("x", {"N", "4"});
  ModelBuilder::Int(b.Node("Split", {"x"}, {}), "axis", 0);
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("split_without_outputs.onnx");
  for (bool ort_view : {true, false}) {
    LoadOptions o;
    o.ort_view = ort_view;
    auto g = LoadOnnxGraph(path, o);
    ASSERT_FALSE(g.ok());
    EXPECT_TRUE(g.status().IsInternal()) << g.status().ToString();
    EXPECT_NE(g.status().ToString().find("ONNX shape inference (libonnx) crashed (" +
                                         hase::testing::CrashSignalName("SIGFPE") + ")"),
              std::string::npos)
        << g.status().ToString();
    EXPECT_NE(g.status().ToString().find(path), std::string::npos) << g.status().ToString();
  }
  // And the process goes on loading models.
  EXPECT_TRUE(LoadOnnxGraph(ConvRelu().Write("after_crash.onnx"), {}).ok());
}

}  // namespace
}  // namespace hase::graph

namespace hase::graph {
namespace {

// ConvRelu with 'w' ([4,3,3,3] float, 432 bytes) moved to external data with these entries.
std::string ExternalW(const std::string& file, const std::vector<std::pair<std::string, std::string>>& entries) {
  onnx::ModelProto m = ConvRelu().model();
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != "w") continue;
    t.clear_raw_data();
    t.clear_float_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : entries) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
  }
  return hase::testing::WriteFile(file, m.SerializeAsString());
}

// Issue 24: an external-data length that is not the tensor's size, present file or not, is one
// warning naming the tensor, its size and the file: kernels need no weight bytes (ORT refuses to
// load such a model; hase_materialize makes a runnable copy).
TEST(OnnxLoaderExternalData, LengthOtherThanTheTensorSizeIsOneWarning) {
  std::filesystem::remove(hase::testing::TestTempDir() + "/w_len.bin");
  const std::string path = ExternalW("wrong_length.onnx", {{"location", "w_len.bin"}, {"length", "100"}});
  for (bool present : {false, true}) {
    if (present) hase::testing::WriteFile("w_len.bin", std::string(1000, '\0'));
    auto g = LoadOnnxGraph(path, {});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_EQ(g->warnings.size(), 1u);
    EXPECT_NE(g->warnings[0].find("w_len.bin' does not match the model: initializer 'w' ([4,3,3,3], "
                                  "FLOAT) is 432 bytes, but its external-data entry gives length "
                                  "100 in 'w_len.bin'"),
              std::string::npos) << g->warnings[0];
  }
  auto right = LoadOnnxGraph(ExternalW("right_length.onnx", {{"location", "w_len.bin"}, {"length", "432"}}), {});
  ASSERT_TRUE(right.ok());
  EXPECT_TRUE(right->warnings.empty());
}

// Without a length, the tensor's own size from the offset must fit in a present file.
TEST(OnnxLoaderExternalData, WithoutLengthPastTheEndIsOneWarning) {
  const std::string path = ExternalW("no_length.onnx", {{"location", "w_nolen.bin"}, {"offset", "64"}});
  std::filesystem::remove(hase::testing::TestTempDir() + "/w_nolen.bin");
  auto absent = LoadOnnxGraph(path, {});
  ASSERT_TRUE(absent.ok());
  ASSERT_EQ(absent->warnings.size(), 1u);
  EXPECT_NE(absent->warnings[0].find("w_nolen.bin' is missing: 1 initializer has no weight bytes "
                                     "(first 'w')"), std::string::npos) << absent->warnings[0];
  hase::testing::WriteFile("w_nolen.bin", std::string(400, '\0'));
  auto g = LoadOnnxGraph(path, {});
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->warnings.size(), 1u);
  EXPECT_NE(g->warnings[0].find("initializer 'w' points at bytes 64..496 of 'w_nolen.bin', "
                                "which has only 400 bytes"),
            std::string::npos) << g->warnings[0];
  hase::testing::WriteFile("w_nolen.bin", std::string(496, '\0'));
  auto ok = LoadOnnxGraph(path, {});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->warnings.empty());
}

// A model saved with size_threshold=0 keeps even its Reshape shape in external data. Present,
// the shape is read (the loader needs its values); absent, the Reshape's output shape is unknown
// and the error names the node, the tensor and the file.
TEST(OnnxLoaderExternalData, ValuesNeededFromExternalDataAreReadOrAnError) {
  ModelBuilder b;
  b.Input("x", {"N", "4", "6"}).Int64Const("shape", {0, 24});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  onnx::ModelProto m = b.model();
  std::string raw;
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != "shape") continue;
    raw = t.raw_data();
    if (raw.empty()) {
      for (int64_t v : t.int64_data()) raw.append(reinterpret_cast<const char*>(&v), 8);
    }
    t.clear_raw_data();
    t.clear_int64_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : {std::pair<const char*, const char*>{"location", "reshape.onnx.data"},
                        {"offset", "0"}, {"length", "16"}}) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
  }
  ASSERT_EQ(raw.size(), 16u);
  const std::string path = hase::testing::WriteFile("reshape.onnx", m.SerializeAsString());
  hase::testing::WriteFile("reshape.onnx.data", raw);
  auto g = LoadOnnxGraph(path, {.batch = 3});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(g->warnings.empty());
  EXPECT_EQ(g->read_stats.read_external_initializers, 1);
  EXPECT_EQ(g->graph.FindValue("y")->shape, (std::vector<int64_t>{3, 24}));

  std::filesystem::remove(hase::testing::TestTempDir() + "/reshape.onnx.data");
  auto missing = LoadOnnxGraph(path, {.batch = 3});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsInvalidArgument());
  EXPECT_NE(missing.status().ToString().find("shape inference needs the values of "
                                             "initializer 'shape', but "
                                             "its external data cannot be read: "
                                             "'reshape.onnx.data' is missing"),
            std::string::npos) << missing.status().ToString();
}

}  // namespace
}  // namespace hase::graph
