// Backend: where tasks actually run, the one seam between the daemon (queue + policy + journal)
// and the world that starts processes or jobs.
//
// The daemon decides *where* (node, GPU) and journals it; a backend makes it happen and tells
// the daemon how it ended:
//   local   (local_backend.h)  forks the command on this host (`hase serve --executor`)
//   slurm   (slurm_backend.h)  sbatch pinned to the node and GPU type, followed to its end;
//                              reads back the GPU index Slurm gave (TaskStart)
//   kubernetes (kube_backend.h) binds pods kube-scheduler asked hase to place (the extender's
//                              /bind, Daemon::BindExternal), follows them with a pod watch,
//                              deletes them on cancel
//
// Crash safety is a contract between the two sides: the daemon journals a task as `running`
// (handle 0) *before* Launch, then journals the handle Launch returns. Launch may be slow (a
// Slurm RPC): the daemon calls it without holding its own lock. After a kill -9 the
// daemon hands every running task to Recover, which must find what the previous daemon
// launched (by a name derived from task id + attempt, not only by the journalled handle) so a
// task is never started twice and never lost.
//
// Thread-safety: all methods may be called from any thread. Callbacks run on the backend's own
// thread, never under its lock; they may call back into the backend.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"

namespace hase::service {

// One placed task to start.
struct LaunchRequest {
  int64_t task_id = 0;
  int attempt = 0;          // TaskRecord::attempts; (task_id, attempt) names one launch
  std::string command;      // the user's shell command (never parsed by hase)
  std::string node;         // node hase chose
  int gpu_index = 0;        // GPU index on that node hase chose
  std::string gpu_type;     // catalog GPU type of that GPU, e.g. "A100-SXM4-40GB"
  // What a local process gets as CUDA_VISIBLE_DEVICES: the GPU index, or for a MIG instance
  // its MIG device UUID ("MIG-…") when telemetry knows it; "" = a MIG instance whose device
  // cannot be named (the local backend refuses it rather than expose another instance).
  std::string visible_devices;
  std::string pod;          // "namespace/name" when the task is a Kubernetes pod, else ""
  std::string pod_uid;      // that pod's metadata.uid ("" when unknown)
  // The Slurm account of the task's team (TeamQuota::slurm_account, docs/teams.md); "" = the
  // submitting user's default account. Only the Slurm backend reads it (sbatch --account).
  std::string account;
  // GPUs the task holds on `node` (TaskSpec::gpus; sched/gang.h): k > 1 asks Slurm for
  // `--gres=gpu:TYPE:k`, and a local process sees the k indices in visible_devices ("0,1").
  int gpus = 1;
};

// Where and when one launch really started, as the backend reads it back. Slurm picks the GPU
// index among the node's GPUs of the type (GRES cannot name one index) and a job may pend
// before it starts: the daemon moves the task to this GPU and takes this start time.
struct TaskStart {
  std::string node;      // "" = unknown
  int gpu_index = -1;    // the GPU's index on `node`, -1 = unknown
  double started_s = 0;  // wall seconds, 0 = unknown
};

// How one launch ended.
struct TaskEnd {
  enum class Kind {
    kExited,     // ran and ended: exit_code 0 → succeeded, otherwise failed
    kCancelled,  // cancelled outside hase (e.g. scancel by an operator) → cancelled
    kLost,       // its node failed under it (Slurm NODE_FAIL): re-queued, attempts + 1
  };
  Kind kind = Kind::kExited;
  int exit_code = 0;   // kExited: the command's code; 128+N killed by signal N; -1 unknown
  std::string reason;  // for people, "" when it simply exited 0
  double ended_s = 0;  // wall seconds (the backend's record, e.g. Slurm's EndTime); 0 = unknown
  // Where and when it ran, when the backend knows and has not reported it through the start
  // callback (a job that started and ended between polls or while hase was down).
  std::optional<TaskStart> start = std::nullopt;
};

// What a backend says about a node. Drained: nothing new goes there, what runs finishes
// (Slurm DRAIN, MAINT, REBOOT, ...). Down: what ran there is lost (Slurm DOWN, FAIL,
// NOT_RESPONDING): the daemon re-queues it once.
enum class NodeCondition { kUsable, kDrained, kDown };

class Backend {
 public:
  // (task id, attempt, how it ended). Reported once per launch, also for cancelled launches.
  using EndCallback = std::function<void(int64_t task_id, int attempt, const TaskEnd& end)>;
  // A node's condition changed (drained, down, usable again).
  using NodeCallback =
      std::function<void(const std::string& node, NodeCondition condition, const std::string& reason)>;
  // Launch (task id, attempt) runs on `start.node`, GPU `start.gpu_index`, since
  // `start.started_s`. Reported at most once per launch, before its end.
  using StartCallback = std::function<void(int64_t task_id, int attempt, const TaskStart& start)>;

