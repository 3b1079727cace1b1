// `hase kernels` end to end: output formats, and one message + exit code per bad input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/test_models.h"
#include "testing.h"

namespace hase {
namespace {

using hase::testing::HaseBin;
using hase::testing::ModelBuilder;
using hase::testing::RunCommand;

std::string Zoo(const std::string& name) {
  return hase::testing::SourceDir() + "/models/" + name + ".onnx";
}

hase::testing::CommandResult Kernels(const std::string& args) {
  return RunCommand(HaseBin() + " kernels " + args);
}

TEST(KernelsCli, JsonOfResNet50) {
  auto r = Kernels(Zoo("resnet50") + " --format json --batch 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("totals").at("kernels"), 57);
  EXPECT_EQ(j.at("batch"), 4);
  EXPECT_NEAR(j.at("totals").at("macs").get<double>() / 4e9, 4.089, 0.001);
}

TEST(KernelsCli, TableCsvAndProfiles) {
  auto t = Kernels(Zoo("resnet50"));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("FusedConv(Add,Relu)"), std::string::npos);
  EXPECT_NE(t.out.find("total: 57 kernels, 4.089 GMAC"), std::string::npos);
  auto c = Kernels(Zoo("resnet50") + " --format csv --profile ort-cpu");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(std::count(c.out.begin(), c.out.end(), '\n'), 1 + 89);
  auto n = Kernels(Zoo("vgg11") + " --fusion-profile none --format csv");
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_EQ(std::count(n.out.begin(), n.out.end(), '\n'), 1 + 28);
}

// A flatten into a Gemm exported for 224×224 (fc.weight 10×100352) fed 320×320 (K = 204800):
// ONNX shape inference accepts it; ORT fails at run time; hase names the Gemm (new-user trial).
TEST(KernelsCli, InputSizeTheGemmWasNotExportedForIsAnError) {
  auto ok = Kernels(Zoo("view_flatten_cnn"));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto r = Kernels(Zoo("view_flatten_cnn") + " --input-shape 3x320x320");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("node '/fc/Gemm' (Gemm): inner dimensions differ"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("K = 204800"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("K = 100352"), std::string::npos) << r.err;
}

TEST(KernelsCli, MissingFile) {
  auto r = Kernels("/nonexistent/m.onnx");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "hase: error: not found: /nonexistent/m.onnx: no such file "
                   "(check the path to the .onnx model)\n");
  EXPECT_EQ(r.out, "");
}

TEST(KernelsCli, TruncatedAndNonOnnxFiles) {
  const std::string text = hase::testing::WriteFile("notes.onnx", "just some text\n");
  auto r = Kernels(text);
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.err.rfind("hase: error: parse error: " + text, 0), 0u) << r.err;
  EXPECT_NE(r.err.find("not a valid ONNX model"), std::string::npos) << r.err;

  ModelBuilder b;
  b.Input("x", {"N", "3", "64", "64"}).Weight("w", {64, 3, 7, 7});
  b.Node("Conv", {"x", "w"}, {"y"});
  b.Output("y");
  const std::string full = b.model().SerializeAsString();
  const std::string cut = hase::testing::WriteFile("cut.onnx", full.substr(0, full.size() / 2));
  auto t = Kernels(cut);
  EXPECT_EQ(t.exit_code, 5);
  EXPECT_NE(t.err.find("not a valid ONNX model: truncated or corrupt protobuf"), std::string::npos)
      << t.err;
}

// Issue 24: a user's model whose external data file is absent loads (kernels and latencies need
// no weight bytes) with one warning naming the file and a tensor, on `kernels` and `predict`;
// the zoo, weight-free by design, stays silent.
TEST(KernelsCli, MissingExternalDataIsOneWarningOnKernelsAndPredict) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"}).Weight("w", {4, 3, 3, 3}, /*external=*/true);
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("cli_external.onnx");
  const std::string want = "external data file '" + hase::testing::TestTempDir() +
                           "/absent_weights.bin' is missing: 1 initializer has no weight bytes "
                           "(first 'w'); kernels and latencies do not need the bytes, running the "
                           "model does (ONNX Runtime refuses it)\n";
  auto k = Kernels(path);
  EXPECT_EQ(k.exit_code, 0) << k.err;
  EXPECT_EQ(k.err, "hase: warning: " + want);
  auto p = RunCommand(HaseBin() + " predict " + path + " --gpu T4");
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.err, "hase: warning: " + want);
  auto zoo = Kernels(Zoo("mobilenet_v2"));
  EXPECT_EQ(zoo.exit_code, 0);
  EXPECT_EQ(zoo.err, "");
}

TEST(KernelsCli, UnknownOpWarnsAndStrictFails) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"});
  b.Node("FooBar", {"x"}, {"f"}, "com.example");
  b.Node("Relu", {"f"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("cli_unknown.onnx");
  auto r = Kernels(path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.rfind("hase: warning: unknown op 'FooBar' (domain 'com.example') at node "
                        "'FooBar_1'", 0), 0u) << r.err;
  auto s = Kernels(path + " --strict");
  EXPECT_EQ(s.exit_code, 4);
  EXPECT_EQ(s.err, "hase: error: unsupported: " + path +
                       ": node 'FooBar_1': unknown op 'FooBar' (drop --strict to estimate it "
                       "conservatively)\n");
}

TEST(KernelsCli, DynamicDimsMustBeBound) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "H", "W"}).Weight("w", {4, 3, 3, 3});
  b.Node("Conv", {"x", "w"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("cli_dynamic.onnx");
  auto r = Kernels(path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "hase: error: invalid argument: " + path +
                       ": dynamic dim 2 ('H') of graph input 'x' is not bound (pass --input-shape "
                       "with the dims after the batch, e.g. 3x640x640)\n");
  auto ok = Kernels(path + " --input-shape 3x32x32 --format csv");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("1x3x32x32,1x4x30x30"), std::string::npos) << ok.out;
  auto bad = Kernels(path + " --input-shape 3xax32");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad shape '3xax32'"), std::string::npos);
}

