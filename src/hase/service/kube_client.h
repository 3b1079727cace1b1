// KubeClient: the few Kubernetes API calls hase makes (core/v1 pods and their binding
// subresource), over cpp-httplib.
//
// Endpoints (Kubernetes API reference, core/v1 Pod):
//   POST /api/v1/namespaces/{ns}/pods/{name}/binding   v1.Binding      → 201 Created
//   GET  /api/v1/namespaces/{ns}/pods/{name}            v1.Pod
//   DELETE /api/v1/namespaces/{ns}/pods/{name}?preconditions… (body v1.DeleteOptions) → 200/202
//   GET  /api/v1/pods[?labelSelector=…]                 v1.PodList (metadata.resourceVersion)
//   GET  /api/v1/nodes                                   v1.NodeList (cordons: spec.unschedulable)
//   GET  /api/v1/pods?watch=1&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=N
//        a stream of newline-separated watch events {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|
//        ERROR","object":{…}}; an ERROR event with a v1.Status code 410 means "re-list".
// Namespaces and pod names are checked as Kubernetes does (RFC 1123 subdomain: at most 253
// characters of [a-z0-9.-], starting and ending alphanumeric) before they enter a URL, so a
// name such as "../../apis/rbac…" or "x?dryRun=All#" never reaches the API server.
//
// Connection: `api` is either an http(s):// URL (e.g. a `kubectl proxy` sidecar at
// http://127.0.0.1:8001, which authenticates for us) or "in-cluster": https://
// $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with the pod's service-account token and CA
// (/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}), as client-go's
// rest.InClusterConfig does. The token file is re-read on every call (projected tokens rotate).
//
// Thread-safety: every call is independent (one connection per call).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"

namespace hase::service {

struct KubeClientOptions {
  std::string api;             // http(s)://host[:port] or "in-cluster"
  std::string token_file;      // bearer token file ("" = none; in-cluster default below)
  std::string ca_file;         // CA bundle for https ("" = system default; in-cluster default below)
  // Affects behaviour. Every call is bounded: connect within connect_timeout_s, then each
  // read and write within timeout_s (the budget a caller passes may lower both).
  double timeout_s = 5.0;          // read/write timeout of one call, s (sub-second allowed)
  double connect_timeout_s = 1.0;  // TCP (+TLS) connect timeout of one call, s
};

// Kubernetes' RFC 1123 subdomain rule for namespace and pod names. InvalidArgument naming
// `what` and the value otherwise.
Status CheckKubeName(std::string_view what, std::string_view name);

// Outcome of a Binding POST.
enum class BindOutcome {
  kBound,        // 201: the API server bound the pod now
  kConflict,     // 409: the pod already has a node (bound earlier, perhaps by us: check the pod)
  kNoAnswer,     // sent, but no answer in time: the binding may or may not have happened
  kNotSent,      // no connection (refused, connect timeout): nothing reached the API server
};

class KubeClient {
 public:
  // Errors: InvalidArgument (a URL that is not http(s)://host[:port]; "in-cluster" outside a
  // pod: KUBERNETES_SERVICE_HOST unset).
  static Result<KubeClient> Create(KubeClientOptions options);

  // POSTs a v1.Binding of ns/name (with metadata.uid = uid when not empty: the API server then
  // refuses a pod recreated under the same name) to `node`. `budget_s` > 0 lowers the call's
  // timeouts to it (what is left of an extender verb's budget). Errors: InvalidArgument (bad
  // name), IO with the API server's status and message for any answer other than 201 / 409.
  Result<BindOutcome> Bind(std::string_view ns, std::string_view name, std::string_view uid,
                           std::string_view node, double budget_s = 0) const;

  // GET one pod, within `budget_s` when > 0. NotFound on 404; IO for other failures.
  Result<nlohmann::json> GetPod(std::string_view ns, std::string_view name, double budget_s = 0) const;

  // DELETEs one pod (graceful: the kubelet sends SIGTERM, then SIGKILL after the pod's grace
  // period). With `uid` not empty the deletion carries preconditions.uid, so a pod recreated
  // under the same name is never deleted. OK also when the pod is already gone (404) or has
  // another UID (409: nothing of ours to delete). Errors: InvalidArgument (bad name), IO with
  // the API server's status and message otherwise.
  Status DeletePod(std::string_view ns, std::string_view name, std::string_view uid) const;

  // GET /api/v1/nodes: the v1.NodeList (spec.unschedulable marks a cordon). Errors: IO (with
  // the API server's message), Parse (not a NodeList).
  Result<nlohmann::json> ListNodes() const;

  // GET /api/v1/pods (all namespaces), optionally with a label selector. Returns the v1.PodList.
  // Errors: IO (with the API server's message), Parse (not a PodList).
  Result<nlohmann::json> ListPods(std::string_view label_selector) const;

  // Watches pods from `resource_version` for at most `timeout_s`, calling `on_event(type,
  // object)` for each event as it arrives. Returns OK when the server ends the stream, when
  // nothing arrived for `idle_s` (the caller checks for shutdown and watches again from the
  // last resourceVersion it saw), or when `on_event` returns false. Errors: IO (connection,
  // non-200 with the API server's message, an ERROR event: "410" in the message when the
  // resource version is too old; the caller re-lists).
  Status WatchPods(std::string_view label_selector, std::string_view resource_version, int timeout_s, double idle_s,
                   const std::function<bool(const std::string& type, const nlohmann::json& object)>& on_event) const;

  const std::string& base_url() const { return base_; }

 private:
  KubeClient(std::string base, KubeClientOptions options) : base_(std::move(base)), options_(std::move(options)) {}
  std::string base_;  // scheme://host:port
  KubeClientOptions options_;
};

}  // namespace hase::service
