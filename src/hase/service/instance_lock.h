// InstanceLock: one active `hase serve` per state directory (its journal), with hot standby.
//
// Two daemons on one --state would both write hase.db and both run its tasks. The daemon that
// holds `<dir>/hase.lock` is the only one that opens the journal; another one refuses to start
// (Acquire: Conflict naming the holder's pid, host, listen address) or, as a hot standby,
// waits until it can take over (WaitAndAcquire), as Slurm's backup controller does on a shared
// StateSaveLocation.
//
// Two mechanisms, because the state directory may be on NFS:
//  * flock(2) on hase.lock: the kernel drops it when the holder dies (kill -9 included), so a
//    daemon on the same host takes over at once. On NFS it is emulated with byte-range locks
//    (Linux ≥ 2.6.12) and outlives a crashed *host* until the server's grace period; where it
//    fails (ENOLCK, no lockd) the lease alone decides.
//  * a lease record in the same file: one JSON line, rewritten in place (pwrite + fdatasync,
//    so a full disk cannot fail it) every `renew_s` by the holder: pid, host, listen address,
//    a sequence number, `expires_s` = renewal + `lease_s`. Readers open the file afresh each
//    time (NFS close-to-open consistency; a `nocto` mount breaks this). A holder on another
//    host is dead when its record did not change for `lease_s` on the reader's own monotonic
//    clock (standby: no clock skew involved) or, for a one-shot Acquire, when its `expires_s` is
//    past on the reader's wall clock (hosts keep NTP time, as Slurm and munge require).
//
// A takeover that did not hold flock (another host's record, or flock unavailable) writes its
// record, waits `settle_s` and re-reads it: of two standbys taking over at once, the one whose
// write landed last wins and the other keeps waiting. A holder that finds another holder's
// record at a renewal (it was stopped or cut off for longer than the lease and a standby took
// over) reports it through `on_lost`; `hase serve` then exits at once without writing anything
// (as after kill -9, which the journal survives), so the journal has one writer again.
// Between the two, CheckHeld() fences the journal: a holder whose last renewal is older than
// 0.8 × lease_s (stopped, or cut off) fails every journal write (503) before a standby on
// another host may take over at lease_s; on this host a standby never replaces a holder whose
// process lives (flock busy, pid alive), even a hung one.
//
// Thread-safety: a lock object is used by the thread that made it plus its own renewal thread;
// health() may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "hase/base/status.h"

namespace hase::service {

struct InstanceLockOptions {
  std::string listen;      // shown to other daemons (HOST:PORT); set_listen() updates it
  double lease_s = 5;      // a record not renewed for this long is dead, seconds (> 2 × renew_s)
  double renew_s = 1;      // how often the holder rewrites its record, seconds
  double poll_s = 0.2;     // how often a standby looks, seconds
  double settle_s = 0.5;   // a takeover without flock re-reads its record after this, seconds
};

// The holder as its record says.
struct LeaseHolder {
  int64_t pid = 0;
  std::string host;
  std::string listen;
  std::string token;        // host:pid:start-ns, unique per daemon run
  int64_t seq = 0;          // renewals so far
  double started_s = 0;     // when it took the lock, wall seconds
  double renewed_s = 0;     // its last renewal, its wall seconds
  double expires_s = 0;     // renewed_s + its lease_s
  bool released = false;    // it stopped cleanly
  // "pid 123 on host h, listening on 127.0.0.1:8080, lease renewed 0.4 s ago"
  std::string Describe(double now_s) const;
};

class InstanceLock {
 public:
  // Takes the lock of `dir` (created) now. Errors: Conflict when a live daemon holds it (the
  // message names its pid, host and listen address; the hint says --standby), IO when the
  // lock file cannot be created or written.
  static Result<std::unique_ptr<InstanceLock>> Acquire(const std::string& dir, InstanceLockOptions options);

  // Hot standby: waits until the holder dies (flock released, or its record unchanged for
  // lease_s) and then takes the lock. `on_wait` is called each time the holder seen changes;
  // `stop` is polled every poll_s and ends the wait with Conflict when it returns true.
  // Errors: IO as Acquire; Conflict when stopped.
  static Result<std::unique_ptr<InstanceLock>> WaitAndAcquire(const std::string& dir, InstanceLockOptions options,
                                                              const std::function<void(const LeaseHolder&)>& on_wait,
                                                              const std::function<bool()>& stop);

  // Releases the lock: marks the record released (a standby takes over at its next poll) and
  // unlocks. Stops the renewal thread.
  ~InstanceLock();
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  // Starts renewing every renew_s. `on_lost(holder)` runs on the renewal thread, once, when
  // the record names another daemon; the caller must stop writing the journal (hase serve
  // exits). A failed renewal write is kept for health() and retried.
  void StartRenewing(std::function<void(const LeaseHolder& other)> on_lost);
  void set_listen(const std::string& listen);

  // Fencing, for every journal write: OK while this daemon surely holds the lease. Conflict
  // once another daemon took over; IO while the last successful renewal is older than 0.8 ×
  // lease_s (this process was stopped, or renewals fail), since a standby may take over at
  // lease_s. Cheap (no I/O, no lock); any thread.
  Status CheckHeld() const;

  // "" while renewals succeed; else why the last one failed (for /healthz).
  std::string health() const;
  const std::string& path() const { return path_; }
  bool has_flock() const { return has_flock_; }
  const LeaseHolder& self() const { return self_; }

  // Reads the record of `dir`, if any (tests, the standby's messages).
  static std::optional<LeaseHolder> ReadHolder(const std::string& dir);

 private:
  InstanceLock(std::string path, int fd, bool has_flock, InstanceLockOptions options, LeaseHolder self);
  Status WriteRecord(const LeaseHolder& h);
  void RenewLoop(std::function<void(const LeaseHolder&)> on_lost);

  const std::string path_;
  const int fd_;            // open on path_, O_CLOEXEC (children do not inherit the flock)
  const bool has_flock_;    // flock(LOCK_EX) held on fd_
  const InstanceLockOptions options_;

  std::atomic<double> renewed_mono_;  // steady-clock seconds when the last good renewal began
  std::atomic<bool> lost_{false};     // another daemon took over; never write again

  mutable std::mutex mu_;
  LeaseHolder self_;        // guarded by mu_ (after StartRenewing)
  std::string error_;       // guarded by mu_: last renewal failure, "" = ok
  bool stop_ = false;       // guarded by mu_
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace hase::service
