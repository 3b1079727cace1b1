#include "hase/telemetry/gpu_load_table.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "hase/telemetry/dcgm_fields.h"

namespace hase::telemetry {
namespace {

constexpr size_t kMaxWarnings = 20;

const std::string* HostLabel(const PromSample& s) {
  if (const std::string* h = s.Label("hostname"); h && !h->empty()) return h;
  if (const std::string* h = s.Label("Hostname"); h && !h->empty()) return h;
  return nullptr;
}

}  // namespace

double WallClockSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

GroupResult GroupDcgmSamples(std::span<const PromSample> samples, std::string_view fallback_host,
                             double scrape_time_s, const GpuTypeResolver& resolver) {
  GroupResult out;
  std::map<GpuKey, GpuObservation> by_key;
  auto warn = [&](std::string w) {
    if (out.warnings.size() < kMaxWarnings) out.warnings.push_back(std::move(w));
  };
  for (const PromSample& s : samples) {
    if (s.name.rfind("DCGM_", 0) != 0) continue;  // exporter self-metrics, go_*, process_*
    if (const std::string* mig = s.Label("GPU_I_ID"); mig && !mig->empty()) {
      warn(s.name + ": MIG instance series (GPU_I_ID=" + *mig + ") skipped");
      continue;
    }
    const std::string* gpu = s.Label("gpu");
    int index = -1;
    if (gpu) {
      auto [p, ec] = std::from_chars(gpu->data(), gpu->data() + gpu->size(), index);
      if (ec != std::errc() || p != gpu->data() + gpu->size() || index < 0) index = -1;
    }
    if (index < 0) {
      warn(s.name + ": series without an integer 'gpu' label skipped");
      continue;
    }
    const std::string* host = HostLabel(s);
    GpuKey key{host ? *host : std::string(fallback_host), index};
    auto [it, inserted] = by_key.try_emplace(key);
    GpuObservation& o = it->second;
    if (inserted) {
      o.key = key;
      o.sample_time_s = scrape_time_s;
    }
    if (o.uuid.empty()) {
      if (const std::string* u = s.Label("UUID")) o.uuid = *u;
    }
    if (o.model_name.empty()) {
      if (const std::string* m = s.Label("modelName")) {
        o.model_name = *m;
        if (resolver) o.gpu_type = resolver(*m).value_or("");
      }
    }
    if (SetDcgmField(o.load, s.name, s.value)) {
      ++o.fields;
      if (s.timestamp_ms) {
        double t = static_cast<double>(*s.timestamp_ms) / 1000.0;
        // A sample cannot postdate the scrape that read it: a clock ahead (one exporter stamped
        // year 2100) would otherwise date the GPU in the future, and every later, correct
        // scrape would lose against it (GpuLoadTable::Update keeps the newest): frozen load.
        if (t > scrape_time_s) {
          warn(s.name + ": timestamp after the scrape (exporter clock ahead?): dated at the scrape");
          t = scrape_time_s;
        }
        // The oldest field dates the snapshot; the first timestamped field replaces scrape time.
        if (o.fields == 1 || t < o.sample_time_s) o.sample_time_s = t;
      }
    }
  }
  out.gpus.reserve(by_key.size());
  for (auto& [k, o] : by_key) out.gpus.push_back(std::move(o));
  return out;
}

void GpuLoadTable::Update(std::span<const GpuObservation> gpus) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const GpuObservation& g : gpus) {
    auto it = gpus_.find(g.key);
    if (it == gpus_.end()) {
      gpus_.emplace(g.key, g);
    } else if (g.sample_time_s >= it->second.sample_time_s) {
      it->second = g;
    }
  }
}

std::optional<GpuObservation> GpuLoadTable::Get(const GpuKey& key, double now_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = gpus_.find(key);
  if (it == gpus_.end()) return std::nullopt;
  GpuObservation o = it->second;
  o.load.age_s = std::max(0.0, now_s - o.sample_time_s);
  return o;
}

std::optional<GpuObservation> GpuLoadTable::GetByUuid(std::string_view uuid, double now_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, g] : gpus_) {
    if (g.uuid == uuid) {
      GpuObservation o = g;
      o.load.age_s = std::max(0.0, now_s - o.sample_time_s);
      return o;
    }
  }
  return std::nullopt;
}

std::vector<GpuObservation> GpuLoadTable::All(double now_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<GpuObservation> out;
  out.reserve(gpus_.size());
  for (const auto& [k, g] : gpus_) {
    out.push_back(g);
    out.back().load.age_s = std::max(0.0, now_s - g.sample_time_s);
  }
  return out;
}

}  // namespace hase::telemetry
