#include "hase/telemetry/gpu_load_table.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <iterator>
#include <set>

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
  struct MigPart {
    LoadSnapshot load;
    int slices = 1;
    unsigned mask = 0;
    std::string profile;  // GPU_I_PROFILE
    std::string mig_uuid;  // the series' UUID when it names the instance ("MIG-…")
  };
  std::map<GpuKey, std::map<std::string, MigPart>> mig;  // GPU → GPU_I_ID → instance
  std::map<GpuKey, bool> dated;  // a timestamped field has dated the GPU
  auto warn = [&](std::string w) {
    if (out.warnings.size() < kMaxWarnings) out.warnings.push_back(std::move(w));
  };
  for (const PromSample& s : samples) {
    if (s.name.rfind("DCGM_", 0) != 0) continue;  // exporter self-metrics, go_*, process_*
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
      o.host_label = host ? *host : "";
      o.sample_time_s = scrape_time_s;
    }
    const std::string* series_uuid = s.Label("UUID");
    const bool instance_uuid = series_uuid && series_uuid->rfind("MIG-", 0) == 0;
    if (o.uuid.empty() && series_uuid && !instance_uuid) o.uuid = *series_uuid;
    if (o.model_name.empty()) {
      if (const std::string* m = s.Label("modelName")) {
        o.model_name = *m;
        if (resolver) o.gpu_type = resolver(*m).value_or("");
      }
    }
    // Scraped through Prometheus without honor_labels, they arrive as exported_pod/_namespace.
    const std::string* pod = s.Label("pod");
    const bool exported = !pod || pod->empty();
    if (exported) pod = s.Label("exported_pod");
    if (pod && !pod->empty()) {
      const std::string* ns = s.Label(exported ? "exported_namespace" : "namespace");
      const std::string name = (ns && !ns->empty() ? *ns : std::string("default")) + "/" + *pod;
      auto at = std::lower_bound(o.pods.begin(), o.pods.end(), name);
      if (at == o.pods.end() || *at != name) o.pods.insert(at, name);
    }
    const std::string* mig_id = s.Label("GPU_I_ID");
    const bool is_mig = mig_id && !mig_id->empty();
    MigPart* part = nullptr;
    if (is_mig) {
      part = &mig[key][*mig_id];
      if (instance_uuid && part->mig_uuid.empty()) part->mig_uuid = *series_uuid;
      if (const std::string* prof = s.Label("GPU_I_PROFILE")) {  // "3g.20gb" → 3 slices
        if (part->profile.empty()) part->profile = *prof;
        int n = 0;
        auto [p, ec] = std::from_chars(prof->data(), prof->data() + prof->size(), n);
        if (ec == std::errc() && n > 0 && p != prof->data() + prof->size() && *p == 'g') part->slices = n;
      }
    }
    LoadSnapshot& target = is_mig ? part->load : o.load;
    if (SetDcgmField(target, s.name, s.value)) {
      const unsigned bit = 1u << DcgmFieldIndex(s.name);
      if (is_mig) {
        part->mask |= bit;
      } else if (!(o.field_mask & bit)) {
        o.field_mask |= bit;
        ++o.fields;
      }
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
        bool& d = dated[key];
        if (!d || t < o.sample_time_s) o.sample_time_s = t;
        d = true;
      }
    }
  }
  // Each MIG instance as an observation of its own, then folded into its GPU (see the header).
  std::vector<GpuObservation> instances;
  for (auto& [key, parts] : mig) {
    GpuObservation& o = by_key.at(key);
    for (const auto& [id, p] : parts) {
      GpuObservation inst;
      inst.key = key;
      int gi = -1;
      auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), gi);
      if (ec != std::errc() || ptr != id.data() + id.size() || gi < 0) {
        warn("GPU_I_ID '" + id + "' of " + key.host + " gpu " + std::to_string(key.index) +
             " is not a non-negative integer: instance skipped");
        continue;
      }
      inst.key.gpu_instance = gi;
      inst.uuid = o.uuid;
      inst.model_name = o.model_name;
      inst.gpu_type = o.gpu_type;
      inst.host_label = o.host_label;
      inst.sample_time_s = o.sample_time_s;
      inst.load = p.load;
      inst.mig_profile = p.profile;
      inst.mig_uuid = p.mig_uuid;
      inst.field_mask = p.mask;
      for (unsigned m = p.mask; m; m &= m - 1) ++inst.fields;
      instances.push_back(std::move(inst));
    }
    o.mig_instances = static_cast<int>(parts.size());
    int total_slices = 0;
    for (const auto& [id, p] : parts) total_slices += p.slices;
    const double denom = std::max(7, total_slices);
    using Field = std::optional<double> LoadSnapshot::*;
    const Field weighted[] = {&LoadSnapshot::sm_active, &LoadSnapshot::sm_occupancy, &LoadSnapshot::dram_active,
                              &LoadSnapshot::pipe_tensor_active, &LoadSnapshot::gr_engine_active};
    const Field summed[] = {&LoadSnapshot::fb_used_mib, &LoadSnapshot::fb_free_mib};
    const Field largest[] = {&LoadSnapshot::gpu_util, &LoadSnapshot::sm_clock_mhz};
    auto fold = [&](Field f, auto combine) {
      if (o.load.*f) return;  // the whole GPU reported it
      std::optional<double> acc;
      for (const auto& [id, p] : parts) {
        if (p.load.*f) acc = combine(acc, *(p.load.*f), p.slices);
      }
      if (acc) {
        o.load.*f = acc;
        ++o.fields;
      }
    };
    for (Field f : weighted) {
      fold(f, [&](std::optional<double> a, double v, int w) { return std::min(1.0, a.value_or(0) + v * w / denom); });
    }
    for (Field f : summed) fold(f, [](std::optional<double> a, double v, int) { return a.value_or(0) + v; });
    for (Field f : largest) fold(f, [](std::optional<double> a, double v, int) { return std::max(a.value_or(v), v); });
    // Recount: a field is stored when its optional is set (whole GPU or folded).
    const std::optional<double>* stored[] = {&o.load.sm_active,    &o.load.sm_occupancy,
                                             &o.load.dram_active,  &o.load.pipe_tensor_active,
                                             &o.load.gr_engine_active, &o.load.gpu_util,
                                             &o.load.fb_used_mib,  &o.load.fb_free_mib,
                                             &o.load.sm_clock_mhz};
    static_assert(std::size(stored) == std::size(kDcgmLoadFields));
    o.field_mask = 0;
    o.fields = 0;
    for (size_t i = 0; i < std::size(stored); ++i) {
      if (stored[i]->has_value()) {
        o.field_mask |= 1u << i;
        ++o.fields;
      }
    }
  }
  out.gpus.reserve(by_key.size() + instances.size());
  for (auto& [k, o] : by_key) out.gpus.push_back(std::move(o));
  for (GpuObservation& i : instances) out.gpus.push_back(std::move(i));
  std::sort(out.gpus.begin(), out.gpus.end(),
            [](const GpuObservation& a, const GpuObservation& b) { return a.key < b.key; });
  return out;
}

