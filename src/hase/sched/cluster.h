// Cluster: the static inventory of a heterogeneous GPU cluster (nodes, GPUs, GPU types).
//
// What does not change while tasks run. The dynamic side (what runs where, reservations) is
// ClusterState (cluster_state.h). GPU ids are dense indices 0..n-1 in node order, then GPU index
// within the node; every tie in hase's policies breaks on the lower GPU id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/base/status.h"

namespace hase::sched {

// One GPU type as the scheduler sees it (a slice of the hw catalog's GpuSpec).
struct GpuType {
  std::string name;             // catalog name, e.g. "A100-SXM4-40GB"
  double memory_mib = 0;        // device memory, MiB
  double peak_fp32_tflops = 0;  // datasheet FP32 peak, TFLOP/s (fastest-gpu ranks by it)
  double dram_gbps = 0;         // datasheet DRAM bandwidth, GB/s (informational)
  std::string mig_profile{};    // a MIG instance type ("A100-SXM4-40GB-MIG-1g.5gb"): "1g.5gb"
};

// One schedulable GPU: a whole physical GPU, or one MIG instance of one (docs/scheduler.md,
// "MIG"). The instances of a MIG-partitioned GPU are consecutive Gpus sharing node and index,
// in the order the cluster file lists them; the physical GPU itself is then not schedulable.
// A Gpu whose type is a MIG instance type but that is not is_mig() (a plain `{type:
// A100-SXM4-40GB-MIG-1g.5gb}` entry, as Slurm discovery writes for MIG GRES) is an instance on
// an unknown physical GPU: no DCGM series is paired with it.
struct Gpu {
  int id = 0;              // dense index in Cluster::gpus
  std::string node;        // node name from the cluster file
  int index = 0;           // physical GPU index within its node, from 0 (DCGM `gpu` label)
  int type = 0;            // index into Cluster::types (a MIG instance: its derived type)
  double memory_mib = 0;   // usable memory, MiB (type's memory unless the file limits it)
  int max_tasks = 4;       // tasks that may share this GPU at once (co-location limit), >= 1
  std::string mig_profile{};  // MIG instance: GPU instance profile, "1g.5gb"; "" = whole GPU
  int mig_slot = -1;          // MIG instance: position in its GPU's `mig:` list, from 0
  int mig_gpu_instance = -1;  // MIG instance: GPU_I_ID the file pins it to (`gi:`), -1 = none

  bool is_mig() const { return !mig_profile.empty(); }
};

struct Cluster {
  std::string name;             // from the file, for reports
  std::vector<GpuType> types;   // distinct types, in order of first appearance
  std::vector<Gpu> gpus;        // ordered by node (file order), then index

  // "node/index" ("n3/1") for a whole GPU, "node/index/mig<slot>-<profile>"
  // ("n3/1/mig2-1g.5gb") for a MIG instance; for reports, /v1/gpus and the Gantt chart.
  std::string GpuLabel(int gpu) const;
  // Number of GPUs of each type, indexed like `types`.
  std::vector<int> CountByType() const;
  // Index of the type named `name` (exact), or -1.
  int TypeIndex(const std::string& name) const;
  // Largest Gpu::memory_mib in the cluster, MiB.
  double MaxGpuMemoryMib() const;

  // Checks internal consistency (ids dense, type indices valid, memory > 0, max_tasks >= 1).
  // InvalidArgument naming the first bad GPU.
  Status Validate() const;
};

}  // namespace hase::sched
