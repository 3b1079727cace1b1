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
  // `max_tasks_cap` > 0 caps every GPU's max_tasks (Policy::Options::max_tasks_per_gpu); 0
  // keeps the cluster's.
  explicit ClusterState(const Cluster& c, int max_tasks_cap = 0);

  const Cluster& cluster;        // must outlive this state
  std::vector<GpuState> gpus;    // indexed by Gpu::id
  double now_ms = 0;             // the moment the state describes, ms
  // task id → GPU it holds a reservation on (kept by Reserve/Unreserve).
  std::unordered_map<int, int> reservation_of_task;
  // k-GPU tasks (Task::gpus > 1; gang.h): task id → the GPUs it is queued on or holds a
  // reservation on, by id (reservation_of_task names the first). Running ones are not listed.
  std::unordered_map<int, std::vector<int>> gang_of_task;

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

  // --- Candidate index (lets hase rank a task's GPUs without visiting all of them) ---
  // GPUs are grouped in classes of equal (type, memory_mib, max_tasks) from the Cluster. A
  // GPU is "regular" while its GpuState keeps the class memory and has no background load;
  // regular GPUs are interchangeable except for what runs on them, which the sets below order.
  // Irregular GPUs (background load, memory changed by the daemon) are listed apart and
  // visited one by one. Reservations are not indexed (a ranker checks them per GPU). Kept by
  // Reindex(), which Policy::OnGpuChanged calls after every change the driver reports: a
  // driver that edits `gpus` must call OnGpuChanged for that GPU before the next decision
  // (the same contract as projected finishes).
  struct GpuClass {
    int type = 0;
    double memory_mib = 0;
    int max_tasks = 1;
    std::vector<int> gpus;                        // every member, by id
    std::set<int> idle;                           // regular and Idle()
    std::set<std::pair<double, int>> by_finish;   // regular, not idle: (projected finish, id)
    // Regular, not idle, a free slot, empty local queue, no claims (can share now, memory
    // permitting): (TotalDemand(), id).
    std::set<std::pair<double, int>> shareable;
    std::set<int> open;                           // regular, free slot and empty local queue
  };
  const std::vector<GpuClass>& classes() const { return classes_; }
  int ClassOf(int gpu) const { return class_of_[gpu]; }
  const std::set<int>& irregular() const { return irregular_; }
  // GPUs (regular or not) with a free slot, an empty local queue and memory > 0: when 0, no
  // task can start anywhere now.
  int open_gpus() const { return open_count_; }
  // Re-files GPU `gpu` in the index from its GpuState and finish_ms[gpu].
  void Reindex(int gpu);

 private:
  struct Filed {  // where Reindex last filed a GPU (to remove it again)
    bool irregular = false, idle = false, finish = false, share = false, open = false,
         counted_open = false;
    double finish_key = 0, share_key = 0;
  };
  std::vector<GpuClass> classes_;
  std::vector<int> class_of_;
  std::vector<Filed> filed_;
  std::set<int> irregular_;
  int open_count_ = 0;

  std::set<std::pair<double, int>> finish_index_;  // (finish_ms, gpu)
  std::vector<int> claimed_gpus_;                  // GPUs with claims, for ClearClaims
};

}  // namespace hase::sched
