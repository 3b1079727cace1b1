// DcgmScraper: polls dcgm-exporter on every node (HTTP GET of its Prometheus text, by default
// http://<node>:9400/metrics) and keeps a GpuLoadTable of the latest LoadSnapshot per GPU.
//
// A failed scrape (refused, timed out, non-200, unparsable body) leaves that node's previous
// observations in place, so their age grows; Health() then reports the scraper degraded.
// Stale values (a timestamped exposition older than stale_after_s) are kept but also reported,
// as is a GPU whose every load field is blank (DCGM's sentinels: profiling off, GPU lost).
// The service keeps scheduling on whatever the table holds (the last good estimate) and falls
// back to analytic-only predictions for GPUs never seen.
//
// Thread-safety: all public methods may be called from any thread. Start() runs one background
// thread that scrapes every interval_s; Stop() (and the destructor) joins it within about
// timeout_s.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/load_source.h"
#include "hase/telemetry/node_map.h"
#include "hase/telemetry/periodic_thread.h"

namespace hase::telemetry {

struct ScrapeTarget {
  std::string url;   // e.g. "http://node1:9400/metrics"
  // The node this exporter runs on (`--dcgm URL=NODE`): names series without a host label,
  // and those whose label names no cluster node (node_map.h).
  std::string node;
};

struct DcgmScraperOptions {
  std::vector<ScrapeTarget> targets;
  // Seconds between scrape rounds. dcgm-exporter refreshes its values every 30 s by default
  // (its -c/--collect-interval is 30000 ms); scraping faster only re-reads the same values.
  double interval_s = 10.0;
  // Connect and read timeout of one GET, seconds. All targets are scraped in parallel.
  double timeout_s = 2.0;
  // An observation older than this is stale and makes Health() degraded. Default: three
  // exporter collect intervals.
  double stale_after_s = 90.0;
  // Maps modelName to a catalog GPU type; may be empty.
  GpuTypeResolver resolver;
  // Cluster nodes and UUID overrides for node resolution; empty: host labels taken as is.
  NodeMap nodes;
  // Wall clock, seconds since the epoch; tests pass a fake. Default: WallClockSeconds.
  std::function<double()> now_s;
};

class DcgmScraper final : public LoadSource {
 public:
  explicit DcgmScraper(DcgmScraperOptions options);
  ~DcgmScraper() override;
  DcgmScraper(const DcgmScraper&) = delete;
  DcgmScraper& operator=(const DcgmScraper&) = delete;

  // Scrapes every target once (in parallel) and updates the table. Returns OK when all
  // succeeded, else the first target's error (the others are still applied).
  Status ScrapeOnce();
  Status RefreshOnce() override { return ScrapeOnce(); }

  // Starts/stops the background loop (idempotent). The first round runs immediately.
  void Start() override;
  void Stop() override;

  const GpuLoadTable& table() const override { return table_; }
  TelemetryHealth Health() const override;
  std::string Kind() const override { return "dcgm-exporter"; }
  double Now() const { return options_.now_s(); }

 private:
  Status ScrapeTargetLocked(size_t i, double now);  // no lock held; writes health_[i] under mu_

  const DcgmScraperOptions options_;
  GpuLoadTable table_;
  mutable std::mutex mu_;
  std::vector<TargetHealth> health_;  // guarded by mu_, one per target
  std::vector<std::vector<std::string>> unresolved_;  // guarded by mu_, per target: last scrape
  bool scraped_once_ = false;         // guarded by mu_
  PeriodicThread loop_;  // last: stopped before the members its rounds use go
};

}  // namespace hase::telemetry