  virtual ~Backend() = default;

  // "local", "slurm", ...
  virtual const char* Name() const = 0;
  // Whether this backend starts tasks placed on `gpu` (others are run by someone else and
  // reported through Daemon::Complete).
  virtual bool RunsOn(const sched::Gpu& gpu) const = 0;

  // Whether Launch starts Kubernetes pods (LaunchRequest::pod) rather than commands.
  virtual bool RunsPods() const { return false; }

  // Starts the backend's monitor thread. Callbacks may fire from then on. Idempotent.
  virtual Status Start(EndCallback on_end, NodeCallback on_node) = 0;
  // Where launches really start (backends that can read it back: Slurm). Call before Start.
  // Default: ignored (the launch runs where it was asked to).
  virtual void SetStartCallback(StartCallback /*on_start*/) {}
  // Whether a launch may wait before it starts (a Slurm job pends) and the start callback
  // says when it did. The daemon then treats a launch without a start as not started yet:
  // draining its GPU re-places it instead of waiting for it.
  virtual bool ReportsStarts() const { return false; }
  virtual void Stop() = 0;

  // Starts one launch. Returns a handle (> 0: process id, Slurm job id) journalled with the
  // task; 0 = sent but not confirmed (Kubernetes: the binding's answer did not come within the
  // bind budget): the backend follows it like a started launch and reports its end, and the
  // daemon may call Launch again for the same launch to confirm it (it must not start twice). Errors: IO/Unavailable-like failures as IO (the task then fails with the message).
  virtual Result<int64_t> Launch(const LaunchRequest& request) = 0;

  // After a restart: what became of each launch the journal says is running (`handles[i]` is
  // the journalled handle, 0 when the daemon died before journalling it). Per request: NotFound
  // = it was never launched (safe to Launch now); otherwise the handle to keep, plus `end` when
  // it already ended (TaskEnd::ended_s and start from the backend's record where it keeps one,
  // 0 = unknown). A launch found still running is watched from now on (and its start
  // reported through the start callback when the backend reads starts back).
  struct Recovered {
    int64_t handle = 0;
    std::optional<TaskEnd> end;
    // A launch still running: where and when it really started, when the backend reads it
    // here rather than through the start callback (Kubernetes: the containers' startedAt).
    std::optional<TaskStart> start = std::nullopt;
  };
  virtual std::vector<Result<Recovered>> Recover(const std::vector<LaunchRequest>& requests,
                                                 const std::vector<int64_t>& handles) = 0;

  // Stops launch (task_id, attempt) (SIGTERM then SIGKILL, scancel). Its end is still reported
  // through the callback. Not an error when it already ended or was never launched.
  virtual void Cancel(int64_t task_id, int attempt) = 0;

  // Whether launch (task_id, attempt) is known to have started although no start was reported
  // (Slurm with --slurm-output: its job script's run-once marker exists, and a slurmctld
  // restart may have lost the start). A drain then leaves it running instead of placing it
  // anew. Default: false.
  virtual bool StartedAnyway(int64_t /*task_id*/, int /*attempt*/) const { return false; }

  // Whether `node` takes new work. False while the world outside hase keeps new work off it
  // (Kubernetes: cordoned, spec.unschedulable) — what already runs there keeps running; the
  // daemon neither advises nor binds anything new there. Default: true.
  virtual bool AcceptsNewWork(const std::string& /*node*/) const { return true; }

  // The backend's own name for one GPU of catalog type `gpu_type` on `node`, for people and
  // for Slurm's job_submit.lua (Slurm: "gpu:a100:1"); "" when it has none.
  virtual std::string NativeResource(const std::string& /*node*/, const std::string& /*gpu_type*/) const {
    return "";
  }
};

}  // namespace hase::service
