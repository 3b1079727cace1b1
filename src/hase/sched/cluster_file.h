// Cluster files: the YAML that describes a cluster (schema in docs/scheduler.md, example in
// examples/cluster.yaml). GPU types are resolved through the hw GpuCatalog, so any spelling
// the catalog accepts works ("a100", "Tesla T4", "NVIDIA GeForce RTX 3090").
//
//   name: default
//   max_tasks_per_gpu: 4          # co-location limit, default 4
//   nodes:
//     - name: a100-node           # required; with `count: N` expands to a100-node-0..N-1
//       count: 2                  # optional, identical nodes
//       gpus:
//         - {type: A100-SXM4-40GB, count: 4, memory_mib: 40960, max_tasks: 4}
//         - {type: A100-SXM4-40GB, count: 1, mig: [3g.20gb, 2g.10gb, 1g.5gb, {profile: 1g.5gb, gi: 13}]}
//
// `mig:` partitions each of the entry's GPUs into MIG instances (mig_profile.h): every item,
// a profile name or {profile, gi} (gi = the GPU_I_ID nvidia-smi gave it; pins DCGM series to
// it), becomes one schedulable Gpu of the derived catalog type "<type>-MIG-<profile>" with
// that profile's memory, labelled "node/index/mig<slot>-<profile>". The instances must fit
// the GPU: compute slices summed <= its compute slices (7; A30 4), memory slices summed <=
// its memory slices (8; A30 4), each profile at most its max_instances times, gi unique per
// GPU. NVIDIA's placement rules beyond these sums are not checked. `memory_mib` cannot be
// combined with `mig:`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hase/base/status.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster.h"

namespace hase::sched {

// Limits (a clear error instead of a hang or an out-of-memory): the largest fleet one hase
// instance schedules — 100 000 GPUs on at most 100 000 nodes (the Alibaba trace is 6 212 GPUs;
// sched_decision_bench measures 10 000), up to 64 tasks per GPU, a cluster file of at most
// 4 MiB with at most 100 YAML anchors (alias expansion).
inline constexpr int kMaxClusterGpus = 100000;
inline constexpr int kMaxClusterNodes = 100000;
inline constexpr int kMaxTasksPerGpu = 64;
inline constexpr size_t kMaxClusterFileBytes = size_t{4} << 20;

// Parses a cluster file's text. `where` names it in errors. Errors: Parse (not YAML: the line
// is in Status::where as "FILE:LINE"), InvalidArgument (missing or ill-typed field, count < 1,
// no GPUs, a limit above exceeded, MIG instances that do not fit their GPU; with FILE:LINE),
// NotFound (a GPU type the catalog does not know: FILE:LINE and the nearest catalog names in
// the hint; a MIG profile the type lacks or a type without MIG: FILE:LINE and the valid
// profiles in the hint).
Result<Cluster> ParseClusterYaml(std::string_view text, const std::string& where,
                                 const GpuCatalog& catalog);

// Reads FILE then ParseClusterYaml. Errors: IO when unreadable.
Result<Cluster> LoadClusterFile(const std::string& path, const GpuCatalog& catalog);

// Text of a file, for loaders. Errors: IO (with the path and errno text).
Result<std::string> ReadTextFile(const std::string& path);

}  // namespace hase::sched
