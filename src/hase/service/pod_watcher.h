// PodWatcher: follows the pods hase bound (KubeBackend, kube_backend.h) to their end and reports
// each end, so their tasks leave `running` and their GPUs' load and projected finishes are
// released. It knows only the pods it is given (`watched`), never the daemon.
//
// Loop: list pods (GET /api/v1/pods, optional label selector), reconcile, then watch from the
// list's resourceVersion until the watch window ends (or 410 Gone / an error: re-list after a
// back-off of 1 s doubling to 30 s). The list/watch/re-list pattern is client-go's Reflector.
// Reconciling one watched pod (uid, "ns/name") → the TaskEnd reported through `ended`:
//   status.phase Succeeded                  → kExited, exit code 0
//   status.phase Failed                     → kExited, exit code = the first non-zero
//                                             containerStatuses[].state.terminated.exitCode,
//                                             else 1
//   DELETED event, or absent from a full list → kCancelled (the pod is gone; nothing runs; only
//                                             pods watched before the list was asked for)
//   a pod with that name but another UID     → the old pod is gone: kCancelled
//   spec.nodeName set to another node         → kCancelled (bound elsewhere: not hase's placement)
// Pending/Running/Unknown report nothing. Pods not in `watched` are never reported. An end
// carries the containers' own start and finish (pod_status.h: state.terminated.startedAt /
// finishedAt), so it is dated when it happened, not when hase saw it.
//
// Thread-safety: Start/Stop from one thread; `watched` and `ended` are called on the watcher
// thread (or the caller's, for ResyncOnce/Apply) and must be thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <utility>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hase/service/backend.h"
#include "hase/service/kube_client.h"

namespace hase::service {

struct PodWatcherOptions {
  std::string label_selector;   // restrict the list/watch ("" = every pod)
  int watch_timeout_s = 300;    // one watch window, s (the API server may end it earlier)
  double max_backoff_s = 30;    // longest wait before a re-list after an error, s
  double idle_s = 5;            // a quiet watch is re-opened after this long (bounds Stop()), s
};

// One pod whose end is awaited: the launch (task_id, attempt) it belongs to.
struct WatchedPod {
  int64_t task_id = 0;
  int attempt = 0;
  std::string pod;  // "namespace/name"
  std::string uid;  // metadata.uid
  std::string node; // the node hase bound it to ("" = not checked)
};

class PodWatcher {
 public:
  using Watched = std::function<std::vector<WatchedPod>()>;
  using Ended = std::function<void(const WatchedPod& pod, const TaskEnd& end)>;

  PodWatcher(KubeClient client, PodWatcherOptions options, Watched watched, Ended ended)
      : client_(std::move(client)), options_(std::move(options)), watched_(std::move(watched)), ended_cb_(std::move(ended)) {}
  ~PodWatcher() { Stop(); }
  PodWatcher(const PodWatcher&) = delete;
  PodWatcher& operator=(const PodWatcher&) = delete;

  void Start();
  void Stop();

  // One list + reconcile, on the caller's thread (tests; the loop does the same). Returns the
  // list's resourceVersion. Errors: as KubeClient::ListPods.
  Result<std::string> ResyncOnce();
  // Applies one watch event (type ADDED/MODIFIED/DELETED; others ignored) to the watched pods.
  void Apply(const std::string& type, const nlohmann::json& pod);

  // Counters for /metrics and tests.
  int64_t tasks_ended() const { return ended_.load(); }
  int64_t errors() const { return errors_.load(); }
  std::string last_error() const;

 private:
  void Loop();
  void NoteError(const Status& s);

  void Report(const WatchedPod& w, const TaskEnd& end, const char* what);

  const KubeClient client_;
  const PodWatcherOptions options_;
  const Watched watched_;
  const Ended ended_cb_;
  std::atomic<int64_t> ended_{0}, errors_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;            // guarded by mu_
  std::string last_error_;       // guarded by mu_
  // Launches (task_id, attempt) already reported ended: the watch thread and a re-list can both
  // see one pod end before the daemon drops it from the watched set; it is reported once.
  // Pruned to the watched set at each list. Guarded by mu_.
  std::set<std::pair<int64_t, int>> reported_;
  std::thread thread_;
};

}  // namespace hase::service
