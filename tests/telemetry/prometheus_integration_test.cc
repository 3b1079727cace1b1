// PromLoadSource and the daemon against a REAL Prometheus (Debian's 2.42) started here,
// scraping stand-in dcgm-exporters (fake_dcgm_exporter.h) every second on 127.0.0.1.
//
// Skipped with a message where `prometheus` is not installed (`apt-get install
// --no-install-recommends prometheus`; .ci/run installs it); under CI=true a missing
// Prometheus fails instead. Takes ~10-15 s: Prometheus start (~2 s), first scrapes, and a few
// seconds of pod-label churn to merge.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "../service/service_fixture.h"
#include "fake_dcgm_exporter.h"
#include "fixture.h"
#include "hase/service/daemon.h"
#include "hase/telemetry/http_get.h"
#include "hase/telemetry/prom_api_client.h"
#include "hase/telemetry/prom_load_source.h"
#include "testing.h"
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace hase::telemetry {
namespace {

using hase::testing::FakeDcgmExporter;

std::string FindPrometheus() {
  for (const char* p : {"/usr/bin/prometheus", "/usr/local/bin/prometheus"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 0;
  }
  const int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// A Prometheus process scraping `targets` every second; stopped (SIGTERM, then SIGKILL) on
// destruction.
class Prometheus {
 public:
  Prometheus(const std::string& binary, const std::string& dir, const std::vector<int>& targets) {
    std::filesystem::create_directories(dir + "/data");
    std::ofstream cfg(dir + "/prometheus.yml");
    // scrape_timeout may not exceed scrape_interval (2.42 refuses the config otherwise).
    cfg << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
           "scrape_configs:\n  - job_name: dcgm-exporter\n    static_configs:\n      - targets: [";
    for (size_t i = 0; i < targets.size(); ++i) cfg << (i ? ", " : "") << "'127.0.0.1:" << targets[i] << "'";
    cfg << "]\n";
    cfg.close();
    port_ = FreePort();
    log_ = dir + "/prometheus.log";
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      const std::string config = "--config.file=" + dir + "/prometheus.yml";
      const std::string data = "--storage.tsdb.path=" + dir + "/data";
      const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
      execl(binary.c_str(), binary.c_str(), config.c_str(), data.c_str(), listen.c_str(), "--log.level=warn",
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Prometheus() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {  // bounded: 10 s
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string Log() const {
    std::ifstream f(log_);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_;
};

// Polls `ok` every 200 ms for at most `limit_s`.
template <typename F>
bool WaitFor(double limit_s, F ok) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return ok();
}

double Scalar(const PromApiClient& c, const std::string& q) {
  auto r = c.Query(q);
  if (!r.ok() || r->empty()) return -1;
  return (*r)[0].value;
}

TEST(PrometheusIntegration, LoadFromARealPrometheusAcrossPodChurn) {
  const std::string binary = FindPrometheus();
  if (binary.empty()) {
    if (hase::testing::InCi()) FAIL() << "prometheus is not installed (CI=true): .ci/run installs it";
    GTEST_SKIP() << "prometheus not installed: apt-get install --no-install-recommends prometheus "
                    "(with /usr/sbin/policy-rc.d exiting 101, so no service starts on :9090)";
  }
  // Node a: 2 x A100. GPU 0 runs pods that come and go every second (a new series each time),
  // its activity 0.2 under even pods and 0.6 under odd ones; GPU 1 is busy with foreign work
  // (0.9) and holds 30 000 MiB. Node b's exporter runs without host networking: its Hostname
  // label is "localhost", which a --gpu-node UUID map resolves.
  FakeDcgmExporter::Gpu churn;
  churn.uuid = "GPU-a0";
  churn.pod_flip_s = 1;
  churn.pod_values = {0.2, 0.6};
  // DRAM_ACTIVE (on in dcgm-exporter's default counters; missing would be degraded) is 0 here.
  churn.gauges = {{"DCGM_FI_DEV_FB_USED", 1000}, {"DCGM_FI_DEV_FB_FREE", 39960}, {"DCGM_FI_DEV_GPU_UTIL", 40},
                  {"DCGM_FI_PROF_DRAM_ACTIVE", 0}};
  FakeDcgmExporter::Gpu busy;
  busy.uuid = "GPU-a1";
  busy.gauges = {{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.9}, {"DCGM_FI_DEV_FB_USED", 30000}, {"DCGM_FI_DEV_FB_FREE", 10960},
                 {"DCGM_FI_DEV_GPU_UTIL", 90}, {"DCGM_FI_DEV_SM_CLOCK", 1410}, {"DCGM_FI_PROF_DRAM_ACTIVE", 0}};
  FakeDcgmExporter::Gpu t4;
  t4.model_name = "Tesla T4";
  t4.uuid = "GPU-b0";
  t4.gauges = {{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.0}, {"DCGM_FI_DEV_FB_USED", 4294967295.0},  // a blank
               {"DCGM_FI_DEV_FB_FREE", 15000}, {"DCGM_FI_PROF_DRAM_ACTIVE", 0}};
  FakeDcgmExporter node_a("a", {churn, busy});
  FakeDcgmExporter node_b("localhost", {t4});
  const std::string dir = hase::testing::FreshDir("prom");
  Prometheus prom(binary, dir, {node_a.port(), node_b.port()});
  PromApiClient client({prom.url(), 2.0});
  ASSERT_TRUE(WaitFor(60, [&] { return Scalar(client, "sum(up)") == 2; }))
      << "Prometheus did not scrape both exporters within 60 s; its log:\n" << prom.Log();
  // Let GPU 0 go through at least 3 pods inside the window.
  constexpr double kWindow = 8;
  ASSERT_TRUE(WaitFor(30, [&] {
    return Scalar(client, "count(count_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-a0\"}[8s]))") >= 3;
  })) << "no pod churn seen in Prometheus";

  PromLoadSourceOptions po;
  po.base_url = prom.url();
  po.selector = "{job=\"dcgm-exporter\"}";
  po.window_s = kWindow;
  po.nodes.nodes = {"a", "b"};
  po.nodes.uuid_to_node = {{"GPU-b0", "b"}};
  PromLoadSource source(po);
  Status st = source.RefreshOnce();
  ASSERT_TRUE(st.ok()) << st.ToString();
  const double now = WallClockSeconds();
  std::vector<GpuObservation> all = source.table().All(now);
  ASSERT_EQ(all.size(), 3u);  // the churning GPU is one GPU, not one per pod
  auto a0 = source.table().Get({"a", 0}, now);
  auto a1 = source.table().Get({"a", 1}, now);
  auto b0 = source.table().Get({"b", 0}, now);
  ASSERT_TRUE(a0 && a1 && b0);
  // Sample-weighted over pods 0.2 / 0.6: strictly between, whatever the split.
  ASSERT_TRUE(a0->load.gr_engine_active.has_value());
  EXPECT_GT(*a0->load.gr_engine_active, 0.2 + 1e-9);
  EXPECT_LT(*a0->load.gr_engine_active, 0.6 - 1e-9);
  EXPECT_DOUBLE_EQ(*a0->load.fb_used_mib, 1000);
  EXPECT_DOUBLE_EQ(*a1->load.gr_engine_active, 0.9);
  EXPECT_DOUBLE_EQ(*a1->load.gpu_util, 0.9);
  EXPECT_DOUBLE_EQ(*a1->load.fb_used_mib, 30000);
  EXPECT_DOUBLE_EQ(*a1->load.sm_clock_mhz, 1410);
  EXPECT_EQ(a1->uuid, "GPU-a1");
  EXPECT_EQ(a1->model_name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(b0->host_label, "localhost");
  EXPECT_FALSE(b0->load.fb_used_mib.has_value());  // 4294967295: missing, not 4 PiB
  EXPECT_DOUBLE_EQ(*b0->load.fb_free_mib, 15000);
  // Every field hase reads is named when missing (SM_ACTIVE is off here), not degraded.
  TelemetryHealth h = source.Health();
  EXPECT_FALSE(h.degraded) << (h.reasons.empty() ? "" : h.reasons[0]);
  std::string notes;
  for (const std::string& n : h.notes) notes += n + "\n";
  EXPECT_NE(notes.find("DCGM_FI_PROF_SM_ACTIVE not reported by 3 of 3 GPUs"), std::string::npos) << notes;

  // The daemon on this source: the busy A100 is avoided, DCGM memory is shown and enforced.
  {
    const std::string state = dir + "/state";
    hase::testing::FakeClock clock;
    clock.now = now;
    service::DaemonOptions o;
    o.state_dir = state;
    o.now_s = clock.Fn();
    o.tick_s = 3600;
    o.store.synchronous_full = false;
    auto d = service::Daemon::Create(hase::testing::SmallCluster(), hase::testing::SmallOracle(), o, &source);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_TRUE((*d)->Start().ok());
    service::TaskSpec big;
    big.model = "bigmodel";  // 30 000 MiB: fits only an A100, and only GPU 0 has the room now
    auto t = (*d)->Submit(big);
    ASSERT_TRUE(t.ok());
    (*d)->RunPassForTest();
    EXPECT_EQ((*d)->Get(t->record.id)->gpu, 0);
    auto gpus = (*d)->Gpus();
    EXPECT_EQ(gpus[1].memory_used_source, "dcgm");
    EXPECT_DOUBLE_EQ(gpus[1].memory_used_mib, 30000);
    EXPECT_DOUBLE_EQ(gpus[1].memory_foreign_mib, 30000);
    EXPECT_TRUE(gpus[2].load_used);
    (*d)->Stop();
  }

  // A bad selector: Prometheus's own message (HTTP 400, errorType bad_data).
  PromLoadSourceOptions bad = po;
  bad.selector = "{job=~\"(\"}";
  PromLoadSource refused(bad);
  Status e = refused.RefreshOnce();
  EXPECT_TRUE(e.IsInvalidArgument()) << e.ToString();
  EXPECT_NE(e.message().find("Prometheus answered HTTP 400 (bad_data)"), std::string::npos) << e.ToString();
  EXPECT_TRUE(refused.Health().degraded);

  // `hase serve --prometheus`: a bad --selector stops start-up with Prometheus's message; a
  // good one serves the live load on /v1/gpus.
  {
    std::ofstream(dir + "/cluster.yaml") << "name: prom\nnodes:\n  - name: a\n    gpus:\n"
                                            "      - {type: A100-SXM4-40GB, count: 2}\n"
                                            "  - name: b\n    gpus:\n      - {type: T4, count: 1}\n";
    std::ofstream(dir + "/latency.csv") << "resnet50,A100-SXM4-40GB,10,0.8,2000\nresnet50,Tesla T4,40,0.8,2000\n";
    const std::string serve = hase::testing::HaseBin() + " serve --config " + dir + "/cluster.yaml --latency-table " +
                              dir + "/latency.csv --state " + dir + "/serve-state --listen 127.0.0.1:0 --prometheus " +
                              prom.url();
    auto r = hase::testing::RunCommand(serve + " --selector '{job=~\"(\"}'");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("Prometheus answered HTTP 400 (bad_data)"), std::string::npos) << r.err;
    const std::string out = dir + "/serve.out";
    r = hase::testing::RunCommand("(exec " + serve + " --gpu-node GPU-b0=b --prometheus-window 8 > " + out +
                                  " 2>&1) & echo $! > " + dir + "/serve.pid");
    ASSERT_EQ(r.exit_code, 0);
    int port = 0;
    for (int i = 0; i < 1500 && port == 0; ++i) {  // bounded: 15 s
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const std::string text = hase::testing::ReadFileForTest(out);
      if (size_t p = text.find("listening on 127.0.0.1:"); p != std::string::npos) port = std::atoi(text.c_str() + p + 23);
    }
    const int pid = std::atoi(hase::testing::ReadFileForTest(dir + "/serve.pid").c_str());
    ASSERT_GT(port, 0) << hase::testing::ReadFileForTest(out);
    httplib::Client c("127.0.0.1", port);
    auto res = c.Get("/v1/gpus");
    ASSERT_TRUE(res);
    auto gpus = nlohmann::json::parse(res->body)["gpus"];
    EXPECT_EQ(gpus[1]["live"]["uuid"], "GPU-a1") << res->body;
    EXPECT_EQ(gpus[1]["memory_used_mib"], 30000) << res->body;
    EXPECT_EQ(gpus[2]["live"]["host_label"], "localhost") << res->body;
    res = c.Get("/healthz");
    ASSERT_TRUE(res);
    EXPECT_NE(res->body.find("DCGM_FI_PROF_SM_ACTIVE not reported"), std::string::npos) << res->body;
    if (pid > 0) kill(pid, SIGTERM);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hase::telemetry
