#include "hase/telemetry/dcgm_scraper.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "hase/telemetry/http_get.h"
#include "hase/telemetry/prom_text.h"

namespace hase::telemetry {
namespace {

DcgmScraperOptions WithDefaults(DcgmScraperOptions o) {
  if (!o.now_s) o.now_s = WallClockSeconds;
  return o;
}

}  // namespace

DcgmScraper::DcgmScraper(DcgmScraperOptions options) : options_(WithDefaults(std::move(options))) {
  health_.resize(options_.targets.size());
  unresolved_.resize(options_.targets.size());
  for (size_t i = 0; i < options_.targets.size(); ++i) health_[i].url = options_.targets[i].url;
}

DcgmScraper::~DcgmScraper() { Stop(); }

Status DcgmScraper::ScrapeTargetLocked(size_t i, double now) {
  const ScrapeTarget& t = options_.targets[i];
  Status st;
  int gpus = 0;
  std::vector<std::string> unresolved;
  Result<std::string> body = HttpGet(t.url, options_.timeout_s);
  if (!body.ok()) {
    st = body.status();
  } else {
    Result<PromParseResult> parsed = ParsePromText(*body);
    if (!parsed.ok()) {
      st = parsed.status().WithContext(t.url);
    } else {
      GroupResult g = GroupDcgmSamples(parsed->samples, t.node, now, options_.resolver);
      if (g.gpus.empty()) {
        st = Status::Parse("no DCGM GPU series in the response", t.url,
                           "is this a dcgm-exporter /metrics endpoint?");
      } else {
        for (const GpuObservation& o : g.gpus) gpus += o.key.gpu_instance < 0 ? 1 : 0;
        unresolved = ResolveNodes(g.gpus, options_.nodes, t.node, t.url);
        table_.Update(g.gpus);
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  TargetHealth& h = health_[i];
  h.ok = st.ok();
  if (st.ok()) {
    h.last_error.clear();
    h.last_success_s = now;
    h.consecutive_failures = 0;
    h.gpus = gpus;
    unresolved_[i] = std::move(unresolved);
  } else {
    h.last_error = st.ToString();
    ++h.consecutive_failures;
  }
  return st;
}

Status DcgmScraper::ScrapeOnce() {
  const double now = options_.now_s();
  std::vector<Status> results(options_.targets.size());
  std::vector<std::thread> threads;
  threads.reserve(options_.targets.size());
  for (size_t i = 0; i < options_.targets.size(); ++i) {
    threads.emplace_back([this, i, now, &results] { results[i] = ScrapeTargetLocked(i, now); });
  }
  for (std::thread& th : threads) th.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    scraped_once_ = true;
  }
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

void DcgmScraper::Start() {
  loop_.Start(options_.interval_s, [this] { (void)ScrapeOnce(); });  // failures are recorded in health_
}

void DcgmScraper::Stop() { loop_.Stop(); }

TelemetryHealth DcgmScraper::Health() const {
  const double now = options_.now_s();
  TelemetryHealth h;
  {
    std::lock_guard<std::mutex> lock(mu_);
    h.targets = health_;
    if (!scraped_once_) h.reasons.push_back("telemetry: no scrape finished yet");
    for (const auto& u : unresolved_) h.reasons.insert(h.reasons.end(), u.begin(), u.end());
  }
  for (const TargetHealth& t : h.targets) {
    if (!t.ok && (t.consecutive_failures > 0)) {
      h.reasons.push_back(fmt::format("telemetry: {} failing ({} in a row): {}", t.url,
                                      t.consecutive_failures, t.last_error));
    }
  }
  AddGpuHealth(table_.All(now), options_.stale_after_s, options_.nodes, h);
  return h;
}

}  // namespace hase::telemetry
