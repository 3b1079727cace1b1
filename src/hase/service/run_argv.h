// RunArgv: runs a program with an argument vector (fork + execvp, no shell), captures its
// stdout and stderr, and kills it when it overruns a timeout. The Slurm backend calls sbatch,
// squeue, scontrol and scancel through it, so no task field is ever parsed by a shell.
//
// Thread-safety: reentrant; each call forks its own child.
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"

namespace hase::service {

struct ArgvResult {
  int exit_code = -1;  // the program's exit code; 128+N when killed by signal N
  std::string out;     // stdout (at most 64 MiB kept)
  std::string err;     // stderr (at most 1 MiB kept)
};

// Runs argv[0] (looked up in PATH) with `argv`, stdin from /dev/null, for at most `timeout_s`
// seconds, in this process's environment plus `env` ("NAME=value", replacing a variable of
// that name). Returns the result whatever the exit code. Errors: InvalidArgument (empty argv),
// IO (fork/pipe failed, the program could not be executed: "cannot run X: reason"; it timed
// out: "X timed out after N s", the child killed with SIGKILL).
Result<ArgvResult> RunArgv(const std::vector<std::string>& argv, double timeout_s,
                           const std::vector<std::string>& env = {});

}  // namespace hase::service
