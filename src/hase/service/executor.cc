#include "hase/service/executor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "hase/telemetry/gpu_load_table.h"

namespace hase::service {
namespace {

// $0 = the user's command, $1 = file base. Writes the exit code last (rename makes it appear
// atomically). The pid file is written by the forked child before exec (Spawn).
constexpr const char* kWrapper =
    "/bin/sh -c \"$0\"; c=$?; "
    "echo $c > \"$1.exit.tmp\" && mv \"$1.exit.tmp\" \"$1.exit\"; exit $c";

constexpr int kPidFileBytes = 24;  // "<pid>" padded with spaces, "\n"

std::optional<int64_t> ReadNumber(const std::string& path) {
  std::ifstream f(path);
  int64_t v = 0;
  if (f >> v) return v;
  return std::nullopt;
}

// When `path` was last written, wall seconds; 0 when it cannot be read.
double WrittenAt(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9;
}

bool Alive(int64_t pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) {
    // A zombie (reparented, not yet reaped) counts as ended.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string a, b, state;
    if (stat >> a >> b >> state && state == "Z") return false;
    return true;
  }
  return errno == EPERM;
}

}  // namespace

Executor::Executor(ExecutorOptions options, ExitCallback on_exit)
    : options_(std::move(options)), on_exit_(std::move(on_exit)) {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
}

Executor::~Executor() { Stop(); }

std::string Executor::Base(int64_t task_id, int attempt) const {
  return (std::filesystem::path(options_.dir) / (std::to_string(task_id) + "-" + std::to_string(attempt))).string();
}

void Executor::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Executor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

Result<int64_t> Executor::Spawn(int64_t task_id, int attempt, const std::string& command,
                                const std::string& visible_devices) {
  const std::string base = Base(task_id, attempt);
  for (const char* ext : {".pid", ".exit"}) std::remove((base + ext).c_str());
  const std::string out = base + ".out", err = base + ".err";
  const std::string& cuda = visible_devices;
  const std::string id = std::to_string(task_id);
  const std::string pid_tmp = base + ".pid.tmp", pid_file = base + ".pid";
  // The pid file's space is taken here, before fork: on a full disk the launch fails (the task
  // fails with this reason) instead of a process running that a restart could not find.
  {
    const int fp = ::open(pid_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = fp < 0 ? errno : ::posix_fallocate(fp, 0, kPidFileBytes);
    if (fp >= 0) ::close(fp);
    if (err != 0 && err != EOPNOTSUPP && err != EINVAL) {
      std::remove(pid_tmp.c_str());
      return Status::IO(std::string("cannot write the pid file: ") + std::strerror(err), pid_tmp,
                        "free space in the state directory");
    }
  }
  pid_t pid = ::fork();
  if (pid < 0) return Status::IO(std::string("fork failed: ") + std::strerror(errno), "executor");
  if (pid == 0) {
    // Child: only async-signal-safe calls from here to exec.
    ::setsid();
    // Record the pid before anything else, so a daemon killed right after fork() still finds
    // this process at restart (and does not start the task a second time).
    {
      char buf[kPidFileBytes];
      int n = 0;
      char rev[24];
      for (pid_t v = ::getpid(); v > 0; v /= 10) rev[n++] = static_cast<char>('0' + v % 10);
      for (int i = 0; i < n; ++i) buf[i] = rev[n - 1 - i];
      while (n < kPidFileBytes - 1) buf[n++] = ' ';  // fills the space taken before fork
      buf[n++] = '\n';
      // No pid file, no command: a process a restarted daemon cannot find must never run.
      int fp = ::open(pid_tmp.c_str(), O_WRONLY | O_CREAT, 0644);
      if (fp < 0 || ::pwrite(fp, buf, n, 0) != n || ::fsync(fp) != 0 || ::close(fp) != 0 ||
          ::rename(pid_tmp.c_str(), pid_file.c_str()) != 0) {
        ::_exit(127);
      }
    }
    int fo = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fi = ::open("/dev/null", O_RDONLY);
    if (fo >= 0) ::dup2(fo, 1);
    if (fe >= 0) ::dup2(fe, 2);
    if (fi >= 0) ::dup2(fi, 0);
    ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    ::setenv("CUDA_VISIBLE_DEVICES", cuda.c_str(), 1);
    ::setenv("HASE_TASK_ID", id.c_str(), 1);
    ::execl("/bin/sh", "sh", "-c", kWrapper, command.c_str(), base.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::lock_guard<std::mutex> lock(mu_);
  procs_[{task_id, attempt}] = Proc{pid, true, 0};
  return static_cast<int64_t>(pid);
}

Result<Executor::Found> Executor::Recover(int64_t task_id, int attempt) const {
  const std::string base = Base(task_id, attempt);
  Found f;
  f.started_s = WrittenAt(base + ".pid");
  if (auto code = ReadNumber(base + ".exit")) {
    f.exit_code = static_cast<int>(*code);
    f.pid = ReadNumber(base + ".pid").value_or(0);
    f.ended_s = WrittenAt(base + ".exit");  // the wrapper writes it as the command ends
    return f;
  }
  auto pid = ReadNumber(base + ".pid");
  if (!pid) return Status::NotFound("task " + std::to_string(task_id) + " never started", base);
  f.pid = *pid;
  if (!Alive(f.pid)) f.exit_code = -1;  // ended without writing an exit code
  return f;
}

void Executor::Watch(int64_t task_id, int attempt, int64_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  procs_[{task_id, attempt}] = Proc{pid, false, 0};
}

void Executor::Kill(int64_t task_id, double grace_s) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = procs_.lower_bound({task_id, 0}); it != procs_.end() && it->first.first == task_id; ++it) {
    ::kill(-static_cast<pid_t>(it->second.pid), SIGTERM);  // its whole session/process group
    it->second.kill_deadline_s = telemetry::WallClockSeconds() + grace_s;
  }
}

size_t Executor::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return procs_.size();
}

