// PodWatcher: follows the pods hase bound (Kubernetes extender, extender.h) to their end, so
// their tasks leave `running` and their GPUs' load and projected finishes are released.
//
// Loop: list pods (GET /api/v1/pods, optional label selector), reconcile, then watch from the
// list's resourceVersion until the watch window ends (or 410 Gone / an error: re-list after a
// back-off of 1 s doubling to 30 s). The list/watch/re-list pattern is client-go's Reflector.
// Reconciling a task of a pod hase bound (journal key "k8s:<pod UID>", spec.pod = "ns/name"):
//   status.phase Succeeded                  → succeeded (exit code 0)
//   status.phase Failed                     → failed, exit code = the first non-zero
//                                             containerStatuses[].state.terminated.exitCode,
//                                             else 1
//   DELETED event, or absent from a full list → cancelled (the pod is gone; nothing runs)
//   a pod with that name but another UID     → the old pod is gone: cancelled
// Pending/Running/Unknown leave the task running. Tasks of other origins are never touched.
//
// Thread-safety: Start/Stop from one thread; the watcher thread calls only Daemon's public,
// thread-safe methods.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "hase/service/daemon.h"
#include "hase/service/kube_client.h"

namespace hase::service {

struct PodWatcherOptions {
  std::string label_selector;   // restrict the list/watch ("" = every pod)
  int watch_timeout_s = 300;    // one watch window, s (the API server may end it earlier)
  double max_backoff_s = 30;    // longest wait before a re-list after an error, s
  double idle_s = 5;            // a quiet watch is re-opened after this long (bounds Stop()), s
};

class PodWatcher {
 public:
  PodWatcher(Daemon& daemon, KubeClient client, PodWatcherOptions options)
      : daemon_(daemon), client_(std::move(client)), options_(std::move(options)) {}
  ~PodWatcher() { Stop(); }
  PodWatcher(const PodWatcher&) = delete;
  PodWatcher& operator=(const PodWatcher&) = delete;

  void Start();
  void Stop();

  // One list + reconcile, on the caller's thread (tests; the loop does the same). Returns the
  // list's resourceVersion. Errors: as KubeClient::ListPods.
  Result<std::string> ResyncOnce();
  // Applies one watch event (type ADDED/MODIFIED/DELETED; others ignored) to hase's tasks.
  void Apply(const std::string& type, const nlohmann::json& pod);

  // Counters for /metrics and tests.
  int64_t tasks_ended() const { return ended_.load(); }
  int64_t errors() const { return errors_.load(); }
  std::string last_error() const;

 private:
  void Loop();
  void NoteError(const Status& s);

  Daemon& daemon_;
  const KubeClient client_;
  const PodWatcherOptions options_;
  std::atomic<int64_t> ended_{0}, errors_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;            // guarded by mu_
  std::string last_error_;       // guarded by mu_
  std::thread thread_;
};

}  // namespace hase::service
