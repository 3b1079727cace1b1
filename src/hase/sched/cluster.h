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
};

// One physical GPU.
struct Gpu {
  int id = 0;              // dense index in Cluster::gpus
  std::string node;        // node name from the cluster file
  int index = 0;           // GPU index within its node, from 0
  int type = 0;            // index into Cluster::types
  double memory_mib = 0;   // usable memory, MiB (type's memory unless the file limits it)
  int max_tasks = 4;       // tasks that may share this GPU at once (co-location limit), >= 1
};

struct Cluster {
  std::string name;             // from the file, for reports
  std::vector<GpuType> types;   // distinct types, in order of first appearance
  std::vector<Gpu> gpus;        // ordered by node (file order), then index

  // "node/index" ("n3/1"), for reports and the Gantt chart.
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
