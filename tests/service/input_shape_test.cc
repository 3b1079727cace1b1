// Issue #22 item 4: every model is priced at its own input size. REST (POST /v1/tasks,
// /v1/advise, over real HTTP) and the extender's filter/prioritize price a task at the input its
// ONNX declares (YOLOv8n 3x640x640, ResNet-50 3x224x224, a 256-px model built here) unless the
// request states one (input_shape / input_size, hase.io/input-shape / hase.io/input-size); a
// model whose input is not fixed must be told; a latency table (no ONNX) says it assumed nothing.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "graph/test_models.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/kernels/kernel_list_builder.h"
#include "hase/service/api_server.h"
#include "hase/service/extender.h"
#include "hase/service/task_json.h"
#include "hase/sim/predictor_oracle.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A small CNN whose ONNX fixes its input to 1x3xSIDExSIDE (dims "N" and "H" left symbolic when
// `open` is set): Conv 3→32 (3x3, stride 2) + Relu, Conv 32→64 (3x3, stride 2) + Relu,
// GlobalAveragePool, Flatten, Gemm 64→10.
void WriteCnn(const std::string& path, int side, bool open = false) {
  hase::testing::ModelBuilder b(13);
  const std::string s = std::to_string(side);
  b.Input("image", {open ? "N" : "1", "3", open ? "H" : s, open ? "W" : s});
  b.Weight("w1", {32, 3, 3, 3}).Weight("w2", {64, 32, 3, 3}).Weight("fc", {10, 64}).Weight("fcb", {10});
  auto* c1 = b.Node("Conv", {"image", "w1"}, {"c1"});
  hase::testing::ModelBuilder::Ints(c1, "strides", {2, 2});
  hase::testing::ModelBuilder::Ints(c1, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"});
  auto* c2 = b.Node("Conv", {"r1", "w2"}, {"c2"});
  hase::testing::ModelBuilder::Ints(c2, "strides", {2, 2});
  hase::testing::ModelBuilder::Ints(c2, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c2"}, {"r2"});
  b.Node("GlobalAveragePool", {"r2"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  auto* fc = b.Node("Gemm", {"f", "fc", "fcb"}, {"logits"});
  hase::testing::ModelBuilder::Int(fc, "transB", 1);
  b.Output("logits");
  std::string bytes;
  ASSERT_TRUE(b.model().SerializeToString(&bytes));
  std::ofstream(path, std::ios::binary) << bytes;
}

class InputShapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = hase::testing::FreshDir("shape");
    models_ = dir_ + "/models";
    fs::create_directories(models_);
    // Real zoo models, and models built here: one fixed at 256 px, one with open H and W.
    for (const char* m : {"yolov8n", "resnet50"}) {
      fs::copy_file(hase::testing::SourceDir() + "/models/" + m + ".onnx", models_ + "/" + m + ".onnx");
    }
    WriteCnn(models_ + "/cnn256.onnx", 256);
    WriteCnn(models_ + "/cnn_open.onnx", 256, /*open=*/true);
    catalog_ = std::make_unique<GpuCatalog>(*GpuCatalog::Builtin());
    sim::PredictorOracleOptions po;
    po.models_dir = models_;
    oracle_ = std::make_shared<sim::PredictorOracle>(*catalog_, po);
    Start(oracle_);
  }
  void Start(std::shared_ptr<const sched::LatencyOracle> oracle) {
    Stop();
    DaemonOptions o;
    o.state_dir = dir_ + "/state";
    o.tick_s = 0.05;
    o.store.synchronous_full = false;
    auto d = Daemon::Create(hase::testing::SmallCluster(), std::move(oracle), o, nullptr);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(*d);
    ASSERT_TRUE(daemon_->Start().ok());
    extender_ = std::make_unique<Extender>(*daemon_);
    api_ = std::make_unique<ApiServer>(*daemon_, *extender_);
    auto port = api_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    api_->Start();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
    client_->set_read_timeout(60, 0);  // the first price of a model builds its kernels
  }
  void Stop() {
    if (api_) api_->Stop();
    if (daemon_) daemon_->Stop();
    client_.reset();
    api_.reset();
    extender_.reset();
    daemon_.reset();
  }
  void TearDown() override {
    Stop();
    fs::remove_all(dir_);
  }
  json Post(const std::string& path, const json& body, int* status) {
    auto r = client_->Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return json();
    *status = r->status;
    return json::parse(r->body, nullptr, false);
  }
  // Submits `body` and returns the task as GET /v1/tasks/{id} shows it once placed.
  json SubmitPlaced(const json& body) {
    int status = 0;
    json t = Post("/v1/tasks", body, &status);
    EXPECT_EQ(status, 201) << t.dump();
    for (int i = 0; i < 400 && t.value("state", "") == "queued"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      auto r = client_->Get(("/v1/tasks/" + std::to_string(t["id"].get<int64_t>())).c_str());
      if (r) t = json::parse(r->body);
    }
    // Nothing runs these tasks: cancel it so the next one finds the GPUs free.
    client_->Delete(("/v1/tasks/" + std::to_string(t["id"].get<int64_t>())).c_str());
    return t;
  }
  static json Pod(const std::string& name, const json& annotations) {
    return json{{"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}, {"annotations", annotations}}},
                {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
  }

  std::string dir_, models_;
  std::unique_ptr<GpuCatalog> catalog_;
  std::shared_ptr<const sched::LatencyOracle> oracle_;
  std::unique_ptr<Daemon> daemon_;
  std::unique_ptr<Extender> extender_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(InputShapeTest, RestPricesEachModelAtItsOwnInput) {
  // Unstated: the ONNX's own input. Each on its own A100 (num_batches 100, batch 1).
  json yolo = SubmitPlaced({{"model", "yolov8n"}, {"num_batches", 100}});
  json r50 = SubmitPlaced({{"model", "resnet50"}, {"num_batches", 100}});
  json c256 = SubmitPlaced({{"model", "cnn256"}, {"num_batches", 100}});
  EXPECT_EQ(yolo["input_shape"], "3x640x640") << yolo.dump();
  EXPECT_EQ(yolo["input_size"], 640);
  EXPECT_EQ(r50["input_shape"], "3x224x224") << r50.dump();
  EXPECT_EQ(c256["input_shape"], "3x256x256") << c256.dump();
  EXPECT_EQ(c256["input_size"], 256);
  // Stated: the request's input, priced as such (a different prediction, not the same number).
  json c224 = SubmitPlaced({{"model", "cnn256"}, {"num_batches", 100}, {"input_size", 224}});
  json c512 = SubmitPlaced({{"model", "cnn256"}, {"num_batches", 100}, {"input_shape", "3x512x512"}});
  json r288 = SubmitPlaced({{"model", "resnet50"}, {"num_batches", 100}, {"input_shape", "3x288x288"}});
  EXPECT_EQ(c224["input_shape"], "3x224x224");
  EXPECT_EQ(c512["input_shape"], "3x512x512");
  EXPECT_EQ(r288["input_shape"], "3x288x288");
  EXPECT_EQ(r288["input_size"], 288);
  // The YOLOv8 export fixes its Reshape to the 640 grid: another input is refused, clearly
  // (before: every YOLO task was priced at 224 and refused with this reshape error alone).
  int status = 0;
  json y320 = Post("/v1/tasks", {{"model", "yolov8n"}, {"input_shape", "3x320x320"}}, &status);
  EXPECT_EQ(status, 400) << y320.dump();
  EXPECT_NE(y320["error"]["message"].get<std::string>().find("cannot be predicted at input 3x320x320"), std::string::npos)
      << y320.dump();
  EXPECT_NE(y320["error"]["hint"].get<std::string>().find("declares input 3x640x640"), std::string::npos) << y320.dump();
  // Each record's prediction is the oracle's at the shape it shows, on the GPU type it got.
  const sched::Cluster cluster = hase::testing::SmallCluster();
  auto priced_ms = [&](const json& t, int type) {
    TaskSpec spec;
    spec.model = t["model"];
    spec.num_batches = 100;
    auto dims = hase::ParseInputShape(t["input_shape"].get<std::string>());
    EXPECT_TRUE(dims.ok());
    spec.input_shape = *dims;
    TaskRecord r;
    r.spec = spec;
    auto p = oracle_->Profile(r.ToSchedTask(), cluster.types[type]);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? p->isolated_ms : 0.0;
  };
  for (const json* t : {&yolo, &r50, &c256, &c224, &c512, &r288}) {
    ASSERT_TRUE((*t)["gpu"].is_object()) << t->dump();
    const int type = cluster.gpus[(*t)["gpu"]["id"].get<int>()].type;
    EXPECT_NEAR((*t)["predicted"]["isolated_ms"].get<double>(), priced_ms(*t, type), 1e-6) << t->dump();
  }
  // On one GPU type (A100), the predictions differ with the input as the pixels do.
  const double ms224 = priced_ms(c224, 0), ms256 = priced_ms(c256, 0), ms512 = priced_ms(c512, 0);
  const double y640 = priced_ms(yolo, 0), r224 = priced_ms(r50, 0), r288ms = priced_ms(r288, 0);
  std::printf("A100, 100 batches of 1: cnn256 at 224/256/512 px %.3f / %.3f / %.3f ms; resnet50 at 224/288 px "
              "%.3f / %.3f ms; yolov8n at 640 px %.3f ms\n", ms224, ms256, ms512, r224, r288ms, y640);
  EXPECT_GT(ms256, ms224);  // 1.31x the pixels
  EXPECT_GT(ms512, ms256);  // 4x the pixels
  EXPECT_GT(r288ms, r224);  // 1.65x the pixels
  // /v1/advise says what it priced.
  json a = Post("/v1/advise", {{"model", "yolov8n"}}, &status);
  EXPECT_EQ(status, 200) << a.dump();
  EXPECT_EQ(a["input_shape"], "3x640x640");
  a = Post("/v1/advise", {{"model", "resnet50"}, {"input_size", 256}}, &status);
  EXPECT_EQ(status, 200) << a.dump();
  EXPECT_EQ(a["input_shape"], "3x256x256");
}

TEST_F(InputShapeTest, ClearErrorsForOpenInputsAndBadShapes) {
  int status = 0;
  // The model leaves H and W open: the request must say.
  json e = Post("/v1/tasks", {{"model", "cnn_open"}}, &status);
  EXPECT_EQ(status, 400) << e.dump();
  EXPECT_EQ(e["error"]["where"], "task field 'input_shape'") << e.dump();
  EXPECT_NE(e["error"]["message"].get<std::string>().find("3xHxW"), std::string::npos) << e.dump();
  EXPECT_NE(e["error"]["hint"].get<std::string>().find("3x640x640"), std::string::npos) << e.dump();
  json ok = SubmitPlaced({{"model", "cnn_open"}, {"input_shape", "3x300x300"}});
  EXPECT_EQ(ok["input_shape"], "3x300x300");
  // A malformed shape, and input_size against input_shape.
  e = Post("/v1/tasks", {{"model", "resnet50"}, {"input_shape", "3x640"}}, &status);
  EXPECT_EQ(status, 400) << e.dump();  // the graph's input has rank 4: 3 dims after the batch
  EXPECT_NE(e["error"]["message"].get<std::string>().find("at input 3x640"), std::string::npos) << e.dump();
  e = Post("/v1/tasks", {{"model", "resnet50"}, {"input_shape", "3xabc"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("is not dims joined by 'x'"), std::string::npos) << e.dump();
  e = Post("/v1/tasks", {{"model", "resnet50"}, {"input_shape", "3x224x224"}, {"input_size", 640}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("give one of them"), std::string::npos) << e.dump();
  // A YOLOv8 export is fixed at 640: a stated 224 that cannot be priced says so and why.
  e = Post("/v1/tasks", {{"model", "yolov8n"}, {"input_size", 224}}, &status);
  if (status == 400) {
    EXPECT_NE(e["error"]["message"].get<std::string>().find("at input 3x224x224"), std::string::npos) << e.dump();
    EXPECT_NE(e["error"]["hint"].get<std::string>().find("declares input 3x640x640"), std::string::npos) << e.dump();
  } else {
    EXPECT_EQ(status, 201) << e.dump();
  }
}

TEST_F(InputShapeTest, ExtenderPricesPodsAtTheirModelsInput) {
  // Before: a YOLO pod failed every node with the 224-px reshape error.
  auto f = extender_->Filter(json{{"Pod", Pod("yolo", {{"hase.io/model", "yolov8n"}, {"hase.io/batch", "1"}})},
                                  {"NodeNames", {"a", "b"}}}.dump());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)["NodeNames"], json({"a", "b"})) << f->dump();
  EXPECT_EQ((*f)["FailedAndUnresolvableNodes"], json::object()) << f->dump();
  auto p640 = extender_->Prioritize(json{{"Pod", Pod("y640", {{"hase.io/model", "yolov8n"}})}, {"NodeNames", {"a", "b"}}}.dump());
  ASSERT_TRUE(p640.ok());
  EXPECT_GT((*p640)[0]["Score"].get<int>(), 0) << p640->dump();
  // The annotation states the input; resnet50 at 288 finishes later than at its own 224 on
  // every GPU (what filter and prioritize rank by).
  auto own = daemon_->WithInputShape(*TaskSpecFromPod(Pod("r224", {{"hase.io/model", "resnet50"}, {"hase.io/num-batches", "100"}})));
  auto big = daemon_->WithInputShape(*TaskSpecFromPod(
      Pod("r288", {{"hase.io/model", "resnet50"}, {"hase.io/num-batches", "100"}, {"hase.io/input-shape", "3x288x288"}})));
  ASSERT_TRUE(own.ok() && big.ok());
  EXPECT_EQ(own->input_shape, (std::vector<int64_t>{3, 224, 224}));
  EXPECT_EQ(big->input_shape, (std::vector<int64_t>{3, 288, 288}));
  TaskRecord r224, r288;
  r224.spec = *own;
  r288.spec = *big;
  const std::vector<double> c224 = daemon_->PredictCompletion(r224.ToSchedTask());
  const std::vector<double> c288 = daemon_->PredictCompletion(r288.ToSchedTask());
  for (size_t g = 0; g < c224.size(); ++g) EXPECT_LT(c224[g], c288[g]) << "gpu " << g;
  // A YOLO pod stating 224 fails every node, naming the input and the model's own.
  f = extender_->Filter(json{{"Pod", Pod("y224", {{"hase.io/model", "yolov8n"}, {"hase.io/input-size", "224"}})},
                             {"NodeNames", {"a"}}}.dump());
  ASSERT_TRUE(f.ok());
  EXPECT_NE((*f)["FailedAndUnresolvableNodes"].value("a", "").find("cannot predict yolov8n at input 3x224x224"),
            std::string::npos) << f->dump();
  // An open-input model in a pod without the annotation fails every node with the reason.
  f = extender_->Filter(json{{"Pod", Pod("open", {{"hase.io/model", "cnn_open"}})}, {"NodeNames", {"a"}}}.dump());
  ASSERT_TRUE(f.ok());
  const std::string why = (*f)["FailedAndUnresolvableNodes"].value("a", "");
  EXPECT_NE(why.find("hase.io/input-shape"), std::string::npos) << f->dump();
  f = extender_->Filter(json{{"Pod", Pod("open2", {{"hase.io/model", "cnn_open"}, {"hase.io/input-shape", "3x256x256"}})},
                             {"NodeNames", {"a"}}}.dump());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)["NodeNames"], json({"a"})) << f->dump();
  // hase.io/input-size keeps working.
  auto spec = TaskSpecFromPod(Pod("r", {{"hase.io/model", "resnet50"}, {"hase.io/input-size", "288"}}));
  ASSERT_TRUE(spec.ok());
  auto priced = daemon_->WithInputShape(*spec);
  ASSERT_TRUE(priced.ok());
  EXPECT_EQ(priced->input_shape, (std::vector<int64_t>{3, 288, 288}));
}

// A row journalled before input_shape existed ("input_size":224 alone) and its retry, now
// resolved to 3x224x224, are the same task (no 409 after an upgrade); another input is not.
TEST(InputShapeJson, OldRowsAndTheirResolvedRetryAreTheSameTask) {
  auto old_row = TaskSpecFromJson(json{{"model", "resnet50"}, {"input_size", 224}});
  ASSERT_TRUE(old_row.ok());
  TaskSpec retry = *old_row;
  retry.input_shape = {3, 224, 224};
  EXPECT_EQ(TaskSpecDifference(*old_row, retry), "");
  retry.input_shape = {1, 224, 224};
  EXPECT_EQ(TaskSpecDifference(*old_row, retry), "input_shape \"3x224x224\" before, \"1x224x224\" now");
  // The journal's form reads back as written.
  auto back = TaskSpecFromJson(TaskSpecToJson(retry));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->input_shape, (std::vector<int64_t>{1, 224, 224}));
  EXPECT_EQ(back->input_size, 224);
}

TEST_F(InputShapeTest, LatencyTableSaysNoShapeWasAssumed) {
  Start(hase::testing::SmallOracle());
  json t = SubmitPlaced({{"model", "resnet50"}});
  EXPECT_TRUE(t["input_shape"].is_null()) << t.dump();  // priced by the table's model row
  EXPECT_TRUE(t["input_size"].is_null()) << t.dump();
  json s = SubmitPlaced({{"model", "resnet50"}, {"input_size", 224}});
  EXPECT_EQ(s["input_shape"], "3x224x224") << s.dump();
}

}  // namespace
}  // namespace hase::service
