// FakeDcgmExporter: a stand-in dcgm-exporter for integration tests (no GPU needed) that a real
// Prometheus can scrape. GET /metrics answers text exposition 0.0.4 in dcgm-exporter's shape:
// its metric names, HELP/TYPE lines and labels (gpu, UUID, pci_bus_id, device, modelName,
// Hostname, DCGM_FI_DRIVER_VERSION), one series per GPU and field.
//
// Values are set per GPU by the test (SetGauge); a GPU may carry Kubernetes pod labels that
// change every `pod_flip_s` seconds (a new series each time, as the real exporter does when
// pods come and go), and the value of a churning GPU's activity may differ per pod
// (`pod_values`: pod k reports pod_values[k % size]).
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

namespace hase::testing {

class FakeDcgmExporter {
 public:
  struct Gpu {
    std::string model_name = "NVIDIA A100-SXM4-40GB";
    std::string uuid;
    std::map<std::string, double> gauges;  // DCGM metric name → value
    double pod_flip_s = 0;                 // 0: no pod labels
    std::vector<double> pod_values;        // GR_ENGINE_ACTIVE per pod, cycled (churning GPUs)
  };

  // `port` 0: any free port (port() says which); else that port (a restarted exporter comes
  // back where its scrapers look; port() is 0 when the bind failed).
  FakeDcgmExporter(std::string hostname, std::vector<Gpu> gpus, int port = 0)
      : hostname_(std::move(hostname)), gpus_(std::move(gpus)), t0_(std::chrono::steady_clock::now()) {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      ++scrapes_;
      res.set_content(Render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    port_ = port == 0 ? server_.bind_to_any_port("127.0.0.1") : (server_.bind_to_port("127.0.0.1", port) ? port : 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 400 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeDcgmExporter() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }
  int scrapes() const { return scrapes_; }
  // Pods GPU `i` has had so far (1 without churn).
  int PodsSoFar(size_t i) const { return PodIndex(gpus_[i]) + 1; }

  std::string Render() const {
    // name, type, help — as in dcgm-exporter's default-counters.csv (+ PROF fields enabled).
    static const char* kFields[][3] = {
        {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
        {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
        {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
        {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
        {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
        {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."},
        {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned."},
        {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM."},
        {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."},
        {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data."},
    };
    std::string out;
    for (const auto& f : kFields) {
      bool any = false;
      for (const Gpu& g : gpus_) any = any || g.gauges.count(f[0]) || (!g.pod_values.empty() && std::string(f[0]) == "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
      if (!any) continue;
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f[0], f[2], f[0], f[1]);
      for (size_t i = 0; i < gpus_.size(); ++i) {
        const Gpu& g = gpus_[i];
        double v = 0;
        const int pod = PodIndex(g);
        if (!g.pod_values.empty() && std::string(f[0]) == "DCGM_FI_PROF_GR_ENGINE_ACTIVE") {
          v = g.pod_values[pod % g.pod_values.size()];
        } else if (auto it = g.gauges.find(f[0]); it != g.gauges.end()) {
          v = it->second;
        } else {
          continue;
        }
        std::string labels = fmt::format(
            "gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\","
            "DCGM_FI_DRIVER_VERSION=\"535.104.12\"",
            i, g.uuid, 0x07 + 8 * i, i, g.model_name, hostname_);
        if (g.pod_flip_s > 0) {
          labels += fmt::format(",container=\"triton\",namespace=\"inference\",pod=\"resnet50-{}\"", pod);
        }
        out += fmt::format("{}{{{}}} {}\n", f[0], labels, v);
      }
    }
    return out;
  }

 private:
  int PodIndex(const Gpu& g) const {
    if (g.pod_flip_s <= 0) return 0;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    return static_cast<int>(std::floor(t / g.pod_flip_s));
  }

  const std::string hostname_;
  const std::vector<Gpu> gpus_;
  const std::chrono::steady_clock::time_point t0_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> scrapes_{0};
};

}  // namespace hase::testing
