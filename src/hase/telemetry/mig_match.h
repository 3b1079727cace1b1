// MatchMigInstances: which DCGM MIG instance series belong to which MIG instance the cluster
// file declares on a GPU (cluster_file.h, `mig:`; docs/scheduler.md "MIG").
//
// dcgm-exporter labels an instance's series with GPU_I_ID (the id nvidia-smi gave the GPU
// instance: 1, 5, 13, …, not 0..n-1) and GPU_I_PROFILE ("1g.5gb"). The cluster file lists
// instances by profile, optionally pinned to a GPU_I_ID (`{profile: 1g.5gb, gi: 13}`).
// Matching, per GPU: a pinned instance takes the series with its GPU_I_ID when the profile
// agrees (else none); then, profile by profile, the unpinned instances in file order take the
// remaining series of that profile in ascending GPU_I_ID. Series left over are undeclared.
//
// Thread-safety: pure functions over values.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "hase/telemetry/gpu_load_table.h"

namespace hase::telemetry {

// One MIG instance the cluster declares on a GPU.
struct MigInstanceDecl {
  std::string profile;    // GPU instance profile, "1g.5gb"
  int gpu_instance = -1;  // GPU_I_ID it is pinned to (`gi:`), -1 = matched by profile
};

struct MigMatch {
  // Per declared instance, the index into `seen` of its series, -1 when none matched.
  std::vector<int> declared_to_seen;
  // Indices into `seen` of series no declared instance took, ascending GPU_I_ID.
  std::vector<int> undeclared;
};

// `seen`: the instance observations of one GPU (GpuLoadTable::Instances). Profiles compare
// case-insensitively, a leading "MIG " ignored.
MigMatch MatchMigInstances(std::span<const MigInstanceDecl> declared,
                           std::span<const GpuObservation> seen);

}  // namespace hase::telemetry
