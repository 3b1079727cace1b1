// LoadSource: where `hase serve` reads live GPU load from — dcgm-exporter scraped directly
// (DcgmScraper, `--dcgm`) or Prometheus's HTTP API (PromLoadSource, `--prometheus`).
//
// A source keeps a GpuLoadTable of the latest LoadSnapshot per GPU (keyed by cluster node and
// index after node resolution, node_map.h) and says how healthy that table is. The daemon
// reads only table() and Health(); Start/Stop run the source's background refresh.
//
// Health. `degraded` is true when the table cannot be trusted (a target or query failing,
// stale GPUs, GPUs whose node is unknown, nothing read yet); `reasons` says why, one line
// each. `notes` lists inputs that are missing but have a documented fallback (SM_ACTIVE off →
// GR_ENGINE_ACTIVE; MIG instances folded into their GPU): true, worth showing on /healthz,
// not a degradation.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/telemetry/gpu_load_table.h"

namespace hase::telemetry {

struct TargetHealth {
  std::string url;
  bool ok = false;               // the last read of this target succeeded
  std::string last_error;        // "" when ok
  double last_success_s = 0;     // wall time of the last good read, 0 = never
  int consecutive_failures = 0;
  int gpus = 0;                  // GPUs seen in the last good read
};

struct TelemetryHealth {
  bool degraded = true;              // see the file comment
  std::vector<std::string> reasons;  // one line per problem, for /healthz
  std::vector<std::string> notes;    // fallbacks in use, for /healthz (not degraded)
  std::vector<TargetHealth> targets;
  double max_age_s = 0;              // oldest GPU observation
};

class LoadSource {
 public:
  virtual ~LoadSource() = default;

  // Reads every target once and updates the table. OK when all reads succeeded, else the first
  // error (what could be read is still applied).
  virtual Status RefreshOnce() = 0;
  // Starts/stops the background refresh (idempotent). The first round runs immediately.
  virtual void Start() = 0;
  virtual void Stop() = 0;

  virtual const GpuLoadTable& table() const = 0;
  virtual TelemetryHealth Health() const = 0;
  // "dcgm-exporter" or "prometheus", for logs and /healthz.
  virtual std::string Kind() const = 0;
};

// Notes on fields no GPU in `gpus` reported (by DCGM metric name, with the fallback used),
// e.g. "telemetry: DCGM_FI_PROF_SM_ACTIVE not reported by 3 of 3 GPUs (first a/0): fallback in
// use: GR_ENGINE_ACTIVE, else GPU_UTIL". Appends a reason (degraded) instead when a GPU
// reports no SM activity field at all. SM_CLOCK and PIPE_TENSOR_ACTIVE are not needed.
void AddFieldHealth(const std::vector<GpuObservation>& gpus, TelemetryHealth& health);

// What every load source's Health adds for its GPUs: AddFieldHealth, the oldest reading
// (max_age_s) and a reason per GPU whose reading is older than `stale_after_s` s ("telemetry:
// a gpu 0 stale (12.3 s old > 10 s)"); then degraded = any reason.
void AddGpuHealth(const std::vector<GpuObservation>& gpus, double stale_after_s, TelemetryHealth& health);

}  // namespace hase::telemetry
