// Backend: where tasks actually run, the one seam between the daemon (queue + policy + journal)
// and the world that starts processes or jobs.
//
// The daemon decides *where* (node, GPU) and journals it; a backend makes it happen and tells
// the daemon how it ended:
//   local   (local_backend.h)  forks the command on this host (`hase serve --executor`)
//   slurm   (slurm_backend.h)  sbatch pinned to the node and GPU type, followed to its end
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
  std::string pod;          // "namespace/name" when the task is a Kubernetes pod, else ""
  std::string pod_uid;      // that pod's metadata.uid ("" when unknown)
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
  double ended_s = 0;  // wall seconds
  // When the launch really started, wall seconds (Kubernetes: the containers' startedAt), so a
  // run that started while hase was down is accounted from its own start; 0 = unknown (the
  // daemon keeps the start it journalled).
  double started_s = 0;
};

class Backend {
 public:
  // (task id, attempt, how it ended). Reported once per launch, also for cancelled launches.
  using EndCallback = std::function<void(int64_t task_id, int attempt, const TaskEnd& end)>;
  // A node became unusable (healthy=false: drained, down) or usable again.
  using NodeCallback = std::function<void(const std::string& node, bool healthy, const std::string& reason)>;

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
  virtual void Stop() = 0;

  // Starts one launch. Returns a handle (> 0: process id, Slurm job id) journalled with the
  // task; 0 = sent but not confirmed (Kubernetes: the binding's answer did not come within the
  // bind budget): the backend follows it like a started launch and reports its end, and the
  // daemon may call Launch again for the same launch to confirm it (it must not start twice). Errors: IO/Unavailable-like failures as IO (the task then fails with the message).
  virtual Result<int64_t> Launch(const LaunchRequest& request) = 0;

  // After a restart: what became of each launch the journal says is running (`handles[i]` is
  // the journalled handle, 0 when the daemon died before journalling it). Per request: NotFound
  // = it was never launched (safe to Launch now); otherwise the handle to keep, plus `end` when
  // it already ended. A launch found still running is watched from now on.
  struct Recovered {
    int64_t handle = 0;
    std::optional<TaskEnd> end;
    double started_s = 0;  // a launch still running: when it really started (0 = unknown)
  };
  virtual std::vector<Result<Recovered>> Recover(const std::vector<LaunchRequest>& requests,
                                                 const std::vector<int64_t>& handles) = 0;

  // Stops launch (task_id, attempt) (SIGTERM then SIGKILL, scancel). Its end is still reported
  // through the callback. Not an error when it already ended or was never launched.
  virtual void Cancel(int64_t task_id, int attempt) = 0;

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
