#include "hase/telemetry/load_source.h"

#include <algorithm>

#include <fmt/format.h>

#include "hase/base/seconds_text.h"
#include "hase/telemetry/dcgm_fields.h"

namespace hase::telemetry {
namespace {

constexpr size_t kMaxNamed = 8;  // GPUs named per line; the rest counted

std::string Label(const GpuObservation& g) {
  if (g.key.gpu_instance >= 0) {
    return fmt::format("{}/{} GPU_I_ID {} ({})", g.key.host, g.key.index, g.key.gpu_instance, g.mig_profile);
  }
  return fmt::format("{}/{}", g.key.host, g.key.index);
}

std::string Names(const std::vector<const GpuObservation*>& gpus) {
  std::string out;
  for (size_t i = 0; i < gpus.size() && i < kMaxNamed; ++i) out += (i ? ", " : "") + Label(*gpus[i]);
  if (gpus.size() > kMaxNamed) out += fmt::format(" and {} more", gpus.size() - kMaxNamed);
  return out;
}

unsigned Bit(std::string_view field) { return 1u << DcgmFieldIndex(field); }

}  // namespace

void AddGpuHealth(const std::vector<GpuObservation>& gpus, double stale_after_s, const NodeMap& map,
                  TelemetryHealth& health) {
  AddFieldHealth(gpus, health, map);
  for (const GpuObservation& g : gpus) {
    health.max_age_s = std::max(health.max_age_s, g.load.age_s);
    if (g.key.gpu_instance >= 0) continue;  // dated as its GPU, which is reported
    if (g.load.age_s > stale_after_s) {
      health.reasons.push_back(fmt::format("telemetry: {} gpu {} stale ({} old > {})", g.key.host, g.key.index,
                                           SecondsText(g.load.age_s), SecondsText(stale_after_s)));
    }
  }
  health.degraded = !health.reasons.empty();
}

void AddFieldHealth(const std::vector<GpuObservation>& gpus, TelemetryHealth& health, const NodeMap& map) {
  if (gpus.empty()) return;
  // The observations hase uses: whole GPUs declared whole, declared MIG instances.
  std::vector<const GpuObservation*> used;
  std::map<std::pair<std::string, int>, std::vector<GpuObservation>> instances;
  std::map<std::pair<std::string, int>, const GpuObservation*> whole;
  for (const GpuObservation& g : gpus) {
    const std::pair<std::string, int> gpu{g.key.host, g.key.index};
    if (g.key.gpu_instance >= 0) {
      instances[gpu].push_back(g);
    } else {
      whole[gpu] = &g;
    }
  }
  for (const auto& [gpu, obs] : whole) {
    auto decl = map.mig.find(gpu);
    if (decl == map.mig.end()) {
      used.push_back(obs);
      if (obs->mig_instances > 0) {
        health.notes.push_back(fmt::format(
            "telemetry: {} is MIG-partitioned ({} instances) but declared whole: hase schedules it as one GPU, "
            "with its instances' load folded by compute slices (declare them under `mig:` in the cluster file "
            "to schedule each instance)",
            Label(*obs), obs->mig_instances));
      }
      continue;
    }
    auto it = instances.find(gpu);
    if (it == instances.end()) {
      health.reasons.push_back(fmt::format(
          "telemetry: {} is declared with {} MIG instances but DCGM reports no GPU_I_ID series for it (MIG mode "
          "off, or an exporter without MIG support?): their load is unknown and taken as idle",
          Label(*obs), decl->second.size()));
      continue;
    }
    const std::vector<GpuObservation>& seen = it->second;
    const MigMatch m = MatchMigInstances(decl->second, seen);
    for (size_t d = 0; d < m.declared_to_seen.size(); ++d) {
      const MigInstanceDecl& want = decl->second[d];
      if (m.declared_to_seen[d] >= 0) {
        // Pointer into `gpus` (stable) for the field checks below.
        for (const GpuObservation& g : gpus) {
          if (g.key == seen[m.declared_to_seen[d]].key) used.push_back(&g);
        }
        continue;
      }
      health.reasons.push_back(fmt::format(
          "telemetry: {}/{}/mig{}-{} (declared{}) has no DCGM series: its load is unknown and taken as idle",
          gpu.first, gpu.second, d, want.profile,
          want.gpu_instance >= 0 ? fmt::format(" with gi {}", want.gpu_instance) : ""));
    }
    for (int s : m.undeclared) {
      health.reasons.push_back(fmt::format(
          "telemetry: MIG instance {} is not declared in the cluster file: hase places nothing there and does "
          "not see its load; add it to that GPU's `mig:` list",
          Label(seen[s])));
    }
  }
  if (used.empty()) return;
  auto missing = [&](unsigned mask) {
    std::vector<const GpuObservation*> out;
    for (const GpuObservation* g : used) {
      if (!(g->field_mask & mask)) out.push_back(g);
    }
    return out;
  };
  // Degraded: default-on inputs without a real fallback (see the header).
  if (auto m = missing(Bit(kDcgmDramActive)); !m.empty()) {
    health.reasons.push_back(fmt::format(
        "telemetry: {} not reported by {} of {} GPUs ({}): their DRAM contention is taken as 0; it is on in "
        "dcgm-exporter's default counters: check the exporter's counters file (-f) and DCGM profiling on them",
        kDcgmDramActive, m.size(), used.size(), Names(m)));
  }
  const unsigned prof_activity = Bit(kDcgmSmActive) | Bit(kDcgmGrEngineActive);
  if (auto m = missing(prof_activity); !m.empty()) {
    std::vector<const GpuObservation*> util, none;
    for (const GpuObservation* g : m) (g->field_mask & Bit(kDcgmGpuUtil) ? util : none).push_back(g);
    if (!util.empty()) {
      health.reasons.push_back(fmt::format(
          "telemetry: {} and {} not reported by {} of {} GPUs ({}): only {} (a time share, overstates SM use) "
          "stands in; {} is on in dcgm-exporter's default counters",
          kDcgmSmActive, kDcgmGrEngineActive, util.size(), used.size(), Names(util), kDcgmGpuUtil,
          kDcgmGrEngineActive));
    }
    for (const GpuObservation* g : none) {
      health.reasons.push_back(fmt::format(
          "telemetry: {} reports none of {}, {}, {} (missing or blank): its load is unknown and taken as idle",
          Label(*g), kDcgmSmActive, kDcgmGrEngineActive, kDcgmGpuUtil));
    }
  }
  if (auto m = missing(Bit(kDcgmFbUsed) | Bit(kDcgmFbFree)); !m.empty()) {
    health.reasons.push_back(fmt::format(
        "telemetry: neither {} nor {} reported by {} of {} GPUs ({}): memory hase did not place there is "
        "invisible to fit checks; both are on in dcgm-exporter's default counters",
        kDcgmFbUsed, kDcgmFbFree, m.size(), used.size(), Names(m)));
  }
  // Notes: a named fallback in use.
  struct Input {
    std::string_view field;
    unsigned unless;  // no note when this field is also missing (a reason above covers it)
    std::string_view fallback;
  };
  const Input kInputs[] = {
      {kDcgmSmActive, Bit(kDcgmGrEngineActive), "GR_ENGINE_ACTIVE as SM activity (SM_ACTIVE is off in dcgm-exporter's default counters)"},
      {kDcgmSmOccupancy, 0, "0.5 x SM activity (SM_OCCUPANCY is off in dcgm-exporter's default counters)"},
      {kDcgmFbUsed, Bit(kDcgmFbFree), "FB_FREE"},
      {kDcgmFbFree, Bit(kDcgmFbUsed), "FB_USED"},
  };
  for (const Input& in : kInputs) {
    std::vector<const GpuObservation*> m;
    for (const GpuObservation* g : missing(Bit(in.field))) {
      if (in.unless == 0 || (g->field_mask & in.unless)) m.push_back(g);
    }
    if (m.empty()) continue;
    health.notes.push_back(fmt::format("telemetry: {} not reported by {} of {} GPUs ({}): fallback in use: {}",
                                       in.field, m.size(), used.size(), Names(m), in.fallback));
  }
}

}  // namespace hase::telemetry
