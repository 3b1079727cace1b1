// `hase serve --models DIR` with a model that crashes libonnx's shape inference (issue 24): the
// submit answers one 400 naming the crash and the daemon goes on serving. Before, the daemon
// died with SIGFPE on the POST (shape inference ran in its own process).
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "../telemetry/fixture.h"
#include "graph/test_models.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using nlohmann::json;

TEST(ServeBadModel, DaemonSurvivesAModelThatCrashesShapeInference) {
  const std::string dir = hase::testing::FreshDir("badmodel");
  std::filesystem::create_directories(dir + "/models");
  std::filesystem::copy_file(hase::testing::SourceDir() + "/models/resnet18.onnx",
                             dir + "/models/resnet18.onnx");
  // Split without outputs: ONNX 1.12's Split inference divides by the output count (SIGFPE).
  hase::testing::ModelBuilder b(17);
  b.Input("x", {"N", "3", "224", "224"});
  hase::testing::ModelBuilder::Int(b.Node("Split", {"x"}, {}), "axis", 0);
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  std::ofstream(dir + "/models/crasher.onnx", std::ios::binary) << b.model().SerializeAsString();
  std::ofstream(dir + "/cluster.yaml") << "name: t\nnodes:\n  - name: a\n    gpus:\n"
                                          "      - {type: T4, count: 1}\n";

  const std::string out = dir + "/serve.out";
  auto r = hase::testing::RunCommand("(exec " + hase::testing::HaseBin() + " serve --config " + dir +
                                     "/cluster.yaml --listen 127.0.0.1:0 --state " + dir +
                                     "/state --models " + dir + "/models > " + out + " 2>&1) & echo $! > " +
                                     dir + "/pid");
  ASSERT_EQ(r.exit_code, 0);
  int port = 0;
  for (int i = 0; i < 1500 && port == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::string text = hase::testing::ReadFileForTest(out);
    const size_t p = text.find("listening on 127.0.0.1:");
    if (p != std::string::npos) port = std::atoi(text.c_str() + p + 23);
  }
  const int pid = std::atoi(hase::testing::ReadFileForTest(dir + "/pid").c_str());
  ASSERT_GT(port, 0) << hase::testing::ReadFileForTest(out);

  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  auto bad = c.Post("/v1/tasks", R"({"model":"crasher","batch_size":1,"num_batches":1})",
                    "application/json");
  ASSERT_TRUE(bad) << "no answer: the daemon died? " << hase::testing::ReadFileForTest(out);
  EXPECT_EQ(bad->status, 400) << bad->body;
  const json err = json::parse(bad->body)["error"];
  // Priced at the input the file declares (3x224x224), as every REST task is (issue #22 item 4).
  EXPECT_EQ(err["message"], "model 'crasher' cannot be predicted at input 3x224x224: ONNX shape inference (libonnx) "
                            "crashed (" + hase::testing::CrashSignalName("SIGFPE") + ")") << bad->body;
  EXPECT_FALSE(err["hint"].get<std::string>().empty());
  EXPECT_EQ(::kill(pid, 0), 0) << "hase serve is gone";

  auto good = c.Post("/v1/tasks", R"({"model":"resnet18","batch_size":1,"num_batches":1})",
                     "application/json");
  ASSERT_TRUE(good);
  EXPECT_LT(good->status, 300) << good->body;
  EXPECT_EQ(json::parse(good->body)["model"], "resnet18");

  ::kill(pid, SIGTERM);
  for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::service
