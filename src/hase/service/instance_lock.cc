#include "hase/service/instance_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hase/telemetry/gpu_load_table.h"

namespace hase::service {
namespace {

using nlohmann::json;

constexpr size_t kRecordBytes = 1024;  // one fixed-size record, rewritten in place
constexpr const char* kLockFile = "hase.lock";
// A holder stops writing the journal once its last renewal is older than this part of the
// lease; a standby takes over only after a whole lease without a change it can see (the
// margin covers the write and the standby's poll).
constexpr double kFenceFraction = 0.8;

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return std::string(buf).substr(0, 200);
}

// A process that exists and is not a zombie (EPERM: exists, another user's).
bool PidAlive(int64_t pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == EPERM;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string a, b, state;
  if (stat >> a >> b >> state && state == "Z") return false;
  return true;
}

struct Record {
  bool exists = false;  // the file has content
  bool parsed = false;  // ... that is a record (a torn or foreign file is not)
  std::string raw;      // what was read, to notice changes
  LeaseHolder holder;
};

Record ReadRecord(const std::string& path) {
  Record r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // afresh: NFS close-to-open
  if (fd < 0) return r;
  char buf[4096];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  if (n <= 0) return r;
  r.raw.assign(buf, static_cast<size_t>(n));
  while (!r.raw.empty() && (r.raw.back() == ' ' || r.raw.back() == '\n' || r.raw.back() == '\0')) r.raw.pop_back();
  if (r.raw.empty()) return r;
  r.exists = true;
  json j = json::parse(r.raw, nullptr, false);
  if (!j.is_object()) return r;
  try {
    LeaseHolder& h = r.holder;
    h.pid = j.at("pid").get<int64_t>();
    h.host = j.at("host").get<std::string>();
    h.listen = j.value("listen", "");
    h.token = j.at("token").get<std::string>();
    h.seq = j.value("seq", int64_t{0});
    h.started_s = j.value("started_s", 0.0);
    h.renewed_s = j.value("renewed_s", 0.0);
    h.expires_s = j.value("expires_s", 0.0);
    h.released = j.value("released", false);
    r.parsed = true;
  } catch (const json::exception&) {
  }
  return r;
}

std::string Serialize(const LeaseHolder& h) {
  json j{{"pid", h.pid},           {"host", h.host},           {"listen", h.listen},
         {"token", h.token},       {"seq", h.seq},             {"started_s", h.started_s},
         {"renewed_s", h.renewed_s}, {"expires_s", h.expires_s}, {"released", h.released}};
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > kRecordBytes - 1) s.resize(kRecordBytes - 1);  // cannot happen: host ≤ 200 chars
  s.resize(kRecordBytes - 1, ' ');
  s += '\n';
  return s;
}

enum class FlockResult { kHeld, kBusy, kUnsupported };

FlockResult TryFlock(int fd) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return FlockResult::kHeld;
  if (errno == EWOULDBLOCK) return FlockResult::kBusy;
  return FlockResult::kUnsupported;  // ENOLCK (NFS without lockd), EOPNOTSUPP, ...
}

// One look at the lock: take it, or say who holds it. `unchanged_for_s` is how long the record
// has read the same to this standby (0 for a one-shot Acquire).
struct Attempt {
  std::unique_ptr<InstanceLock> lock;  // taken
  std::optional<LeaseHolder> holder;   // else: who holds it (when its record says)
  std::string why;                     // else: why it is held, for people
};

}  // namespace

std::string LeaseHolder::Describe(double now_s) const {
  std::string s = fmt::format("pid {} on host {}", pid, host);
  s += listen.empty() ? ", not listening yet" : ", listening on " + listen;
  if (renewed_s > 0) s += fmt::format(", lease renewed {:.1f} s ago", std::max(0.0, now_s - renewed_s));
  return s;
}

InstanceLock::InstanceLock(std::string path, int fd, bool has_flock, InstanceLockOptions options, LeaseHolder self)
    : path_(std::move(path)),
      fd_(fd),
      has_flock_(has_flock),
      options_(std::move(options)),
      renewed_mono_(MonotonicSeconds()),
      self_(std::move(self)) {}

Status InstanceLock::WriteRecord(const LeaseHolder& h) {
  const std::string s = Serialize(h);
  // In place: no new blocks after the first write, so a full disk does not fail a renewal.
  ssize_t n = ::pwrite(fd_, s.data(), s.size(), 0);
  if (n != static_cast<ssize_t>(s.size())) {
    return Status::IO(std::string("cannot write the lease record: ") + (n < 0 ? std::strerror(errno) : "short write"),
                      path_);
  }
  if (::fdatasync(fd_) != 0) {
    return Status::IO(std::string("cannot sync the lease record: ") + std::strerror(errno), path_);
  }
  return Status::OK();
}

