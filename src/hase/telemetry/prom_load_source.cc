#include "hase/telemetry/prom_load_source.h"
#include "hase/base/seconds_text.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace hase::telemetry {
namespace {

PromLoadSourceOptions WithDefaults(PromLoadSourceOptions o) {
  if (!o.now_s) o.now_s = WallClockSeconds;
  return o;
}

}  // namespace

PromLoadSource::PromLoadSource(PromLoadSourceOptions options)
    : options_(WithDefaults(std::move(options))), client_({options_.base_url, options_.timeout_s}) {
  health_.url = options_.base_url;
}

PromLoadSource::~PromLoadSource() { Stop(); }

Status PromLoadSource::RefreshOnce() {
  const double now = options_.now_s();
  Result<std::vector<GpuObservation>> got = client_.LoadWindow(options_.window_s, options_.selector, options_.resolver);
  Status st;
  std::vector<std::string> unresolved;
  if (!got.ok()) {
    st = got.status();
  } else if (got->empty()) {
    st = Status::NotFound("no DCGM series in the last " + SecondsText(options_.window_s),
                          options_.base_url + (options_.selector.empty() ? "" : " " + options_.selector),
                          "is Prometheus scraping dcgm-exporter, and does --selector match its series?");
  } else {
    // Dated by our clock (the query's evaluation time is Prometheus's "now").
    for (GpuObservation& g : *got) g.sample_time_s = now;
    unresolved = ResolveNodes(*got, options_.nodes, "", options_.base_url);
    table_.Update(*got);
  }
  std::lock_guard<std::mutex> lock(mu_);
  refreshed_once_ = true;
  health_.ok = st.ok();
  if (st.ok()) {
    health_.last_error.clear();
    health_.last_success_s = now;
    health_.consecutive_failures = 0;
    health_.gpus = 0;
    for (const GpuObservation& o : *got) health_.gpus += o.key.gpu_instance < 0 ? 1 : 0;
    unresolved_ = std::move(unresolved);
  } else {
    health_.last_error = st.ToString();
    ++health_.consecutive_failures;
  }
  return st;
}

void PromLoadSource::Start() {
  loop_.Start(options_.interval_s, [this] { (void)RefreshOnce(); });  // failures are recorded in health_
}

void PromLoadSource::Stop() { loop_.Stop(); }

TelemetryHealth PromLoadSource::Health() const {
  const double now = options_.now_s();
  TelemetryHealth h;
  {
    std::lock_guard<std::mutex> lock(mu_);
    h.targets = {health_};
    if (!refreshed_once_) h.reasons.push_back("telemetry: no Prometheus query finished yet");
    if (!health_.ok && health_.consecutive_failures > 0) {
      h.reasons.push_back(fmt::format("telemetry: Prometheus {} failing ({} in a row): {}", health_.url,
                                      health_.consecutive_failures, health_.last_error));
    }
    h.reasons.insert(h.reasons.end(), unresolved_.begin(), unresolved_.end());
  }
  AddGpuHealth(table_.All(now), options_.stale_after_s, options_.nodes, h);
  return h;
}

}  // namespace hase::telemetry
