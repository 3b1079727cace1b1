// PromLoadSource: live GPU load read from Prometheus's HTTP API (`hase serve --prometheus URL
// [--selector '{…}']`), for clusters that already run dcgm-exporter + Prometheus.
//
// Every interval_s it asks Prometheus for each LoadSnapshot field's sample-weighted mean over
// the last window_s seconds (PromApiClient::LoadWindow: one query per field, series merged by
// the GPU's identity labels, so pod-label churn does not split or drop a GPU), resolves each
// GPU's node (node_map.h) and updates the table. A refused query (HTTP 400 with Prometheus's
// "errorType"/"error") or an unreachable server leaves the previous observations in place and
// makes Health() degraded with Prometheus's own message. A GPU that stops being reported ages
// and turns stale (stale_after_s) as with DcgmScraper.
//
// Thread-safety: all public methods may be called from any thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "hase/telemetry/load_source.h"
#include "hase/telemetry/node_map.h"
#include "hase/telemetry/periodic_thread.h"
#include "hase/telemetry/prom_api_client.h"

namespace hase::telemetry {

struct PromLoadSourceOptions {
  std::string base_url;     // e.g. "http://prometheus:9090"
  std::string selector;     // PromQL label matchers, e.g. `{job="dcgm-exporter"}`; "" = all
  // Averaging window, s. dcgm-exporter refreshes every 30 s by default, so a window under that
  // may hold one sample per series; longer windows smooth more and react later.
  double window_s = 30;
  double interval_s = 10;   // seconds between refreshes
  double timeout_s = 5;     // per query, s
  double stale_after_s = 90;  // an observation older than this makes Health() degraded
  GpuTypeResolver resolver;   // modelName → catalog type; may be empty
  NodeMap nodes;              // cluster nodes and UUID overrides; empty: labels as is
  std::function<double()> now_s;  // wall clock; default WallClockSeconds
};

class PromLoadSource final : public LoadSource {
 public:
  explicit PromLoadSource(PromLoadSourceOptions options);
  ~PromLoadSource() override;
  PromLoadSource(const PromLoadSource&) = delete;
  PromLoadSource& operator=(const PromLoadSource&) = delete;

  // One LoadWindow round. Errors: PromApiClient::Query's (Prometheus's message included).
  Status RefreshOnce() override;
  void Start() override;
  void Stop() override;
  const GpuLoadTable& table() const override { return table_; }
  TelemetryHealth Health() const override;
  std::string Kind() const override { return "prometheus"; }

 private:
  const PromLoadSourceOptions options_;
  const PromApiClient client_;
  GpuLoadTable table_;
  mutable std::mutex mu_;
  TargetHealth health_;                  // guarded by mu_
  std::vector<std::string> unresolved_;  // guarded by mu_: last good round
  bool refreshed_once_ = false;          // guarded by mu_
  PeriodicThread loop_;  // last: stopped before the members its rounds use go
};

}  // namespace hase::telemetry