namespace {

// Tries once. Errors: IO (cannot open or write the lock file).
Result<Attempt> TryOnce(const std::string& dir, const InstanceLockOptions& options, bool standby,
                        double unchanged_for_s, const std::function<std::unique_ptr<InstanceLock>(
                            std::string, int, bool, LeaseHolder)>& make) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IO("cannot create state directory: " + ec.message(), dir);
  const std::string path = (std::filesystem::path(dir) / kLockFile).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IO(std::string("cannot open the instance lock: ") + std::strerror(errno), path);
  const FlockResult fl = TryFlock(fd);
  const Record rec = ReadRecord(path);
  const std::string me = HostName();
  const double now = telemetry::WallClockSeconds();
  Attempt a;
  if (rec.parsed) a.holder = rec.holder;
  const LeaseHolder& h = rec.holder;
  const bool same_host = rec.parsed && h.host == me;
  // Is the recorded holder alive? On this host the kernel knows: flock taken means it is gone
  // (kill -9 included); flock busy and its pid alive means it runs (perhaps hung or stopped:
  // never replaced while it exists, or two daemons would write). On another host only the lease
  // says: unchanged for a whole lease on this standby's monotonic clock, or (one-shot) its
  // expires_s past on this host's wall clock.
  bool alive = rec.parsed && !h.released;
  if (alive && same_host) {
    alive = fl != FlockResult::kHeld && PidAlive(h.pid);
  } else if (alive) {
    alive = standby ? unchanged_for_s < options.lease_s : now <= h.expires_s;
  }
  bool take = false;
  if (alive) {
    a.why = "held by " + h.Describe(now);
    if (same_host && standby && unchanged_for_s >= options.lease_s) {
      a.why += " (its lease is not renewed, but its process lives: kill it to let this standby take over)";
    }
  } else if (fl == FlockResult::kHeld || fl == FlockResult::kUnsupported) {
    take = true;
  } else if (standby && unchanged_for_s >= options.lease_s && !(same_host && PidAlive(h.pid))) {
    // flock is held but nobody renews: a crashed NFS client whose lock the server keeps until
    // its grace period. The lease decides.
    take = true;
  } else {
    a.why = rec.parsed ? "the lock file is locked by a process whose lease is " +
                             std::string(h.released ? "released" : "stale") + " (" + h.Describe(now) + ")"
                       : "the lock file is locked by a process that has not written its record yet";
  }
  if (!take) {
    ::close(fd);
    return a;
  }
  LeaseHolder self;
  self.pid = ::getpid();
  self.host = me;
  self.listen = options.listen;
  self.token = fmt::format("{}:{}:{}", me, self.pid,
                           std::chrono::steady_clock::now().time_since_epoch().count());
  self.started_s = now;
  self.renewed_s = now;
  self.expires_s = now + options.lease_s;
  // Allocated, not only sized: renewals rewrite these blocks in place and never need new ones.
  int fa = ::posix_fallocate(fd, 0, kRecordBytes);
  if (fa == EOPNOTSUPP || fa == EINVAL) fa = ::ftruncate(fd, kRecordBytes) == 0 ? 0 : errno;
  if (fa != 0) {
    Status st = Status::IO(std::string("cannot size the instance lock: ") + std::strerror(fa), path);
    ::close(fd);
    return st;
  }
  std::unique_ptr<InstanceLock> lock = make(path, fd, fl == FlockResult::kHeld, self);
  {
    const std::string s = Serialize(self);
    if (::pwrite(fd, s.data(), s.size(), 0) != static_cast<ssize_t>(s.size()) || ::fdatasync(fd) != 0) {
      return Status::IO(std::string("cannot write the instance lock: ") + std::strerror(errno), path);
    }
  }
  // Without flock (or over another host's record) another standby may be taking over too:
  // the last write wins.
  if (fl != FlockResult::kHeld || (rec.parsed && !same_host && !h.released)) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options.settle_s));
    const Record again = ReadRecord(path);
    if (again.parsed && again.holder.token != self.token) {
      a.holder = again.holder;
      a.why = "another daemon took over first: " + again.holder.Describe(telemetry::WallClockSeconds());
      lock.reset();  // its destructor sees the record is not its own and leaves it alone
      return a;
    }
  }
  a.lock = std::move(lock);
  return a;
}

}  // namespace