void Executor::Loop() {
  for (;;) {
    struct Ended {
      int64_t task_id;
      int attempt;
      int code;
    };
    std::vector<Ended> ended;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      const double now = telemetry::WallClockSeconds();
      for (auto it = procs_.begin(); it != procs_.end();) {
        Proc& p = it->second;
        bool done = false;
        int code = -1;
        if (p.own_child) {
          int status = 0;
          pid_t r = ::waitpid(static_cast<pid_t>(p.pid), &status, WNOHANG);
          if (r == static_cast<pid_t>(p.pid)) {
            done = true;
            if (WIFEXITED(status)) code = WEXITSTATUS(status);
            if (WIFSIGNALED(status)) code = 128 + WTERMSIG(status);
          } else if (r < 0) {
            done = true;
          }
        } else if (!Alive(p.pid)) {
          done = true;
        }
        if (done) {
          // Stopping it: the wrapper died of the SIGTERM, but a command that ignores SIGTERM
          // (trap "" TERM) lives on in its process group; SIGKILL that now, not never.
          if (p.kill_deadline_s > 0) ::kill(-static_cast<pid_t>(p.pid), SIGKILL);
          // The wrapper's exit file is authoritative when present (adopted processes).
          if (auto f = ReadNumber(Base(it->first.first, it->first.second) + ".exit")) code = static_cast<int>(*f);
          ended.push_back({it->first.first, it->first.second, code});
          it = procs_.erase(it);
          continue;
        }
        if (p.kill_deadline_s > 0 && now >= p.kill_deadline_s) {
          ::kill(-static_cast<pid_t>(p.pid), SIGKILL);
          p.kill_deadline_s = 0;
        }
        ++it;
      }
    }
    const double now = telemetry::WallClockSeconds();
    for (const Ended& e : ended) on_exit_(e.task_id, e.attempt, e.code, now);
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.poll_interval_s));
  }
}

}  // namespace hase::service
