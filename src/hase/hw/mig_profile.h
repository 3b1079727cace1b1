// MIG (Multi-Instance GPU): the GPU instance profiles of a MIG-capable GPU type, and the
// GpuSpec of one instance derived from its parent's.
//
// A MIG-capable GPU is cut into compute slices (GPCs: 7 on A100/H100/H200, 4 on A30) and memory
// slices (8 on A100/H100/H200, 4 on A30; a memory slice is 1/8 (1/4) of the DRAM with its
// memory controllers and L2 cache). A GPU instance profile ("1g.5gb", "3g.20gb", …) takes a
// fixed number of each. Tables: NVIDIA MIG User Guide, "Supported MIG Profiles"
// (docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html); SM counts
// and memory sizes as `nvidia-smi mig -lgip` prints them; both kept in data/gpus.yaml under
// each GPU's `mig:` (docs/gpu-catalog.md, "MIG").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"

namespace hase {

struct GpuSpec;

// A profile name in the form MigProfile::name uses: "MIG 1g.5gb" / "1G.5GB" → "1g.5gb" (DCGM's
// GPU_I_PROFILE label carries the "MIG " prefix; users write either case).
std::string CanonicalMigProfileName(std::string_view name);

// One GPU instance profile of a GPU type.
struct MigProfile {
  std::string name;        // profile name as NVML/DCGM print it without "MIG ": "1g.5gb"
  int compute_slices = 0;  // GPCs ("1g" = 1)
  int memory_slices = 0;   // memory slices (1g.10gb on A100-40GB: 2)
  int sms = 0;             // SMs of the instance (`nvidia-smi mig -lgip`, column SM)
  double memory_gib = 0;   // usable device memory, GiB (`nvidia-smi mig -lgip`, column Memory)
  int max_instances = 0;   // "Number of Instances Available" on one GPU
};

// The MIG geometry of one GPU type; an empty `profiles` means the type has no MIG.
struct MigGeometry {
  int compute_slices = 0;  // compute slices of the whole GPU (7 or 4)
  int memory_slices = 0;   // memory slices of the whole GPU (8 or 4)
  std::vector<MigProfile> profiles;  // in data/gpus.yaml order
  std::string source;      // where the table comes from

  bool supported() const { return !profiles.empty(); }
  // The profile named `name` ("1g.5gb"; a leading "MIG " and case are ignored), or nullptr.
  const MigProfile* Find(std::string_view name) const;
  // "1g.5gb, 1g.10gb, …" for hints.
  std::string ProfileNames() const;
};

// Catalog id of an instance type: "<parent id>-MIG-<profile>", e.g. "A100-SXM4-40GB-MIG-1g.5gb".
std::string MigTypeId(std::string_view parent_id, std::string_view profile);

// The GpuSpec of one `profile` instance of `parent` (a GPU type whose `mig` lists it):
//   id "<parent.id>-MIG-<profile>", name "<parent.name> MIG <profile>" (the device name CUDA
//   reports inside the instance), sms and memory_gib from the profile row, every peak FLOP/s
//   × sms / parent.sms, DRAM bandwidth and L2 × memory_slices / parent memory slices (MIG User
//   Guide: a memory slice carries its share of memory controllers and L2), clocks, PCIe,
//   compute capability and TDP (the board's, shared) as the parent's; mig_parent and
//   mig_profile set; `mig` empty (an instance is not partitioned again).
// Errors: NotFound when `parent` has no such profile (the hint lists the valid ones, or says
// the type has no MIG).
Result<GpuSpec> DeriveMigSpec(const GpuSpec& parent, std::string_view profile);

}  // namespace hase