Result<std::unique_ptr<InstanceLock>> InstanceLock::Acquire(const std::string& dir, InstanceLockOptions options) {
  auto make = [&](std::string path, int fd, bool fl, LeaseHolder self) {
    return std::unique_ptr<InstanceLock>(new InstanceLock(std::move(path), fd, fl, options, std::move(self)));
  };
  // A holder in the middle of releasing (or a starter between flock and its first write) is
  // transient: look again for up to a second.
  Attempt a;
  for (int i = 0; i < 20; ++i) {
    HASE_ASSIGN_OR_RETURN(a, TryOnce(dir, options, false, 0, make));
    if (a.lock) return std::move(a.lock);
    if (a.holder && !a.holder->released) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::Conflict(
      "--state " + dir + " is in use by another hase serve: " + a.why, (std::filesystem::path(dir) / kLockFile).string(),
      "stop that daemon first, give this one another --state, or start it with --standby to take over when that one "
      "ends");
}

Result<std::unique_ptr<InstanceLock>> InstanceLock::WaitAndAcquire(
    const std::string& dir, InstanceLockOptions options, const std::function<void(const LeaseHolder&)>& on_wait,
    const std::function<bool()>& stop) {
  auto make = [&](std::string path, int fd, bool fl, LeaseHolder self) {
    return std::unique_ptr<InstanceLock>(new InstanceLock(std::move(path), fd, fl, options, std::move(self)));
  };
  const std::string path = (std::filesystem::path(dir) / kLockFile).string();
  std::string last_raw;
  bool seen = false;
  double changed_at = MonotonicSeconds();
  std::string last_token = "\x01";
  for (;;) {
    const Record rec = ReadRecord(path);
    if (!seen || rec.raw != last_raw) {
      last_raw = rec.raw;
      changed_at = MonotonicSeconds();
      seen = true;
    }
    HASE_ASSIGN_OR_RETURN(Attempt a, TryOnce(dir, options, true, MonotonicSeconds() - changed_at, make));
    if (a.lock) return std::move(a.lock);
    if (a.holder && a.holder->token != last_token) {
      last_token = a.holder->token;
      if (on_wait) on_wait(*a.holder);
    }
    if (stop && stop()) return Status::Conflict("stopped while waiting as standby: " + a.why, path);
    std::this_thread::sleep_for(std::chrono::duration<double>(options.poll_s));
  }
}

InstanceLock::~InstanceLock() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  const bool lost = lost_;
  LeaseHolder self;
  {
    std::lock_guard<std::mutex> lock(mu_);
    self = self_;
  }
  const Record rec = ReadRecord(path_);
  if (!lost && rec.parsed && rec.holder.token == self.token) {
    self.released = true;
    self.renewed_s = telemetry::WallClockSeconds();
    (void)WriteRecord(self);  // best effort: a standby also sees the flock go
  }
  if (has_flock_) ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

void InstanceLock::set_listen(const std::string& listen) {
  std::lock_guard<std::mutex> lock(mu_);
  self_.listen = listen;
  if (!thread_.joinable() && !lost_) (void)WriteRecord(self_);
  cv_.notify_all();  // the renewal thread writes it now
}

std::string InstanceLock::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

std::optional<LeaseHolder> InstanceLock::ReadHolder(const std::string& dir) {
  Record r = ReadRecord((std::filesystem::path(dir) / kLockFile).string());
  if (!r.parsed) return std::nullopt;
  return r.holder;
}

void InstanceLock::StartRenewing(std::function<void(const LeaseHolder& other)> on_lost) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  thread_ = std::thread([this, f = std::move(on_lost)] { RenewLoop(f); });
}

void InstanceLock::RenewLoop(std::function<void(const LeaseHolder&)> on_lost) {
  std::unique_lock<std::mutex> lock(mu_);
  std::string written_listen = self_.listen;
  for (;;) {
    cv_.wait_for(lock, std::chrono::duration<double>(options_.renew_s),
                 [&] { return stop_ || self_.listen != written_listen; });
    if (stop_) return;
    const double started = MonotonicSeconds();  // the lease runs from before the write
    ++self_.seq;
    self_.renewed_s = telemetry::WallClockSeconds();
    self_.expires_s = self_.renewed_s + options_.lease_s;
    written_listen = self_.listen;
    const LeaseHolder mine = self_;
    lock.unlock();  // file I/O (fdatasync, NFS) without the lock: CheckHeld() must not wait on it
    const Record rec = ReadRecord(path_);
    if (rec.parsed && rec.holder.token != mine.token) {
      lost_ = true;
      if (on_lost) on_lost(rec.holder);
      return;
    }
    Status st = WriteRecord(mine);
    if (st.ok()) renewed_mono_ = started;
    lock.lock();
    error_ = st.ok() ? "" : st.ToString();
  }
}

Status InstanceLock::CheckHeld() const {
  if (lost_) {
    return Status::Conflict("another hase serve took over this --state; this daemon writes nothing more", path_);
  }
  const double since = MonotonicSeconds() - renewed_mono_.load();
  if (since > options_.lease_s * kFenceFraction) {
    return Status::IO(fmt::format("the instance lease was last renewed {:.1f} s ago (a standby may take over after "
                                  "{:.1f} s): the journal is not written until a renewal succeeds",
                                  since, options_.lease_s),
                      path_);
  }
  return Status::OK();
}

}  // namespace hase::service
