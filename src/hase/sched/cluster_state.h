// ClusterState: the scheduler's view of every GPU at one moment (Cluster + one GpuState each).
//
// Owned by whoever drives scheduling (the simulator, the daemon). Policies read it in
// PreFilter/Filter/Score/Select and change it only in Reserve/Bind; the driver reports other
// changes (a task ended, progress observed) and then calls Policy::OnGpuChanged. Not
// thread-safe.
#pragma once

#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hase/sched/cluster.h"
#include "hase/sched/gpu_state.h"

namespace hase::sched {

class ClusterState {
 public:
  explicit ClusterState(const Cluster& c);

  const Cluster& cluster;        // must outlive this state
  std::vector<GpuState> gpus;    // indexed by Gpu::id
  double now_ms = 0;             // the moment the state describes, ms
  // task id → GPU it holds a reservation on (kept by Reserve/Unreserve).
  std::unordered_map<int, int> reservation_of_task;

  // Projected finish of each GPU (the predicted end of everything running or queued there,
  // ms), kept by Policy::OnGpuChanged. An index gives the cluster-wide max in O(log n).
  std::vector<double> finish_ms;
  void SetProjectedFinish(int gpu, double finish);
  // Max projected finish over all GPUs except `gpu` (now_ms when there is no other GPU).
  double MaxProjectedFinishExcluding(int gpu) const;
  double MaxProjectedFinish() const;

  // The GPU `task_id` holds a reservation on, or -1.
  int ReservedGpuOf(int task_id) const;

  // Adds a claim (GpuState::claims) and remembers the GPU for ClearClaims.
  void AddClaim(int gpu, const QueuedTask& claim);
  // Removes every claim; returns the GPUs that had one.
  std::vector<int> ClearClaims();

 private:
  std::set<std::pair<double, int>> finish_index_;  // (finish_ms, gpu)
  std::vector<int> claimed_gpus_;                  // GPUs with claims, for ClearClaims
};

}  // namespace hase::sched