void GpuLoadTable::Update(std::span<const GpuObservation> gpus) {
  std::lock_guard<std::mutex> lock(mu_);
  // A GPU read again drops the MIG instances this read no longer has (MIG reconfigured): one
  // read carries all of a GPU's instances.
  std::set<GpuKey> fresh;
  for (const GpuObservation& g : gpus) fresh.insert(g.key);
  for (const GpuObservation& g : gpus) {
    if (g.key.gpu_instance >= 0) continue;
    auto whole = gpus_.find(g.key);
    if (whole != gpus_.end() && g.sample_time_s < whole->second.sample_time_s) continue;  // older read
    for (auto it = gpus_.upper_bound(g.key); it != gpus_.end() && it->first.host == g.key.host &&
                                              it->first.index == g.key.index;) {
      it = fresh.count(it->first) ? std::next(it) : gpus_.erase(it);
    }
  }
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
    if (g.uuid == uuid && k.gpu_instance < 0) {
      GpuObservation o = g;
      o.load.age_s = std::max(0.0, now_s - o.sample_time_s);
      return o;
    }
  }
  return std::nullopt;
}

std::vector<GpuObservation> GpuLoadTable::Instances(const std::string& host, int index,
                                                    double now_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<GpuObservation> out;
  // Keys order by (host, index, gpu_instance): the whole GPU (-1), then its instances.
  for (auto it = gpus_.upper_bound(GpuKey{host, index, -1});
       it != gpus_.end() && it->first.host == host && it->first.index == index; ++it) {
    out.push_back(it->second);
    out.back().load.age_s = std::max(0.0, now_s - it->second.sample_time_s);
  }
  return out;
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
