// GpuLoadTable: the latest LoadSnapshot of every GPU seen in DCGM samples, and how those
// samples are mapped to GPUs.
//
// dcgm-exporter labels each series with the GPU (`gpu` = index on its node, `UUID`,
// `modelName`, `device`, `pci_bus_id`) and the node (`Hostname`, renamed `hostname` in 2026;
// both are accepted, lowercase first). A GPU is identified by (host, index); its UUID is kept
// so it can also be looked up by UUID. Sources map the host label to a cluster node afterwards
// (node_map.h).
//
// MIG. Series with a non-empty `GPU_I_ID` label describe one MIG instance of GPU `gpu`
// (dcgm-exporter adds GPU_I_ID and GPU_I_PROFILE, e.g. "1g.5gb", to every series of an
// instance). Each instance becomes an observation of its own, keyed {host, gpu, GPU_I_ID} with
// mig_profile set, for clusters that schedule the instances (sched::Gpu::is_mig,
// docs/scheduler.md "MIG"; matched by MatchMigInstances, mig_match.h). The whole GPU's
// observation {host, gpu} also gets the instances folded in (mig_instances counts them), for
// clusters that declare the GPU whole: for every field the whole GPU did not report itself,
// activity ratios are weighted by the instance's compute slices (the N of `GPU_I_PROFILE`
// "Ng.…", 1 when absent) out of max(7, Σ slices) — A100/H100 have 7 — and summed;
// FB_USED/FB_FREE are summed; GPU_UTIL and SM_CLOCK take the largest instance value.
//
// Ages: a snapshot's age is `now - sample time`, where the sample time is the series'
// timestamp when the exposition line had one (ms since the epoch, the oldest of the GPU's
// fields) and otherwise the moment it was scraped. All times are wall-clock seconds since the
// Unix epoch.
//
// Thread-safety: GroupDcgmSamples is a pure function; GpuLoadTable is safe for concurrent use.
#pragma once

#include <compare>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hase/telemetry/load_snapshot.h"
#include "hase/telemetry/prom_text.h"

namespace hase::telemetry {

struct GpuKey {
  std::string host;       // node name
  int index = 0;          // DCGM `gpu` label: the device index on its node
  int gpu_instance = -1;  // DCGM `GPU_I_ID` of a MIG instance; -1 = the whole GPU
  auto operator<=>(const GpuKey&) const = default;
};

// Maps dcgm-exporter's `modelName` ("NVIDIA A100-SXM4-40GB") to a GPU catalog name
// ("A100-SXM4-40GB"), or std::nullopt when the catalog does not know it.
using GpuTypeResolver = std::function<std::optional<std::string>(std::string_view model_name)>;

// What one GPU reported.
struct GpuObservation {
  GpuKey key;
  std::string uuid;        // "GPU-…", "" when the series had no UUID label
  std::string model_name;  // modelName label as reported
  std::string gpu_type;    // catalog name from the resolver, "" when unresolved
  std::string host_label;  // hostname/Hostname label as reported ("" = none); key.host may differ
  LoadSnapshot load;       // age_s is filled by GpuLoadTable reads, 0 here
  double sample_time_s = 0;  // wall seconds since the epoch (see file comment)
  int fields = 0;            // number of kDcgmLoadFields stored (blank values do not count)
  unsigned field_mask = 0;   // bit i set: kDcgmLoadFields[i] stored
  int mig_instances = 0;     // whole GPU: MIG instances folded in (0: not partitioned)
  std::string mig_profile;   // MIG instance (key.gpu_instance >= 0): GPU_I_PROFILE, "1g.5gb"
  // Kubernetes pods using the GPU, "namespace/name", sorted: dcgm-exporter's pod mapping
  // (--kubernetes / DCGM_EXPORTER_KUBERNETES=true) labels the series of a GPU allocated to a
  // pod with `pod`, `namespace`, `container` (read from the kubelet's pod-resources API).
  // Empty: no pod there, or the mapping is off. On a whole GPU it includes its instances' pods.
  std::vector<std::string> pods;
  // MIG instance: its own device UUID ("MIG-…") when the exporter labels its series with it
  // (UUID="MIG-…"); "" when the series carry the physical GPU's UUID (dcgm-exporter's usual).
  std::string mig_uuid;
};

struct GroupResult {
  std::vector<GpuObservation> gpus;  // sorted by key
  std::vector<std::string> warnings;  // skipped series, one line each (at most 20 kept)
};

// Groups samples into one observation per GPU. Samples of metrics outside kDcgmLoadFields
// still identify GPUs (and their model) but set no field. `fallback_host` names the node when
// a series has neither `hostname` nor `Hostname`; `scrape_time_s` is the sample time of
// series without a timestamp. `resolver` may be empty (gpu_type stays ""). Series without a
// `gpu` label or with a non-integer one are skipped with a warning.
GroupResult GroupDcgmSamples(std::span<const PromSample> samples, std::string_view fallback_host,
                             double scrape_time_s, const GpuTypeResolver& resolver);

class GpuLoadTable {
 public:
  GpuLoadTable() = default;
  GpuLoadTable(const GpuLoadTable&) = delete;
  GpuLoadTable& operator=(const GpuLoadTable&) = delete;

  // Replaces the observation of each GPU in `gpus` if it is not older than the stored one. A
  // whole GPU's observation also removes that GPU's stored MIG instances absent from `gpus`
  // (an instance destroyed or re-created under another GPU_I_ID).
  void Update(std::span<const GpuObservation> gpus);

  // The observation of one GPU with load.age_s = max(0, now_s - sample_time_s); std::nullopt
  // when never seen.
  std::optional<GpuObservation> Get(const GpuKey& key, double now_s) const;
  // The whole GPU with that UUID (MIG instances share their GPU's UUID and are skipped).
  std::optional<GpuObservation> GetByUuid(std::string_view uuid, double now_s) const;
  // The MIG instance observations of GPU (host, index), by GPU_I_ID; ages as in Get().
  std::vector<GpuObservation> Instances(const std::string& host, int index, double now_s) const;
  // Every GPU and MIG instance seen, sorted by key (a GPU before its instances), ages as in Get().
  std::vector<GpuObservation> All(double now_s) const;

 private:
  mutable std::mutex mu_;
  std::map<GpuKey, GpuObservation> gpus_;  // guarded by mu_
};

// Wall-clock seconds since the Unix epoch (the default clock of the scraper and the service).
double WallClockSeconds();

}  // namespace hase::telemetry
