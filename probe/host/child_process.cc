#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace hase::probe {
namespace {

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(const std::vector<std::string>& argv,
                                                          const std::string& ready_line,
                                                          int timeout_ms) {
  if (argv.empty()) return Status::InvalidArgument("empty command", "ChildProcess");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::IO(std::string("pipe: ") + strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Status::IO(fmt::format("cannot start {}: {}", argv[0], strerror(rc)));
  }
  std::unique_ptr<ChildProcess> child(new ChildProcess(pid, fds[0]));
  std::string buffer, seen;  // unparsed output; all output (for the error message)
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
      if (buffer.substr(0, nl) == ready_line) return child;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char chunk[512];
    const ssize_t got = read(fds[0], chunk, sizeof chunk);
    if (got <= 0) break;  // the child closed stdout (exited)
    buffer.append(chunk, static_cast<size_t>(got));
    seen.append(chunk, static_cast<size_t>(got));
  }
  const int status = child->Stop();
  return Status::Internal(fmt::format("{} did not report '{}' (exit status {}); output: {}",
                                      argv[0], ready_line, status, seen),
                          "stressor", "run the same `hase-probe stress` command by hand");
}

bool ChildProcess::Running() {
  if (reaped_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    exit_status_ = DecodeStatus(status);
    return false;
  }
  return true;
}

int ChildProcess::Stop() {
  if (!reaped_) {
    kill(pid_, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    reaped_ = true;
    exit_status_ = DecodeStatus(status);
  }
  if (out_fd_ >= 0) {
    close(out_fd_);
    out_fd_ = -1;
  }
  return exit_status_;
}

ChildProcess::~ChildProcess() { Stop(); }

}  // namespace hase::probe
