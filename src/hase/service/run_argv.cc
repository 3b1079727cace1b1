#include "hase/service/run_argv.h"
#include "hase/base/seconds_text.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

extern char** environ;

namespace hase::service {
namespace {

constexpr size_t kMaxOut = size_t{64} << 20;
constexpr size_t kMaxErr = size_t{1} << 20;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Result<ArgvResult> RunArgv(const std::vector<std::string>& argv, double timeout_s,
                           const std::vector<std::string>& env) {
  if (argv.empty()) return Status::InvalidArgument("RunArgv: empty argument vector");
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Status::IO(std::string("pipe: ") + std::strerror(errno), argv[0]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]), ::close(out_pipe[1]);
    return Status::IO(std::string("pipe: ") + std::strerror(errno), argv[0]);
  }
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]), ::close(out_pipe[1]), ::close(err_pipe[0]), ::close(err_pipe[1]);
    return Status::IO(std::string("pipe: ") + std::strerror(errno), argv[0]);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child's environment, built before fork (the child may only make async-signal-safe calls).
  std::vector<char*> envp;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view var(*e);
    const std::string_view name = var.substr(0, var.find('='));
    bool replaced = false;
    for (const std::string& x : env) replaced = replaced || std::string_view(x).substr(0, x.find('=')) == name;
    if (!replaced) envp.push_back(*e);
  }
  for (const std::string& x : env) envp.push_back(const_cast<char*>(x.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]}) ::close(fd);
    return Status::IO(std::string("fork: ") + std::strerror(errno), argv[0]);
  }
  if (pid == 0) {  // child: async-signal-safe calls only
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execvpe(args[0], args.data(), envp.data());
    const int e = errno;
    (void)!::write(exec_pipe[1], &e, sizeof e);  // tells the parent exec failed, and why
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  int fds[3] = {out_pipe[0], err_pipe[0], exec_pipe[0]};
  ArgvResult r;
  int exec_errno = 0;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[65536];
  while (fds[0] >= 0 || fds[1] >= 0 || fds[2] >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p[3];
    for (int i = 0; i < 3; ++i) p[i] = {fds[i], POLLIN, 0};
    const int n = ::poll(p, 3, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 3; ++i) {
      if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t k = ::read(fds[i], buf, sizeof buf);
      if (k <= 0) {
        if (k < 0 && errno == EINTR) continue;
        CloseFd(fds[i]);
        continue;
      }
      if (i == 0 && r.out.size() < kMaxOut) r.out.append(buf, static_cast<size_t>(k));
      if (i == 1 && r.err.size() < kMaxErr) r.err.append(buf, static_cast<size_t>(k));
      if (i == 2 && static_cast<size_t>(k) >= sizeof exec_errno) std::memcpy(&exec_errno, buf, sizeof exec_errno);
    }
  }
  for (int& fd : fds) CloseFd(fd);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exec_errno != 0) return Status::IO("cannot run " + argv[0] + ": " + std::strerror(exec_errno), argv[0]);
  if (timed_out) {
    return Status::IO(argv[0] + " timed out after " + SecondsText(timeout_s),
                      argv[0]);
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  return r;
}

}  // namespace hase::service
