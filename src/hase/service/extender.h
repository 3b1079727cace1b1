// Extender: hase as a Kubernetes scheduler extender (k8s.io/kube-scheduler/extender/v1).
//
// kube-scheduler POSTs JSON to <urlPrefix>/<verb>. The v1 types have no JSON tags, so field
// names are the Go names and decoding is case-insensitive (Go's encoding/json); hase decodes
// them case-insensitively and answers with the Go names:
//   filter:     ExtenderArgs{Pod, Nodes | NodeNames} →
//               ExtenderFilterResult{Nodes | NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}
//   prioritize: ExtenderArgs → HostPriorityList [{"Host":"n1","Score":7}], scores 0–10
//   bind:       ExtenderBindingArgs{PodName, PodNamespace, PodUID, Node} → ExtenderBindingResult{Error}
// Both candidate forms are answered in the form asked: full v1.NodeList objects are returned
// as received (nodeCacheCapable: false), or bare names (nodeCacheCapable: true).
//
// The task comes from the pod: annotations hase.io/model (required; a pod without it is not
// hase's and every node passes with score 0), hase.io/batch (alias hase.io/batch-size),
// hase.io/samples or hase.io/num-batches, hase.io/input-shape ("3x640x640") or
// hase.io/input-size (neither: the shape the model's ONNX declares, Daemon::WithInputShape),
// hase.io/priority; GPUs from the
// containers' nvidia.com/gpu limits (else requests), memory from nvidia.com/gpumem (MiB, as
// HAMi) when present.
//
// Filter: a node fails (FailedAndUnresolvableNodes: preemption cannot help) when hase does
// not know it or fewer than nvidia.com/gpu of its GPUs could ever host the task; it fails
// (FailedNodes) while cordoned: spec.unschedulable in the Node sent, or Daemon::AcceptsNewWork.
// Score: predicted completion C_n on node n (the k-th earliest over its GPUs for k GPUs, from
// Daemon::PredictCompletion: oracle + contention model on live state), mapped as
//   score_n = round(10 × (C_best − now) / (C_n − now)),
// so the fastest node gets 10 and one predicted to take twice as long gets 5.
// Bind: only pods hase filtered or prioritized (remembered by UID and ns/name) are bound, and
// only with the UID hase saw; the binding itself is Daemon::BindExternal → KubeBackend::Launch
// (kube_backend.h: 201 / 409 / late answers, nothing journalled when the API server refuses).
// A retried bind of a pod hase already journalled succeeds without a POST when the node is the
// same and is an Error naming the node otherwise. Without a pod backend (--kube-api) every
// bind is an Error (configure kube-scheduler without bindVerb, or give --kube-api).
// The pod's end is followed by the backend's PodWatcher (pod_watcher.h).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"
#include "hase/service/daemon.h"
#include "hase/service/kube_client.h"

namespace hase::service {


// The pod's task. NotFound when the pod has no hase.io/model annotation (not hase's);
// InvalidArgument for a malformed annotation.
Result<TaskSpec> TaskSpecFromPod(const nlohmann::json& pod);

// The value of `key` in a JSON object matched case-insensitively (Go's rule); nullptr if absent.
const nlohmann::json* FindCaseInsensitive(const nlohmann::json& obj, std::string_view key);

class Extender {
 public:
  explicit Extender(Daemon& daemon) : daemon_(daemon) {}

  // Each takes the request body and returns the response body (always a valid JSON answer;
  // errors go into its "Error" field, as kube-scheduler expects). Returns InvalidArgument only
  // when the body is not JSON at all (the handler answers 400).
  Result<nlohmann::json> Filter(std::string_view body);
  Result<nlohmann::json> Prioritize(std::string_view body);
  Result<nlohmann::json> Bind(std::string_view body);

 private:
  void Remember(const std::string& key, const TaskSpec& spec);
  // TaskSpecFromPod, priced at the pod's stated input or the model's own (WithInputShape).
  // NotFound for no pod or a pod that is not hase's.
  Result<TaskSpec> PodTask(const nlohmann::json* pod) const;

  Daemon& daemon_;
  std::mutex mu_;
  std::map<std::string, TaskSpec> pods_;  // guarded by mu_: pod UID and "ns/name" → task
};

}  // namespace hase::service
