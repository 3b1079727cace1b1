// KubeBackend: Kubernetes as the place tasks run, behind the Backend seam (backend.h).
//
// hase is kube-scheduler's extender (extender.h). kube-scheduler asks it to filter, score and
// bind pods; the kubelet starts them. In Backend terms:
//   Launch   = POST the pod's v1.Binding to the node hase chose (KubeClient::Bind), resolving
//              the answers the API server can give:
//                201                      → bound
//                409 (pod already bound)  → GET the pod: bound to this node with this UID (an
//                                           earlier try whose answer was lost) → bound; another
//                                           node → error naming it
//                timeout / no answer      → GET the pod as above; not bound yet → POST again, at
//                                           most bind_attempts POSTs in all
//                anything else            → error with the API server's message
//              All of it within bind_budget_s (each call gets what is left). A POST whose answer
//              is still unknown when the budget ends returns handle 0: "sent, not confirmed";
//              the pod is followed like a bound one (bound elsewhere or deleted → cancelled)
//              and a retried /bind asks again (the API server refuses a second binding: 409).
//   observe  = a PodWatcher (pod_watcher.h) over the bound pods: Succeeded/Failed → exited with
//              the container's exit code, deleted or replaced → cancelled
//   Cancel   = DELETE the pod (with its UID as precondition; one API call, timeout_s at most);
//              the daemon ends the task itself, so nothing is reported
//   cordons  = GET /api/v1/nodes every node_poll_s: a node with spec.unschedulable (kubectl
//              cordon) does not AcceptsNewWork and is reported drained (NodeCondition::kDrained:
//              the daemon places nothing new on its GPUs, REST tasks included); its running
//              pods are left alone; uncordoned → reported usable
//   Recover  = GET each pod the journal says is running: gone or replaced → cancelled; ended →
//              its end; bound to the journalled node → watched again; not bound at all → NotFound
//              (the daemon binds it now, as the contract says); bound elsewhere → cancelled with
//              that node named (someone else placed it; hase no longer accounts for it)
// Only tasks that came from a pod (LaunchRequest::pod) can be launched: a REST task with a
// command is an InvalidArgument error (run those with --executor or --backend slurm).
// The handle of a bound pod is 1 (Kubernetes has no numeric id; pods are found by name + UID).
//
// Thread-safety: safe for concurrent use; callbacks run on the watcher's thread, never under
// this backend's lock.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hase/service/backend.h"
#include "hase/service/kube_client.h"
#include "hase/service/pod_watcher.h"

namespace hase::service {

struct KubeBackendOptions {
  KubeClientOptions client;    // the API server (KubeClient::Create)
  PodWatcherOptions watcher;   // list/watch of the bound pods
  int bind_attempts = 3;       // Binding POSTs per launch when the API server does not answer
  // Total time one Launch (the extender's /bind) may spend on API calls, s: below
  // kube-scheduler's default extender httpTimeout (5 s) with room for the answer.
  double bind_budget_s = 4.0;
  // How often the node list is read for cordons (spec.unschedulable), s; 0 = never.
  double node_poll_s = 10.0;
};

class KubeBackend final : public Backend {
 public:
  // Errors: as KubeClient::Create (a bad --kube-api is one error at start).
  static Result<std::unique_ptr<KubeBackend>> Create(KubeBackendOptions options);
  ~KubeBackend() override { Stop(); }

  const char* Name() const override { return "kubernetes"; }
  bool RunsOn(const sched::Gpu&) const override { return true; }
  bool RunsPods() const override { return true; }
  Status Start(EndCallback on_end, NodeCallback on_node) override;
  void Stop() override;
  Result<int64_t> Launch(const LaunchRequest& request) override;
  std::vector<Result<Recovered>> Recover(const std::vector<LaunchRequest>& requests,
                                         const std::vector<int64_t>& handles) override;
  void Cancel(int64_t task_id, int attempt) override;
  // False for a node the last node list showed cordoned (spec.unschedulable). A node list that
  // fails keeps the last answer (and logs); before the first list every node takes work.
  bool AcceptsNewWork(const std::string& node) const override;
  // Reads the node list once now (tests; the poll thread does the same). Errors: ListNodes'.
  Status RefreshNodesOnce();

  // The watcher's counters, for /metrics and tests.
  const PodWatcher& watcher() const { return *watcher_; }
  PodWatcher& watcher() { return *watcher_; }

 private:
  KubeBackend(KubeClient client, KubeBackendOptions options);
  std::vector<WatchedPod> Watched() const;
  void Ended(const WatchedPod& pod, const TaskEnd& end);
  void Watch(const LaunchRequest& request);

  const KubeClient client_;
  const KubeBackendOptions options_;
  std::unique_ptr<PodWatcher> watcher_;
  mutable std::mutex mu_;
  EndCallback on_end_;                                   // guarded by mu_
  NodeCallback on_node_;                                 // guarded by mu_
  bool started_ = false;                                 // guarded by mu_
  std::map<std::pair<int64_t, int>, WatchedPod> bound_;  // guarded by mu_: (task, attempt) → pod
  std::set<std::string> cordoned_;                       // guarded by mu_: the last node list's
  std::condition_variable node_cv_;                      // wakes the node poll on Stop
  std::mutex refresh_mu_;                                // one RefreshNodesOnce at a time
  std::thread node_thread_;                              // the node poll (node_poll_s > 0)
};

// "ns/name" → {ns, name}; a pod without a namespace is in "default".
std::pair<std::string, std::string> SplitPodName(const std::string& pod);

}  // namespace hase::service
