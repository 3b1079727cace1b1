// GpuState: what runs on one GPU now, as the scheduler sees it (predicted, not true, values).
//
// Filter and Score read only the GpuState they are handed (kube-scheduler's rule), so that
// backfilling, benchmarks and the telemetry daemon can pass a "what if" copy or a snapshot
// built from live DCGM readings. The simulator keeps one per GPU in ClusterState and updates
// it as tasks start and end; the daemon fills `background` from dcgm-exporter.
#pragma once

#include <optional>
#include <vector>

#include "hase/telemetry/load_snapshot.h"

namespace hase::sched {

// A task running on the GPU. Its remaining work is in *predicted isolated* ms (what the
// oracle predicted for the whole task × the fraction not yet done), as of `as_of_ms`.
struct RunningTask {
  int task_id = 0;
  double memory_mib = 0;        // MiB held while it runs
  double demand = 1.0;          // TaskProfile::demand, 0–1
  double started_ms = 0;        // when it started, ms
  double remaining_ms = 0;      // predicted isolated ms of work left at as_of_ms, >= 0
  double as_of_ms = 0;          // time `remaining_ms` refers to, ms
  double progress_rate = 0;     // observed predicted-isolated ms done per wall ms (0: unknown;
                                // then RemainingAt does not extrapolate)
  int gang = 1;                 // GPUs the task holds (Task::gpus); > 1: it holds this whole GPU

  // Predicted isolated ms left at `now_ms` (>= as_of_ms), extrapolated at progress_rate.
  double RemainingAt(double now_ms) const {
    const double r = remaining_ms - (now_ms - as_of_ms) * progress_rate;
    return r > 0 ? r : 0;
  }
};

// A task bound to this GPU that has not started (the GPU's local FIFO queue; dispatching
// policies such as rr bind on arrival and the task starts when memory and a slot are free).
struct QueuedTask {
  int task_id = 0;
  double memory_mib = 0;
  double demand = 1.0;
  double isolated_ms = 0;  // predicted isolated runtime on this GPU's type, ms
  double not_before_ms = 0;  // claims only: earliest start the claimant planned, ms
  int gang = 1;              // GPUs the task needs (Task::gpus); > 1: queued on each of them,
                             // started by the driver on all at once (gang.h StartGangIfReady)
};

// A promise that `task_id` may start on this GPU at `start_ms` (the shadow time). Other tasks
// may use the GPU before that only when the reserved task could still start by `start_ms`
// (EASY backfilling, backfill.h).
struct Reservation {
  int task_id = -1;
  double start_ms = 0;     // predicted start (shadow time), ms
  double memory_mib = 0;   // memory the reserved task needs, MiB
  double demand = 1.0;
  double isolated_ms = 0;  // its predicted isolated runtime here, ms
  double made_ms = 0;      // when the reservation was made, ms
};

struct GpuState {
  int id = 0;              // Gpu::id
  int type = 0;            // Gpu::type (index into Cluster::types)
  double memory_mib = 0;   // Gpu::memory_mib
  int max_tasks = 1;       // Gpu::max_tasks
  std::vector<RunningTask> running;  // in start order
  std::vector<QueuedTask> queued;    // local FIFO queue, head first
  // Central-queue tasks that chose, in the current scheduling pass, to wait for this GPU
  // (hase's "wait for a faster GPU"): later decisions in the same pass see them queued behind
  // `queued`. Policy::BeginPass clears them; they hold nothing.
  std::vector<QueuedTask> claims;
  std::optional<Reservation> reservation;
  LoadSnapshot background = LoadSnapshot::Idle();  // load from work hase did not place
  // Predicted end of everything running, queued and claimed here, ms (PredictTimeline);
  // kept by Policy::OnGpuChanged. Lets Score price "wait until the GPU drains" in O(1).
  double projected_finish_ms = 0;

  double MemoryUsedMib() const;
  // True when a task needing `need_mib` MiB can start now: a free slot, enough free memory, and
  // nothing queued ahead of it. Claims (planning only) and the reservation are not looked at. Ignores the reservation (backfill.h decides about that).
  bool FitsNow(double need_mib) const;
  // Moves the queue head to `running` (started at `now_ms`) if a slot and its memory are free;
  // returns the started task, or nullopt when nothing could start (also when the head is a
  // k-GPU task: it starts on all its GPUs at once, gang.h StartGangIfReady). Tasks start in FIFO order:
  // the simulator and the daemon call it in a loop after a task ends.
  std::optional<QueuedTask> StartNextQueued(double now_ms);
  // True when the GPU could ever host a task needing `need_mib` (capacity only).
  bool CanEverHost(double need_mib) const { return need_mib <= memory_mib; }
  // No task running or queued.
  bool Idle() const { return running.empty() && queued.empty() && claims.empty(); }
  // Sum of running tasks' demand plus background SM activity (the co-runner demand a new
  // task would see).
  double TotalDemand() const;
};

}  // namespace hase::sched
