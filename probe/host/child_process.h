// ChildProcess: runs the stressor (`hase-probe stress LEVEL`) as a separate process, waits
// until it reports "ready" on its stdout, and stops it with SIGTERM.
//
// A separate process, not a thread: the background load must come from another CUDA context,
// as a co-located inference task would.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "hase/base/status.h"

namespace hase::probe {

class ChildProcess {
 public:
  // Starts argv[0] (a path) with argv, stdout piped to us (stderr inherited), then waits up to
  // timeout_ms for a line equal to `ready_line`. Errors: InvalidArgument (empty argv), IO (spawn
  // or pipe failed), Internal (the child exited or timed out before it was ready; it is killed
  // and its output so far is in the message).
  static Result<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                     const std::string& ready_line,
                                                     int timeout_ms);
  // Stops the child (SIGTERM, then SIGKILL after 5 s) if still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Sends SIGTERM and waits up to 5 s (then SIGKILL). Returns the exit status (128 + signal
  // when killed by a signal). Idempotent: later calls return the first result.
  int Stop();
  // True while the child has not exited.
  bool Running();
  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, int out_fd) : pid_(pid), out_fd_(out_fd) {}
  pid_t pid_;
  int out_fd_;
  bool reaped_ = false;
  int exit_status_ = -1;
};

}  // namespace hase::probe
