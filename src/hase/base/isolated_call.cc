#include "hase/base/isolated_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>

namespace hase {
namespace {

// Reply frame, child → parent: one tag byte, then length-prefixed (uint64, host order) fields.
//   'O' payload                       fn returned bytes
//   'S' code message where hint       fn returned a Status
//   'X' message                       fn threw
constexpr char kOk = 'O', kStatus = 'S', kThrew = 'X';

void AppendField(std::string* out, const std::string& s) {
  const uint64_t n = s.size();
  out->append(reinterpret_cast<const char*>(&n), sizeof n);
  out->append(s);
}

// Reads field `i` of a frame body; false while the frame is incomplete.
bool ReadField(const std::string& buf, size_t* pos, std::string* out) {
  uint64_t n = 0;
  if (buf.size() - *pos < sizeof n) return false;
  std::memcpy(&n, buf.data() + *pos, sizeof n);
  if (buf.size() - *pos - sizeof n < n) return false;
  out->assign(buf, *pos + sizeof n, n);
  *pos += sizeof n + n;
  return true;
}

Status MakeStatus(int code, std::string msg, std::string where, std::string hint) {
  using C = Status::Code;
  switch (static_cast<C>(code)) {
    case C::kInvalidArgument: return Status::InvalidArgument(msg, where, hint);
    case C::kNotFound: return Status::NotFound(msg, where, hint);
    case C::kUnsupported: return Status::Unsupported(msg, where, hint);
    case C::kParse: return Status::Parse(msg, where, hint);
    case C::kIO: return Status::IO(msg, where, hint);
    case C::kConflict: return Status::Conflict(msg, where, hint);
    default: return Status::Internal(msg, where, hint);
  }
}

// The reply in `buf` if it is complete; nullopt while bytes are missing.
std::optional<Result<std::string>> ParseReply(const std::string& buf) {
  if (buf.empty()) return std::nullopt;
  size_t pos = 1;
  std::string a, b, c, d;
  switch (buf[0]) {
    case kOk:
      if (!ReadField(buf, &pos, &a)) return std::nullopt;
      return Result<std::string>(std::move(a));
    case kThrew:
      if (!ReadField(buf, &pos, &a)) return std::nullopt;
      return Result<std::string>(Status::InvalidArgument(std::move(a)));
    case kStatus:
      if (!ReadField(buf, &pos, &a) || !ReadField(buf, &pos, &b) || !ReadField(buf, &pos, &c) ||
          !ReadField(buf, &pos, &d) || a.size() != sizeof(int32_t)) {
        return std::nullopt;
      }
      {
        int32_t code = 0;
        std::memcpy(&code, a.data(), sizeof code);
        if (code == 0) code = static_cast<int32_t>(Status::Code::kInternal);  // never OK
        return Result<std::string>(MakeStatus(code, std::move(b), std::move(c), std::move(d)));
      }
    default:
      return Result<std::string>(Status::Internal("unreadable reply from the child process"));
  }
}

[[noreturn]] void ChildMain(int fd, const std::function<Result<std::string>()>& fn) {
  // A crash here is expected and reported by the parent: no core file.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // Write ends of other callers' pipes (threads forking at the same time) must not stay open
  // here, or their readers wait for this child to exit before they see their own child's EOF.
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  std::string frame;
  try {
    Result<std::string> r = fn();
    if (r.ok()) {
      frame.push_back(kOk);
      AppendField(&frame, *r);
    } else {
      const Status& s = r.status();
      frame.push_back(kStatus);
      const int32_t code = static_cast<int32_t>(s.code());
      AppendField(&frame, std::string(reinterpret_cast<const char*>(&code), sizeof code));
      AppendField(&frame, s.message());
      AppendField(&frame, s.where());
      AppendField(&frame, s.hint());
    }
  } catch (const std::exception& e) {
    frame.clear();
    frame.push_back(kThrew);
    AppendField(&frame, e.what());
  } catch (...) {
    frame.clear();
    frame.push_back(kThrew);
    AppendField(&frame, "unknown exception");
  }
  size_t off = 0;
  while (off < frame.size()) {
    const ssize_t n = ::write(fd, frame.data() + off, frame.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    off += static_cast<size_t>(n);
  }
  ::_exit(0);
}

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace

Result<std::string> RunIsolated(const std::function<Result<std::string>()>& fn,
                                const IsolatedCallOptions& options) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::IO(options.what + ": cannot create a pipe: " + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::IO(options.what + ": cannot fork: " + std::strerror(err),
                      "", "free memory or raise the process limit (ulimit -u)");
  }
  if (pid == 0) {
    ::close(fds[0]);
    ChildMain(fds[1], fn);
  }
  ::close(fds[1]);
  const int rfd = fds[0];

  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::microseconds(static_cast<int64_t>(options.timeout_s * 1e6));
  std::string buf;
  std::optional<Result<std::string>> reply;
  int wstatus = 0;
  bool reaped = false, eof = false, timed_out = false;
  int poll_errno = 0;
  char chunk[65536];
  while (!reply && !eof) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{rfd, POLLIN, 0};
    // Slices of at most 100 ms: a child that died while another process still holds the
    // pipe's write end is noticed by waitpid below, not by EOF.
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    if (ready < 0 && errno != EINTR) {
      poll_errno = errno;  // cannot wait on the pipe: stop the child rather than block on it
      break;
    }
    if (ready > 0) {
      const ssize_t n = ::read(rfd, chunk, sizeof chunk);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        eof = true;
      } else {
        buf.append(chunk, static_cast<size_t>(n));
        reply = ParseReply(buf);
      }
      continue;
    }
    if (!reaped) {
      const pid_t w = ::waitpid(pid, &wstatus, WNOHANG);
      if (w == pid || (w < 0 && errno == ECHILD)) {
        reaped = w == pid;
        // Dead (or reaped by someone else): take what is left in the pipe and stop.
        ::fcntl(rfd, F_SETFL, O_NONBLOCK);
        ssize_t n;
        while ((n = ::read(rfd, chunk, sizeof chunk)) > 0) buf.append(chunk, static_cast<size_t>(n));
        reply = ParseReply(buf);
        eof = true;
        if (w < 0) reaped = true;  // nothing left to reap
      }
    }
  }
  ::close(rfd);
  if (timed_out || poll_errno != 0) ::kill(pid, SIGKILL);
  if (!reaped) {
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  if (reply && !timed_out) return std::move(*reply);
  if (poll_errno != 0) {
    return Status::IO(options.what + ": cannot wait for the child process: " +
                      std::strerror(poll_errno));
  }
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", options.timeout_s);
  if (timed_out) {
    return Status::Internal(options.what + " did not finish in " + limit + " s and was stopped",
                            "", "the input may be too large or make the library loop");
  }
  if (WIFSIGNALED(wstatus)) {
    return Status::Internal(options.what + " crashed (" + SignalName(WTERMSIG(wstatus)) + ")");
  }
  if (WIFEXITED(wstatus)) {
    return Status::Internal(options.what + " exited with status " +
                            std::to_string(WEXITSTATUS(wstatus)) + " without a result");
  }
  return Status::Internal(options.what + " ended without a result");
}

}  // namespace hase