TEST(KernelsCli, ShapeUnknownAfterInference) {
  ModelBuilder b;
  b.Input("x", {"N", "3", "8", "8"}).Input("s", {"4"}, 7);
  b.Node("Reshape", {"x", "s"}, {"r"});
  b.Node("Relu", {"r"}, {"y"});
  b.Output("y");
  const std::string path = b.Write("cli_unknown_shape.onnx");
  auto r = Kernels(path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("node 'Reshape_1' (Reshape): shape of tensor 'r' is unknown after shape "
                       "inference"), std::string::npos) << r.err;
}

TEST(KernelsCli, UnsupportedOpsetAndProfile) {
  ModelBuilder b(18);
  b.Input("x", {"N", "4"});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  auto r = Kernels(b.Write("opset18.onnx"));
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("ai.onnx opset 18 is outside 7–17"), std::string::npos) << r.err;
  auto p = Kernels(Zoo("resnet18") + " --profile tensorrt");
  EXPECT_EQ(p.exit_code, 4);
  EXPECT_EQ(p.err, "hase: error: unsupported: --profile: unknown fusion profile 'tensorrt' (use "
                   "one of: ort-cuda, ort-cpu, none)\n");
}

// A node or tensor name that is not valid UTF-8 (byte-flipped files) made nlohmann-json throw
// (type_error.316: rc 1 "internal error"); the JSON output now carries U+FFFD instead.
TEST(KernelsCli, NonUtf8NamesAreReplacedNotFatal) {
  ModelBuilder b(13);
  b.Input("x\xff", {"1", "3", "8", "8"});
  auto* n = b.Node("Relu", {"x\xff"}, {"y\xfe"});
  n->set_name("relu\xc3");
  b.Output("y\xfe");
  const std::string path = b.Write("non_utf8.onnx");
  auto r = Kernels(path + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // valid JSON
  EXPECT_NE(r.out.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD in UTF-8
  EXPECT_EQ(j.at("totals").at("kernels"), 1);
}

}  // namespace
}  // namespace hase

namespace hase {
namespace {

// Issue 22 item 7: a zoo name is a model argument; an unknown one lists the zoo's names.
TEST(KernelsCli, ZooNames) {
  auto by_name = Kernels("resnet50 --format json");
  auto by_path = Kernels(Zoo("resnet50") + " --format json");
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  auto a = nlohmann::json::parse(by_name.out), b = nlohmann::json::parse(by_path.out);
  EXPECT_EQ(a["kernels"], b["kernels"]);
  auto typo = Kernels("yolov8");
  EXPECT_EQ(typo.exit_code, 3);
  EXPECT_NE(typo.err.find("unknown model 'yolov8': no such file and no zoo model of that name"),
            std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("yolov5s, yolov8m, yolov8n, yolov8s)"), std::string::npos) << typo.err;
}

}  // namespace
}  // namespace hase

namespace hase {
namespace {

// Einsum of two operands is costed as the contraction it is: output elements × summed extent.
TEST(KernelsCli, EinsumIsCostedAsAContraction) {
  ModelBuilder b(17);
  b.Input("q", {"N", "2", "49", "32"}).Input("k", {"N", "2", "49", "32"});
  ModelBuilder::Str(b.Node("Einsum", {"q", "k"}, {"y"}), "equation", "bhid,bhjd->bhij");
  b.Output("y");
  auto r = Kernels(b.Write("einsum_cost.onnx") + " --batch 4 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no "no cost formula" warning
  const auto k = nlohmann::json::parse(r.out)["kernels"][0];
  EXPECT_EQ(k["op_type"], "Einsum");
  EXPECT_DOUBLE_EQ(k["macs"].get<double>(), 4.0 * 2 * 49 * 49 * 32);
  EXPECT_DOUBLE_EQ(k["flops"].get<double>(), 2 * 4.0 * 2 * 49 * 49 * 32);
}

}  // namespace
// --input-shape other than the model's own with a Reshape that pins the grid (YOLOv8n's Detect
// head at 640 px): the refusal does not suggest a batch that only matches the element count, and
// a batch that does match warns that the images mix.
TEST(KernelsCli, ForeignInputShapeWithAPinnedReshapeSaysSo) {
  auto r = RunCommand(HaseBin() + " kernels " + Zoo("yolov8n") + " --input-shape 3x320x320");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("fix the sizes of its own input shape"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("pass a --batch"), std::string::npos) << r.err;
  r = RunCommand(HaseBin() + " kernels " + Zoo("yolov8n") + " --input-shape 3x320x320 --batch 4 --format csv");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("mixes the images of the batch"), std::string::npos) << r.err;
}

}  // namespace hase
