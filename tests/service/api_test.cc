// The REST API and the Kubernetes extender over real HTTP on 127.0.0.1 (port picked at runtime).
#include "hase/service/api_server.h"

#include <filesystem>

#include <gtest/gtest.h>
#include <httplib.h>

#include "../telemetry/fixture.h"
#include "../telemetry/http_stub.h"
#include "hase/service/kube_backend.h"
#include "hase/telemetry/dcgm_scraper.h"
#include "hase/telemetry/prom_text.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

using nlohmann::json;

std::string Fixture(const std::string& name) {
  return hase::testing::ReadFileForTest(hase::testing::SourceDir() + "/tests/data/service/" + name);
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = hase::testing::FreshDir("api");
    DaemonOptions o;
    o.state_dir = dir_;
    o.policy = "hase";
    o.tick_s = 0.05;
    o.store.synchronous_full = false;
    kube_.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu_);
      bindings_.push_back(json::parse(req.body));
      binding_paths_.push_back(req.path);
      res.status = 201;
      res.set_content("{}", "application/json");
    });
    kube_port_ = kube_.bind_to_any_port("127.0.0.1");
    kube_thread_ = std::thread([this] { kube_.listen_after_bind(); });
    // Kubernetes is the backend: the extender's /bind posts the Binding through it.
    KubeBackendOptions ko;
    ko.client = {"http://127.0.0.1:" + std::to_string(kube_port_), "", "", 2};
    auto kube = KubeBackend::Create(ko);
    ASSERT_TRUE(kube.ok()) << kube.status().ToString();
    auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, nullptr, std::move(kube).value());
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(*d);
    ASSERT_TRUE(daemon_->Start().ok());
    extender_ = std::make_unique<Extender>(*daemon_);
    api_ = std::make_unique<ApiServer>(*daemon_, *extender_);
    auto port = api_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    port_ = *port;
    api_->Start();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(5, 0);
  }
  void TearDown() override {
    api_->Stop();
    kube_.stop();
    kube_thread_.join();
    daemon_->Stop();
    std::filesystem::remove_all(dir_);
  }
  json Post(const std::string& path, const std::string& body, int* status = nullptr) {
    auto r = client_->Post(path.c_str(), body, "application/json");
    EXPECT_TRUE(r);
    if (!r) return json();
    if (status) *status = r->status;
    return json::parse(r->body, nullptr, false);
  }
  json Get(const std::string& path, int* status = nullptr) {
    auto r = client_->Get(path.c_str());
    EXPECT_TRUE(r);
    if (!r) return json();
    if (status) *status = r->status;
    return json::parse(r->body, nullptr, false);
  }
  // Waits (bounded: 200 × 10 ms) until task `id` leaves `queued`.
  json WaitPlaced(int64_t id) {
    json t;
    for (int i = 0; i < 200; ++i) {
      t = Get("/v1/tasks/" + std::to_string(id));
      if (t["state"] != "queued") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return t;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
  std::unique_ptr<Extender> extender_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
  httplib::Server kube_;
  int kube_port_ = 0;
  std::thread kube_thread_;
  std::mutex mu_;
  std::vector<json> bindings_;
  std::vector<std::string> binding_paths_;
};

TEST_F(ApiTest, SubmitGetListCancelAndErrors) {
  int status = 0;
  json t = Post("/v1/tasks", R"({"key":"c-1","model":"resnet50","batch_size":8,"samples":800})", &status);
  EXPECT_EQ(status, 201);
  EXPECT_EQ(t["num_batches"], 100);
  const int64_t id = t["id"];
  json again = Post("/v1/tasks", R"({"key":"c-1","model":"resnet50","batch_size":8,"samples":800})", &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(again["id"], id);
  json placed = WaitPlaced(id);
  EXPECT_EQ(placed["state"], "running");
  EXPECT_EQ(placed["gpu"]["node"], "a");
  EXPECT_DOUBLE_EQ(placed["predicted"]["isolated_ms"].get<double>(), 1000.0);
  EXPECT_NEAR(placed["predicted"]["runtime_s"].get<double>(), 1.0, 1e-6);
  EXPECT_TRUE(placed["actual"].is_null());
  json list = Get("/v1/tasks?state=running");
  EXPECT_EQ(list["tasks"].size(), 1u);
  auto del = client_->Delete(("/v1/tasks/" + std::to_string(id)).c_str());
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
  EXPECT_EQ(json::parse(del->body)["state"], "cancelled");
  del = client_->Delete(("/v1/tasks/" + std::to_string(id)).c_str());
  EXPECT_EQ(del->status, 409);
  EXPECT_EQ(json::parse(del->body)["error"]["code"], "conflict");
  json err = Get("/v1/tasks/424242", &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(err["error"]["code"], "not found");
  Post("/v1/tasks", "{not json", &status);
  EXPECT_EQ(status, 400);
  err = Post("/v1/tasks", R"({"model":"resnet50","batch_size":-1})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(err["error"]["where"].get<std::string>().find("batch_size"), std::string::npos);
  Get("/v1/tasks?state=sleeping", &status);
  EXPECT_EQ(status, 400);
}

// Issue #15 (1, 6): a misspelt field is a 400 naming it (it used to run 1 batch), an
// overflowing count a 400 (it used to be journalled and brick the restart), a 10 MB body a 413
// before it is parsed; nothing of them is journalled.
TEST_F(ApiTest, BadBodiesAreRefusedAtTheDoor) {
  int status = 0;
  json e = Post("/v1/tasks", R"({"model":"resnet50","num_batchs":5})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(e.dump().find("num_batchs"), std::string::npos) << e.dump();
  Post("/v1/tasks", R"({"model":"resnet18","batch_size":2,"samples":9223372036854775807})", &status);
  EXPECT_EQ(status, 400);
  Post("/v1/tasks", R"({"model":"../../../../etc/passwd"})", &status);
  EXPECT_EQ(status, 400);
  auto big = client_->Post("/v1/tasks", std::string(10 << 20, ' '), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(Get("/v1/tasks")["tasks"].size(), 0u);
}

// New-user trial: "batch_size":"8" was accepted. Every typed field of every POST body is a 400
// naming the field, the type it must have and what came; nothing is journalled.
TEST_F(ApiTest, WrongTypesAre400NamingFieldAndExpectedType) {
  int status = 0;
  json e = Post("/v1/tasks", R"({"model":"resnet50","batch_size":"8"})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["code"], "invalid argument");
  EXPECT_EQ(e["error"]["where"], "task field 'batch_size'");
  EXPECT_EQ(e["error"]["message"], "must be an integer (a JSON number), not a string (\"8\")");
  for (const char* field : {"batch_size", "input_size", "num_batches", "samples", "priority", "gpus"}) {
    for (const char* value : {R"("1")", "true", "[1]", R"({"n":1})"}) {
      const std::string body = std::string(R"({"model":"resnet50",")") + field + "\":" + value + "}";
      for (const char* path : {"/v1/tasks", "/v1/advise"}) {
        e = Post(path, body, &status);
        EXPECT_EQ(status, 400) << path << " " << body;
        EXPECT_EQ(e["error"]["where"], std::string("task field '") + field + "'") << body;
        EXPECT_NE(e["error"]["message"].get<std::string>().find("must be an integer"), std::string::npos) << e.dump();
      }
    }
  }
  e = Post("/v1/tasks", R"({"model":"resnet50","batch_size":2.5})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"], "must be an integer, not a number (2.5)");
  e = Post("/v1/tasks", R"({"model":"resnet50","memory_mib":"100"})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"], "must be a number (MiB), not a string (\"100\")");
  e = Post("/v1/tasks", R"({"model":5})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "task field 'model'");
  EXPECT_EQ(e["error"]["message"], "must be a string, not a number (5)");
  e = Post("/v1/tasks", R"({"model":"resnet50","key":false})", &status);
  EXPECT_EQ(e["error"]["message"], "must be a string, not a boolean (false)");
  e = Post("/v1/tasks", R"(["resnet50"])", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"], "task body must be a JSON object, not an array");
  EXPECT_EQ(Get("/v1/tasks")["tasks"].size(), 0u);
  // The small bodies: /complete's exit_code, /fail's reason; unknown fields there too.
  json t = Post("/v1/tasks", R"({"model":"resnet50","num_batches":10})", &status);
  ASSERT_EQ(status, 201);
  const std::string complete = "/v1/tasks/" + std::to_string(t["id"].get<int64_t>()) + "/complete";
  e = Post(complete, R"({"exit_code":"0"})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "field 'exit_code'");
  EXPECT_EQ(e["error"]["message"], "must be an integer, not a string (\"0\")");
  e = Post(complete, R"({"exit_code":4294967296})", &status);
  EXPECT_EQ(status, 400);
  e = Post(complete, R"({"exitcode":0})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "field 'exitcode'");
  EXPECT_EQ(e["error"]["hint"], "the fields are: exit_code");
  e = Post("/v1/gpus/2/fail", R"({"reason":48})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "field 'reason'");
  EXPECT_EQ(e["error"]["message"], "must be a string, not a number (48)");
  Post("/v1/nodes/b/fail", "not json", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(Get("/v1/gpus")["gpus"][2]["health"], "ok");  // none of them failed it
  // The daemon's own pass binds the task (tick 50 ms): under load it may not have run yet.
  EXPECT_EQ(WaitPlaced(t["id"].get<int64_t>())["state"], "running");
  Post(complete, R"({"exit_code":3})", &status);
  EXPECT_EQ(status, 200);
}

// New-user trial: {"model":"a","model":"b"} was accepted, the last copy winning. A key twice in
// any object of any POST body is a 400 naming the key and the object; not-JSON says where.
TEST_F(ApiTest, DuplicateKeysAre400NamingTheKeyAndTheObject) {
  int status = 0;
  json e = Post("/v1/tasks", R"({"model":"resnet50","model":"vgg16"})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"], "duplicate key \"model\" in task body");
  EXPECT_EQ(e["error"]["where"], "body");
  EXPECT_NE(e["error"]["hint"].get<std::string>().find("send each key once"), std::string::npos);
  e = Post("/v1/advise", R"({"model":"resnet50","num_batches":1,"num_batches":2})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"], "duplicate key \"num_batches\" in task body");
  EXPECT_EQ(Get("/v1/tasks")["tasks"].size(), 0u);
  json t = Post("/v1/tasks", R"({"model":"resnet50","num_batches":10})", &status);
  ASSERT_EQ(status, 201);
  e = Post("/v1/tasks/" + std::to_string(t["id"].get<int64_t>()) + "/complete", R"({"exit_code":0,"exit_code":1})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["message"], "duplicate key \"exit_code\" in body");
  // Nested objects and arrays: the path of the object holding the key twice.
  e = Post("/filter", R"({"Pod":{"metadata":{"name":"p","name":"q"}},"NodeNames":["a"]})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "body /Pod/metadata");
  EXPECT_EQ(e["error"]["message"], "duplicate key \"name\" in filter body");
  e = Post("/prioritize", R"({"NodeNames":["a"],"Pod":{"spec":{"containers":[{"name":"c"},[1,{"x":1}],{"name":"c","name":"d"}]}}})",
           &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "body /Pod/spec/containers/2");
  e = Post("/bind", R"({"PodName":"p","PodName":"q","Node":"a"})", &status);
  EXPECT_EQ(status, 400);
  // The same key in different objects is no duplicate.
  json f = Post("/filter", R"({"Pod":{"metadata":{"name":"web"},"spec":{"name":"x"}},"NodeNames":["a"],"name":1})", &status);
  EXPECT_EQ(status, 200) << f.dump();
  EXPECT_EQ(f["NodeNames"], json::array({"a"}));
  // Not JSON: the parser's line and column.
  e = Post("/v1/tasks", "{\"model\":\n  resnet50}", &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("task body is not JSON: "), std::string::npos) << e.dump();
  EXPECT_NE(e["error"]["message"].get<std::string>().find("line 2, column 3"), std::string::npos) << e.dump();
}

// New-user trial: ?limit=-1 was accepted (wrapped to 10000), as was 10^12 (clamped). Each bad
// limit is a 400 giving the valid range; the bounds themselves are fine.
TEST_F(ApiTest, ListLimitOutsideOneToTenThousandIs400WithTheRange) {
  int status = 0;
  for (int i = 0; i < 3; ++i) Post("/v1/tasks", R"({"model":"resnet50","num_batches":10})", &status);
  for (const char* bad : {"-1", "0", "abc", "10001", "1000000000000", "99999999999999999999999", "1e3", "", "5x", "+5"}) {
    json e = Get(std::string("/v1/tasks?limit=") + bad, &status);
    EXPECT_EQ(status, 400) << bad;
    EXPECT_EQ(e["error"]["where"], "query parameter 'limit'") << bad;
    EXPECT_EQ(e["error"]["message"], std::string("limit must be a whole number from 1 to 10000, not '") + bad + "'");
  }
  EXPECT_EQ(Get("/v1/tasks?limit=2", &status)["tasks"].size(), 2u);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(Get("/v1/tasks?limit=10000&state=queued", &status)["tasks"].size() +
                Get("/v1/tasks?limit=1")["tasks"].size(),
            Get("/v1/tasks?state=queued")["tasks"].size() + 1);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(Get("/v1/tasks")["tasks"].size(), 3u);
}

// New-user trial: an idempotency key reused with another body silently returned the first task.
// Now 409 naming the key, the task and what differs; the same task (even written as samples
// instead of num_batches) still gets the first task with 200.
TEST_F(ApiTest, IdempotencyKeyReusedForAnotherBodyIs409) {
  int status = 0;
  json t = Post("/v1/tasks", R"({"key":"k-9","model":"resnet50","batch_size":8,"num_batches":100,"command":"run a"})",
                &status);
  ASSERT_EQ(status, 201);
  const int64_t id = t["id"];
  json same = Post("/v1/tasks", R"({"command":"run a","num_batches":100,"batch_size":8,"model":"resnet50","key":"k-9"})",
                   &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(same["id"], id);
  same = Post("/v1/tasks", R"({"key":"k-9","model":"resnet50","batch_size":8,"samples":800,"command":"run a"})", &status);
  EXPECT_EQ(status, 200);  // 800 samples of 8 = 100 batches: the same task
  EXPECT_EQ(same["id"], id);
  json e = Post("/v1/tasks", R"({"key":"k-9","model":"resnet50","batch_size":16,"num_batches":100,"command":"run b"})",
                &status);
  EXPECT_EQ(status, 409);
  EXPECT_EQ(e["error"]["code"], "conflict");
  EXPECT_EQ(e["error"]["where"], "task field 'key'");
  EXPECT_EQ(e["error"]["message"], "idempotency key 'k-9' was first used for task " + std::to_string(id) +
                                       " with another body (batch_size 8 before, 16 now; command \"run a\" before, "
                                       "\"run b\" now)");
  EXPECT_NE(e["error"]["hint"].get<std::string>().find("use a new key"), std::string::npos);
  // Nothing new was journalled, the first task is unchanged.
  json list = Get("/v1/tasks");
  ASSERT_EQ(list["tasks"].size(), 1u);
  EXPECT_EQ(list["tasks"][0]["batch_size"], 8);
  EXPECT_EQ(list["tasks"][0]["command"], "run a");
}

// Kubernetes annotations and quantities are strings by schema: "8" is read as 8 there, and
// anything not a whole number is an Error naming the pod and the annotation or resource.
TEST(ExtenderTypes, AnnotationsAndQuantitiesAreIntegersOrAnError) {
  auto pod = [](json annotations, json gpu) {
    return json{{"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u"}, {"annotations", annotations}}},
                {"spec", {{"containers", {{{"resources", {{"limits", {{"nvidia.com/gpu", gpu}}}}}}}}}}};
  };
  Result<TaskSpec> s = TaskSpecFromPod(pod({{"hase.io/model", "resnet50"}, {"hase.io/batch", "8"},
                                            {"hase.io/samples", "800"}}, "1"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->batch_size, 8);
  EXPECT_EQ(s->num_batches, 100);
  EXPECT_EQ(s->gpus, 1);
  for (const char* bad : {"x", "8x", "", "+8", " 8", "1e3"}) {
    s = TaskSpecFromPod(pod({{"hase.io/model", "resnet50"}, {"hase.io/batch", bad}}, "1"));
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(s.status().IsInvalidArgument());
    EXPECT_EQ(s.status().where(), "pod ns/p annotation hase.io/batch") << bad;
  }
  s = TaskSpecFromPod(pod({{"hase.io/model", "resnet50"}}, "two"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().where(), "pod ns/p resources.limits nvidia.com/gpu");
  EXPECT_EQ(s.status().message(), "must be a whole, non-negative number, not a string (\"two\")");
  EXPECT_FALSE(TaskSpecFromPod(pod({{"hase.io/model", "resnet50"}}, "1.5")).ok());
  EXPECT_FALSE(TaskSpecFromPod(pod({{"hase.io/model", "resnet50"}}, -1)).ok());
  EXPECT_EQ(TaskSpecFromPod(pod({{"hase.io/model", "resnet50"}}, 2))->gpus, 2);
}

TEST_F(ApiTest, GpusMetricsHealthAndFailure) {
  json t = Post("/v1/tasks", R"({"model":"vgg16","num_batches":50})");
  WaitPlaced(t["id"]);
  json g = Get("/v1/gpus");
  ASSERT_EQ(g["gpus"].size(), 3u);
  EXPECT_EQ(g["policy"], "hase");
  EXPECT_EQ(g["gpus"][2]["type"], "T4");
  EXPECT_EQ(g["gpus"][0]["running"], 1);
  EXPECT_TRUE(g["gpus"][0]["live"].is_null());  // no telemetry configured
  auto m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
  auto parsed = telemetry::ParsePromText(m->body);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  bool saw_hist = false;
  for (const auto& f : parsed->families) saw_hist = saw_hist || (f.name == "hase_decision_latency_seconds" && f.type == "histogram");
  EXPECT_TRUE(saw_hist);
  json h = Get("/healthz");
  EXPECT_EQ(h["status"], "ok");
  json f = Post("/v1/gpus/0/fail", R"({"reason":"XID 48"})");
  EXPECT_EQ(f["requeued"], 1);
  t = WaitPlaced(t["id"]);
  EXPECT_EQ(t["gpu"]["id"], 1);  // re-placed on the other A100
  EXPECT_EQ(t["attempts"], 2);
  g = Get("/v1/gpus");
  EXPECT_EQ(g["gpus"][0]["health"], "failed");
  int status = 0;
  Post("/v1/gpus/99999999999999999999/fail", "{}", &status);  // beyond int64: 400, never a 500
  EXPECT_EQ(status, 400);
  Post("/v1/gpus/4294967296/recover", "{}", &status);  // beyond int: no such GPU
  EXPECT_EQ(status, 404);
  Post("/v1/gpus/9/fail", "{}", &status);
  EXPECT_EQ(status, 404);
  Post("/v1/gpus/0/recover", "{}", &status);
  EXPECT_EQ(status, 200);
}

// Drain over REST: running work stays, nothing new goes there, requeue is explicit, resume
// brings the GPUs back; an outside task renews its lease.
TEST_F(ApiTest, DrainResumeAndHeartbeat) {
  json t = Post("/v1/tasks", R"({"model":"vgg16","num_batches":50})");
  t = WaitPlaced(t["id"]);
  ASSERT_EQ(t["gpu"]["id"], 0);
  json d = Post("/v1/gpus/0/drain", R"({"reason":"swap fan"})");
  EXPECT_EQ(d["drained"], 1);
  EXPECT_EQ(d["requeued"], 0);
  EXPECT_EQ(Get("/v1/tasks/" + std::to_string(t["id"].get<int64_t>()))["state"], "running");
  json g = Get("/v1/gpus");
  EXPECT_EQ(g["gpus"][0]["health"], "drained");
  EXPECT_EQ(g["gpus"][0]["health_reason"], "swap fan");
  EXPECT_TRUE(g["gpus"][1]["health_reason"].is_null());
  json u = Post("/v1/tasks", R"({"model":"vgg16","num_batches":50})");
  u = WaitPlaced(u["id"]);
  EXPECT_NE(u["gpu"]["id"], 0) << u.dump();
  json hb = Post("/v1/tasks/" + std::to_string(t["id"].get<int64_t>()) + "/heartbeat", "{}");
  EXPECT_GT(hb["lease_expires_s"].get<double>(), t["times"]["started_s"].get<double>() + 3000) << hb.dump();
  int status = 0;
  json e = Post("/v1/gpus/0/drain", R"({"requeue":"yes"})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "field 'requeue'") << e.dump();
  Post("/v1/nodes/a/drain", R"({"now":true})", &status);
  EXPECT_EQ(status, 400);
  Post("/v1/nodes/zz/drain", "{}", &status);
  EXPECT_EQ(status, 404);
  // Requeue: the node's running tasks are stopped and placed anew on the T4.
  d = Post("/v1/nodes/a/drain", R"({"reason":"reboot","requeue":true})");
  EXPECT_EQ(d["drained"], 2);
  EXPECT_EQ(d["requeued"], 2);
  t = WaitPlaced(t["id"]);
  EXPECT_EQ(t["gpu"]["node"], "b") << t.dump();
  EXPECT_EQ(t["attempts"], 2);
  json r = Post("/v1/nodes/a/resume", "{}");
  EXPECT_EQ(r["resumed"], 2);
  const json gpus_now = Get("/v1/gpus")["gpus"];  // a copy: a range over a temporary's member dangles
  for (const json& x : gpus_now) EXPECT_EQ(x["health"], "ok") << x.dump();
  Post("/v1/gpus/0/resume", "{}", &status);
  EXPECT_EQ(status, 404);  // neither drained nor failed
  Post("/v1/tasks/999/heartbeat", "{}", &status);
  EXPECT_EQ(status, 404);
}

TEST_F(ApiTest, UnknownModelAndMultiGpuAreRefusedAtTheDoor) {
  int status = 0;
  json e = Post("/v1/tasks", R"({"model":"resnet5","batch_size":8,"num_batches":10})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "model");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("'resnet5' cannot be predicted"), std::string::npos) << e.dump();
  e = Post("/v1/tasks", R"({"model":"resnet50","batch_size":8,"num_batches":10,"gpus":4})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(e["error"]["where"], "gpus");
  EXPECT_EQ(Get("/v1/tasks")["tasks"].size(), 0u);  // nothing journalled
}

// Issue #15 (4): text that is not UTF-8 (an exporter label, a model's node name in a reason)
// made nlohmann-json throw (type_error.316): HTTP 500 from /v1/gpus and /v1/tasks.
TEST(ApiUtf8, NonUtf8TextIsReplacedNeverA500) {
  const std::string dir = hase::testing::FreshDir("api_utf8");
  hase::testing::HttpStub exporter;
  exporter.SetBody("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",Hostname=\"a\",UUID=\"GPU-\xff\xfe\","
                   "modelName=\"NVIDIA \xc3\x28 A100\"} 0.5\n");
  telemetry::DcgmScraperOptions so;
  so.targets = {{exporter.Url(), "a"}};
  so.timeout_s = 1;
  telemetry::DcgmScraper scraper(so);
  ASSERT_TRUE(scraper.ScrapeOnce().ok());
  DaemonOptions o;
  o.state_dir = dir;
  o.tick_s = 3600;
  o.store.synchronous_full = false;
  auto d = Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, &scraper);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->Start().ok());
  Extender ext(**d);
  ApiServer api(**d, ext);
  auto port = api.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  api.Start();
  httplib::Client c("127.0.0.1", *port);
  auto r = c.Get("/v1/gpus");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json g = json::parse(r->body, nullptr, false);
  ASSERT_FALSE(g.is_discarded());
  EXPECT_EQ(g["gpus"][0]["live"]["uuid"], "GPU-\xef\xbf\xbd\xef\xbf\xbd");  // U+FFFD twice
  // A task whose name is not UTF-8 never reaches the journal (the body is not JSON), and the
  // list stays readable.
  const std::string bad = std::string(R"({"model":"resnet50","num_batches":1,"name":"x)") + "\xff" + R"("})";
  EXPECT_EQ(c.Post("/v1/tasks", bad, "application/json")->status, 400);
  EXPECT_EQ(c.Get("/v1/tasks")->status, 200);
  api.Stop();
  (*d)->Stop();
  std::filesystem::remove_all(dir);
}

TEST_F(ApiTest, ExtenderFilterPrioritizeBindNodeNamesForm) {
  const std::string body = Fixture("extender_filter_nodenames.json");
  ASSERT_FALSE(body.empty());
  json f = Post("/filter", body);
  ASSERT_TRUE(f.contains("NodeNames"));
  EXPECT_EQ(f["NodeNames"], json::array({"a", "b"}));
  EXPECT_TRUE(f["Nodes"].is_null());
  EXPECT_EQ(f["Error"], "");
  EXPECT_TRUE(f["FailedAndUnresolvableNodes"].contains("cpu-only-1"));
  // Prioritize: resnet50 × 100 batches: 1.0 s on an idle A100, 4.0 s on the T4 → 10 and 3 (2.5).
  json p = Post("/extender/prioritize", body);
  ASSERT_EQ(p.size(), 3u);
  std::map<std::string, int> score;
  for (const json& hp : p) score[hp["Host"]] = hp["Score"];
  EXPECT_EQ(score["a"], 10);
  EXPECT_EQ(score["b"], 3);  // round(10 × 1.0 / 4.0) = round(2.5) = 3
  EXPECT_EQ(score["cpu-only-1"], 0);
  // Bind: recorded as running on node a's best GPU and posted to the API server.
  json b = Post("/bind", R"({"PodName":"resnet50-infer-7c9d5","PodNamespace":"inference",
                             "PodUID":"5f0e6a3c-1b2d-4e8f-9a7b-3c2d1e0f9a8b","Node":"a"})");
  EXPECT_EQ(b["Error"], "");
  {
    std::lock_guard<std::mutex> l(mu_);
    ASSERT_EQ(bindings_.size(), 1u);
    EXPECT_EQ(binding_paths_[0], "/api/v1/namespaces/inference/pods/resnet50-infer-7c9d5/binding");
    EXPECT_EQ(bindings_[0]["kind"], "Binding");
    EXPECT_EQ(bindings_[0]["target"]["name"], "a");
    EXPECT_EQ(bindings_[0]["metadata"]["uid"], "5f0e6a3c-1b2d-4e8f-9a7b-3c2d1e0f9a8b");
  }
  json tasks = Get("/v1/tasks");
  ASSERT_EQ(tasks["tasks"].size(), 1u);
  EXPECT_EQ(tasks["tasks"][0]["pod"], "inference/resnet50-infer-7c9d5");
  EXPECT_EQ(tasks["tasks"][0]["state"], "running");
  EXPECT_EQ(tasks["tasks"][0]["gpu"]["node"], "a");
  EXPECT_EQ(tasks["tasks"][0]["num_batches"], 100);
  // A retried bind is idempotent (same pod UID): still one task.
  Post("/bind", R"({"podName":"resnet50-infer-7c9d5","podNamespace":"inference",
                    "podUID":"5f0e6a3c-1b2d-4e8f-9a7b-3c2d1e0f9a8b","node":"a"})");
  EXPECT_EQ(Get("/v1/tasks")["tasks"].size(), 1u);
  // Unknown pod.
  b = Post("/bind", R"({"PodName":"ghost","PodNamespace":"x","PodUID":"u","Node":"a"})");
  EXPECT_NE(b["Error"].get<std::string>().find("unknown pod"), std::string::npos);
}

TEST_F(ApiTest, ExtenderFullNodesFormLowerCaseKeys) {
  json f = Post("/filter", Fixture("extender_filter_nodes.json"));
  // bigmodel needs 30000 MiB: the T4 node cannot ever host it.
  ASSERT_TRUE(f["Nodes"].is_object());
  ASSERT_EQ(f["Nodes"]["items"].size(), 1u);
  EXPECT_EQ(f["Nodes"]["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(f["Nodes"]["items"][0]["status"]["allocatable"]["nvidia.com/gpu"], "2");  // as received
  EXPECT_TRUE(f["FailedAndUnresolvableNodes"].contains("b"));
  json p = Post("/prioritize", Fixture("extender_filter_nodes.json"));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0]["Host"], "a");
  EXPECT_EQ(p[0]["Score"], 10);
  EXPECT_EQ(p[1]["Score"], 0);
  // A pod without hase annotations is not hase's: every node passes.
  json plain = Post("/filter", R"({"Pod":{"metadata":{"name":"web"}},"NodeNames":["a","b"]})");
  EXPECT_EQ(plain["NodeNames"].size(), 2u);
  int status = 0;
  Post("/filter", "garbage", &status);
  EXPECT_EQ(status, 400);
  json bad = Post("/filter", R"({"Pod":{"metadata":{"annotations":{"hase.io/model":"resnet50","hase.io/batch":"x"}}},"NodeNames":["a"]})");
  EXPECT_NE(bad["Error"].get<std::string>(), "");
}

}  // namespace
}  // namespace hase::service

namespace hase::service {
namespace {

// POST /v1/advise: where hase would run a task now (what deploy/slurm/job_submit.lua asks),
// with nothing submitted.
TEST_F(ApiTest, AdviseNamesTheGpuOfEarliestCompletionWithoutSubmitting) {
  auto r = client_->Post("/v1/advise", R"({"model":"resnet50","num_batches":100})", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json a = json::parse(r->body);
  EXPECT_EQ(a["gpu"], 0);  // idle A100s tie; the lower id wins
  EXPECT_EQ(a["node"], "a");
  EXPECT_EQ(a["gpu_type"], "A100-SXM4-40GB");
  EXPECT_EQ(a["native"], "");  // no backend: no native name
  EXPECT_GT(a["predicted_end_s"].get<double>(), 0);
  EXPECT_TRUE(daemon_->List(std::nullopt, 10).empty());  // nothing was submitted
  // A model nobody can predict: 400, as POST /v1/tasks; one no GPU can host now: 404.
  auto unknown = client_->Post("/v1/advise", R"({"model":"nosuchmodel"})", "application/json");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 400) << unknown->body;
  EXPECT_NE(unknown->body.find("cannot be predicted"), std::string::npos) << unknown->body;
  auto none = client_->Post("/v1/advise", R"({"model":"resnet50","memory_mib":1000000})", "application/json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404) << none->body;
  // Errors cpp-httplib answers itself carry the JSON error body too (found by a new-user trial).
  auto nope = client_->Get("/v1/nope");
  ASSERT_TRUE(nope);
  EXPECT_EQ(nope->status, 404);
  EXPECT_NE(json::parse(nope->body, nullptr, false)["error"]["message"].get<std::string>().find("no such endpoint"),
            std::string::npos) << nope->body;
  auto big = client_->Post("/v1/tasks", std::string(2 << 20, ' '), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_TRUE(json::parse(big->body, nullptr, false).contains("error")) << big->body;
  auto bad = client_->Post("/v1/advise", R"({"model":"resnet50","num_batchs":3})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
}

}  // namespace
}  // namespace hase::service
