// Executor: runs task commands on this node's GPUs (standalone mode) and reports their end.
//
// Each task runs as `/bin/sh -c <command>` in its own session (setsid), with
//   CUDA_DEVICE_ORDER=PCI_BUS_ID   so CUDA numbers GPUs as NVML/DCGM do (`gpu` label)
//   CUDA_VISIBLE_DEVICES=<devices> the GPU's index on its node, or a MIG instance's MIG-… UUID
//                                  (LaunchRequest::visible_devices)
//   HASE_TASK_ID=<id>
// stdout/stderr go to <dir>/<id>-<attempt>.out/.err. The forked child writes its pid to
// <id>-<attempt>.pid before exec, and a small shell wrapper writes the exit code to
// <id>-<attempt>.exit (atomically, via rename) after the command, so a restarted daemon can
// adopt processes that outlived a `kill -9` of the daemon, learn their exit codes, and never
// start a task twice.
//
// Thread-safety: all methods may be called from any thread. The exit callback runs on the
// executor's monitor thread, never under the executor's lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "hase/base/status.h"

namespace hase::service {

struct ExecutorOptions {
  std::string dir;              // where .pid/.exit/.out/.err files go (created)
  double poll_interval_s = 0.05;  // how often the monitor looks for ended processes
};

class Executor {
 public:
  // (task id, attempt, exit code, end time in wall seconds). exit code -1: the process
  // vanished without an exit code (killed together with its wrapper); 128+N: killed by signal N.
  using ExitCallback = std::function<void(int64_t task_id, int attempt, int exit_code, double ended_s)>;

  Executor(ExecutorOptions options, ExitCallback on_exit);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Starts the monitor thread. Idempotent.
  void Start();
  void Stop();

  // Spawns the command of (task_id, attempt) with CUDA_VISIBLE_DEVICES=`visible_devices`
  // ("2", "MIG-…"). Returns the pid. Errors: IO "cannot write the pid file: …" (full disk, the
  // file's space is claimed before fork) or "fork failed: …": no process exists, and the daemon
  // re-queues the task. A child that cannot write its pid exits before the command runs.
  Result<int64_t> Spawn(int64_t task_id, int attempt, const std::string& command, const std::string& visible_devices);

  // After a restart: what became of (task_id, attempt)? Reads its .pid/.exit files. Returns
  // the pid to watch (the process is alive; Watch() it) or the exit code when it already
  // ended; NotFound when it never started (no .pid file: the daemon died before fork, so it
  // is safe to start it again).
  struct Found {
    int64_t pid = 0;
    std::optional<int> exit_code;
    double started_s = 0;  // when the .pid file was written (the fork), wall s; 0 = unknown
    double ended_s = 0;    // ended: when the .exit file was written, wall s; 0 = unknown
  };
  Result<Found> Recover(int64_t task_id, int attempt) const;
  // Watches a process this executor did not spawn (adopted after a restart).
  void Watch(int64_t task_id, int attempt, int64_t pid);

  // Sends SIGTERM, then SIGKILL after `grace_s`, to the process group of every attempt of the
  // task. Its end is still reported through the callback. Not an error when it already ended.
  void Kill(int64_t task_id, double grace_s = 2.0);

  // Tasks being watched.
  size_t running() const;

 private:
  struct Proc {
    int64_t pid = 0;
    bool own_child = false;
    double kill_deadline_s = 0;  // > 0: SIGKILL after this wall time
  };
  void Loop();
  std::string Base(int64_t task_id, int attempt) const;

  const ExecutorOptions options_;
  const ExitCallback on_exit_;
  mutable std::mutex mu_;
  std::map<std::pair<int64_t, int>, Proc> procs_;  // guarded by mu_, by (task id, attempt)
  bool stop_ = false;              // guarded by mu_
  std::thread thread_;
};

}  // namespace hase::service
