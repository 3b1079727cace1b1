// RunIsolated: runs a function in a forked child process, so that a crash or a hang inside it
// (a third-party library dereferencing null, dividing by zero, looping) costs one Status instead
// of the process — `hase kernels` or the daemon that called it.
//
// The child inherits the caller's memory copy-on-write, runs `fn`, sends what it returns back
// through a pipe and leaves with _exit (no atexit handlers, no destructors, no stdio flush). The
// parent reads until the child closes the pipe or the deadline passes (then it kills the child
// with SIGKILL), and reaps it by pid: a process that reaps its children itself (SIGCHLD ignored,
// waitpid(-1)) does not confuse it, because success is told by a complete reply on the pipe,
// not by the exit status.
//
// Costs: one fork, the copy-on-write page faults of child and parent afterwards, and copying
// the reply (measured: 1.3 ms per call of a function returning one byte, from a small process on
// one core; ViT-B/16's inference phase in `hase kernels`: +18 ms CPU, README "Kernels"). Only the calling thread exists in the child; `fn` must not
// wait for locks another thread of the caller may hold (it may allocate: glibc's malloc is
// reset in the child).
// Thread-safety: reentrant; concurrent calls from several threads each fork their own child.
#pragma once

#include <functional>
#include <string>

#include "hase/base/status.h"

namespace hase {

struct IsolatedCallOptions {
  // What the call does, for messages: "ONNX shape inference".
  std::string what = "isolated call";
  // Wall-clock limit in seconds; past it the child is killed and the call fails. Default 300.
  double timeout_s = 300;
};

// Runs `fn` in a child process and returns the bytes it returned. `fn` reports its own failure
// as a non-OK Status (carried back as is) or by throwing std::exception (returned as
// InvalidArgument with what()). Errors: Internal when the child died by a signal ("<what>
// crashed (SIGSEGV)"), exited without a reply, or ran past timeout_s (it is then killed); IO
// when fork, pipe or waiting on the pipe fail.
Result<std::string> RunIsolated(const std::function<Result<std::string>()>& fn,
                                const IsolatedCallOptions& options = {});

}  // namespace hase
