#include "hase/telemetry/load_source.h"

#include <algorithm>

#include <fmt/format.h>

#include "hase/base/seconds_text.h"
#include "hase/telemetry/dcgm_fields.h"

namespace hase::telemetry {
namespace {

std::string Label(const GpuObservation& g) { return fmt::format("{}/{}", g.key.host, g.key.index); }

}  // namespace

void AddGpuHealth(const std::vector<GpuObservation>& gpus, double stale_after_s, TelemetryHealth& health) {
  AddFieldHealth(gpus, health);
  for (const GpuObservation& g : gpus) {
    health.max_age_s = std::max(health.max_age_s, g.load.age_s);
    if (g.load.age_s > stale_after_s) {
      health.reasons.push_back(fmt::format("telemetry: {} gpu {} stale ({} old > {})", g.key.host, g.key.index,
                                           SecondsText(g.load.age_s), SecondsText(stale_after_s)));
    }
  }
  health.degraded = !health.reasons.empty();
}

void AddFieldHealth(const std::vector<GpuObservation>& gpus, TelemetryHealth& health) {
  if (gpus.empty()) return;
  struct Input {
    std::string_view field;
    std::string_view fallback;
  };
  // Inputs of the predictions and fit checks, with what stands in for them (load_snapshot.h).
  static constexpr Input kInputs[] = {
      {kDcgmSmActive, "GR_ENGINE_ACTIVE, else GPU_UTIL, as SM activity"},
      {kDcgmSmOccupancy, "0.5 x SM activity"},
      {kDcgmDramActive, "0 (no DRAM contention seen)"},
      {kDcgmFbUsed, "FB_FREE, else only the memory hase placed"},
      {kDcgmFbFree, "FB_USED, else only the memory hase placed"},
  };
  for (const Input& in : kInputs) {
    const unsigned bit = 1u << DcgmFieldIndex(in.field);
    int missing = 0;
    const GpuObservation* first = nullptr;
    for (const GpuObservation& g : gpus) {
      if (g.field_mask & bit) continue;
      ++missing;
      if (!first) first = &g;
    }
    if (missing == 0) continue;
    health.notes.push_back(fmt::format("telemetry: {} not reported by {} of {} GPUs (first {}): fallback in use: {}",
                                       in.field, missing, gpus.size(), Label(*first), in.fallback));
  }
  const unsigned activity = (1u << DcgmFieldIndex(kDcgmSmActive)) | (1u << DcgmFieldIndex(kDcgmGrEngineActive)) |
                            (1u << DcgmFieldIndex(kDcgmGpuUtil));
  for (const GpuObservation& g : gpus) {
    if (!(g.field_mask & activity)) {
      health.reasons.push_back(fmt::format(
          "telemetry: {} reports none of {}, {}, {} (missing or blank): its load is unknown and taken as idle",
          Label(g), kDcgmSmActive, kDcgmGrEngineActive, kDcgmGpuUtil));
    }
    if (g.mig_instances > 0) {
      health.notes.push_back(fmt::format(
          "telemetry: {} is MIG-partitioned ({} instances): hase schedules it as one GPU, with its "
          "instances' load folded by compute slices",
          Label(g), g.mig_instances));
    }
  }
}

}  // namespace hase::telemetry
