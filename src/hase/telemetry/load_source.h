// LoadSource: where `hase serve` reads live GPU load from — dcgm-exporter scraped directly
// (DcgmScraper, `--dcgm`) or Prometheus's HTTP API (PromLoadSource, `--prometheus`).
//
// A source keeps a GpuLoadTable of the latest LoadSnapshot per GPU (keyed by cluster node and
// index after node resolution, node_map.h) and says how healthy that table is. The daemon
// reads only table() and Health(); Start/Stop run the source's background refresh.
//
// Health. `degraded` is true when the table cannot be trusted (a target or query failing,
// stale GPUs, GPUs whose node is unknown, nothing read yet, an input hase needs and has no
// fallback for missing, MIG series the cluster file does not declare); `reasons` says why,
// one line each, naming the field and the GPUs. `notes` lists inputs that are missing but
// have a documented fallback (SM_ACTIVE off → GR_ENGINE_ACTIVE; MIG instances folded into a
// GPU the cluster declares whole): true, worth showing on /healthz, not a degradation.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/node_map.h"

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

// Field and MIG health of the GPUs hase uses (whole GPUs the cluster declares whole, MIG
// instances it declares, matched as in mig_match.h; `map.mig` empty: every GPU whole).
//
// Fields, by what dcgm-exporter's default counters enable (NVIDIA/dcgm-exporter
// etc/default-counters.csv, "DCP metrics": GR_ENGINE_ACTIVE, PIPE_TENSOR_ACTIVE, DRAM_ACTIVE on,
// SM_ACTIVE and SM_OCCUPANCY commented out; GPU_UTIL, FB_FREE, FB_USED, SM_CLOCK on):
//   reasons (degraded) naming the field and the GPUs (up to 8, then a count):
//     DRAM_ACTIVE missing (default-on; without it DRAM contention is taken as 0);
//     both SM_ACTIVE and GR_ENGINE_ACTIVE missing (GR_ENGINE_ACTIVE is default-on; GPU_UTIL, a
//       time share, or nothing stands in);
//     both FB_USED and FB_FREE missing (default-on; memory hase did not place is invisible);
//   notes (a fallback in use): SM_ACTIVE (→ GR_ENGINE_ACTIVE), SM_OCCUPANCY (→ 0.5 × SM
//     activity), FB_USED alone (→ FB_FREE), FB_FREE alone (→ FB_USED).
// MIG: a note for a GPU with instance series the cluster declares whole (folded, today's
// behaviour); a reason for each instance series the cluster does not declare on a GPU it
// partitions, for each declared instance without series, and for a partitioned GPU with no
// instance series at all. PIPE_TENSOR_ACTIVE and SM_CLOCK are not needed.
void AddFieldHealth(const std::vector<GpuObservation>& gpus, TelemetryHealth& health,
                    const NodeMap& map = {});

// What every load source's Health adds for its GPUs: AddFieldHealth (with `map`), the oldest
// reading (max_age_s) and a reason per whole GPU whose reading is older than `stale_after_s` s
// ("telemetry: a gpu 0 stale (12.3 s old > 10 s)"; a MIG instance is dated as its GPU); then
// degraded = any reason.
void AddGpuHealth(const std::vector<GpuObservation>& gpus, double stale_after_s, const NodeMap& map,
                  TelemetryHealth& health);

}  // namespace hase::telemetry
