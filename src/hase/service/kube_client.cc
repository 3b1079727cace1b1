#include "hase/service/kube_client.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <httplib.h>

#include "hase/telemetry/http_get.h"

namespace hase::service {
namespace {

using nlohmann::json;

constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
constexpr size_t kMaxListBytes = size_t{256} << 20;  // a PodList of ~100 000 pods

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The API server's message from a v1.Status body, else the body itself (shortened).
std::string ApiMessage(const httplib::Response& res) {
  json j = json::parse(res.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  return res.body.size() > 300 ? res.body.substr(0, 300) + "…" : res.body;
}

}  // namespace

Status CheckKubeName(std::string_view what, std::string_view name) {
  bool ok = !name.empty() && name.size() <= 253;
  for (size_t i = 0; ok && i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    ok = alnum || ((c == '-' || c == '.') && i != 0 && i + 1 != name.size());
  }
  if (ok) return Status::OK();
  return Status::InvalidArgument(fmt::format("{} '{}' is not a Kubernetes name", what, name),
                                 "lower-case letters, digits, '-' and '.', at most 253 characters (RFC 1123)");
}

Result<KubeClient> KubeClient::Create(KubeClientOptions o) {
  std::string base = o.api;
  if (o.api == "in-cluster") {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host) {
      return Status::InvalidArgument("--kube-api in-cluster: KUBERNETES_SERVICE_HOST is not set (not in a pod)",
                                     "outside a cluster give the API URL, e.g. a `kubectl proxy` at http://127.0.0.1:8001");
    }
    const std::string h = host;
    base = fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h, port && *port ? port : "443");
    if (o.token_file.empty()) o.token_file = std::string(kServiceAccountDir) + "/token";
    if (o.ca_file.empty()) o.ca_file = std::string(kServiceAccountDir) + "/ca.crt";
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  const bool http = base.rfind("http://", 0) == 0, https = base.rfind("https://", 0) == 0;
  const size_t host_at = http ? 7 : 8;
  if ((!http && !https) || base.size() <= host_at || base.find('/', host_at) != std::string::npos) {
    return Status::InvalidArgument("--kube-api '" + o.api + "' is not http(s)://host[:port] or in-cluster",
                                   "e.g. http://127.0.0.1:8001 (kubectl proxy) or in-cluster");
  }
  return KubeClient(std::move(base), std::move(o));
}

namespace {

// cpp-httplib takes (seconds, microseconds): 0.4 s must not become 0 (= no timeout at all).
std::pair<time_t, time_t> SecUsec(double s) {
  s = std::max(s, 0.001);
  const auto sec = static_cast<time_t>(s);
  return {sec, static_cast<time_t>((s - static_cast<double>(sec)) * 1e6)};
}

// One client per call, with auth and timeouts: connect within min(connect, read_s), each read
// and write within read_s.
Result<std::unique_ptr<httplib::Client>> Connect(const std::string& base, const KubeClientOptions& o, double read_s) {
  auto cli = std::make_unique<httplib::Client>(base);
  if (!cli->is_valid()) return Status::InvalidArgument("cannot use Kubernetes API URL '" + base + "'");
  const auto [cs, cu] = SecUsec(std::min(o.connect_timeout_s, read_s));
  const auto [rs, ru] = SecUsec(read_s);
  cli->set_connection_timeout(cs, cu);
  cli->set_read_timeout(rs, ru);
  cli->set_write_timeout(rs, ru);
  if (!o.ca_file.empty()) cli->set_ca_cert_path(o.ca_file);
  if (!o.token_file.empty()) {
    std::ifstream in(o.token_file);
    if (!in) return Status::IO("cannot read the Kubernetes token file " + o.token_file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string token = ss.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    cli->set_bearer_token_auth(token);
  }
  return cli;
}

std::string PodPath(std::string_view ns, std::string_view name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
}

}  // namespace

Result<BindOutcome> KubeClient::Bind(std::string_view ns, std::string_view name, std::string_view uid,
                                     std::string_view node, double budget_s) const {
  HASE_RETURN_IF_ERROR(CheckKubeName("namespace", ns));
  HASE_RETURN_IF_ERROR(CheckKubeName("pod name", name));
  HASE_RETURN_IF_ERROR(CheckKubeName("node name", node));
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", name}, {"namespace", ns}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  if (!uid.empty()) binding["metadata"]["uid"] = uid;
  HASE_ASSIGN_OR_RETURN(auto cli, Connect(base_, options_, budget_s > 0 ? std::min(budget_s, options_.timeout_s)
                                                                          : options_.timeout_s));
  auto res = cli->Post(PodPath(ns, name) + "/binding", Dump(binding), "application/json");
  if (!res) return res.error() == httplib::Error::Connection ? BindOutcome::kNotSent : BindOutcome::kNoAnswer;
  if (res->status == 201 || res->status == 200) return BindOutcome::kBound;
  if (res->status == 409) return BindOutcome::kConflict;
  return Status::IO(fmt::format("API server answered {} to the binding of {}/{}: {}", res->status, ns, name,
                                ApiMessage(*res)));
}

Result<json> KubeClient::GetPod(std::string_view ns, std::string_view name, double budget_s) const {
  HASE_RETURN_IF_ERROR(CheckKubeName("namespace", ns));
  HASE_RETURN_IF_ERROR(CheckKubeName("pod name", name));
  HASE_ASSIGN_OR_RETURN(auto cli, Connect(base_, options_, budget_s > 0 ? std::min(budget_s, options_.timeout_s)
                                                                       : options_.timeout_s));
  auto res = cli->Get(PodPath(ns, name));
  if (!res) return Status::IO(fmt::format("GET pod {}/{}: {}", ns, name, httplib::to_string(res.error())));
  if (res->status == 404) return Status::NotFound(fmt::format("pod {}/{} does not exist", ns, name));
  if (res->status != 200) return Status::IO(fmt::format("GET pod {}/{}: {} {}", ns, name, res->status, ApiMessage(*res)));
  json pod = json::parse(res->body, nullptr, false);
  if (!pod.is_object()) return Status::Parse(fmt::format("GET pod {}/{}: the answer is not a JSON object", ns, name));
  return pod;
}

Status KubeClient::DeletePod(std::string_view ns, std::string_view name, std::string_view uid) const {
  HASE_RETURN_IF_ERROR(CheckKubeName("namespace", ns));
  HASE_RETURN_IF_ERROR(CheckKubeName("pod name", name));
  json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
  HASE_ASSIGN_OR_RETURN(auto cli, Connect(base_, options_, options_.timeout_s));
  auto res = cli->Delete(PodPath(ns, name), Dump(options), "application/json");
  if (!res) return Status::IO(fmt::format("DELETE pod {}/{}: {}", ns, name, httplib::to_string(res.error())));
  if (res->status == 200 || res->status == 202 || res->status == 404 || res->status == 409) return Status::OK();
  return Status::IO(fmt::format("DELETE pod {}/{}: {} {}", ns, name, res->status, ApiMessage(*res)));
}

Result<json> KubeClient::ListNodes() const {
  HASE_ASSIGN_OR_RETURN(auto cli, Connect(base_, options_, options_.timeout_s));
  auto res = cli->Get("/api/v1/nodes");
  if (!res) return Status::IO(fmt::format("list nodes: {}", httplib::to_string(res.error())));
  if (res->status != 200) return Status::IO(fmt::format("list nodes: {} {}", res->status, ApiMessage(*res)));
  json list = json::parse(res->body, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return Status::Parse("list nodes: the answer is not a v1.NodeList");
  }
  return list;
}

Result<json> KubeClient::ListPods(std::string_view label_selector) const {
  std::string path = "/api/v1/pods";
  if (!label_selector.empty()) path += "?labelSelector=" + telemetry::UrlEncode(label_selector);
  HASE_ASSIGN_OR_RETURN(auto cli, Connect(base_, options_, options_.timeout_s * 4));
  std::string body;
  auto res = cli->Get(path, [&](const char* data, size_t n) {
    body.append(data, n);
    return body.size() <= kMaxListBytes;
  });
  if (!res) return Status::IO(fmt::format("list pods: {}", httplib::to_string(res.error())));
  if (res->status != 200) {
    httplib::Response r = *res;
    r.body = body;
    return Status::IO(fmt::format("list pods: {} {}", res->status, ApiMessage(r)));
  }
  json list = json::parse(body, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return Status::Parse("list pods: the answer is not a v1.PodList");
  }
  return list;
}

Status KubeClient::WatchPods(std::string_view label_selector, std::string_view resource_version, int timeout_s,
                             double idle_s, const std::function<bool(const std::string&, const json&)>& on_event) const {
  std::string path = fmt::format("/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds={}&resourceVersion={}",
                                 timeout_s, telemetry::UrlEncode(resource_version));
  if (!label_selector.empty()) path += "&labelSelector=" + telemetry::UrlEncode(label_selector);
  // The stream is quiet between events: a read that waits idle_s ends this watch (not an error).
  HASE_ASSIGN_OR_RETURN(auto cli, Connect(base_, options_, std::max(1.0, idle_s)));
  std::string pending;
  int status = 0;
  Status error;
  bool stopped = false;
  auto res = cli->Get(
      path,
      [&](const httplib::Response& r) {
        status = r.status;
        return true;
      },
      [&](const char* data, size_t n) {
        if (status != 200) {
          pending.append(data, std::min<size_t>(n, 4096));
          return pending.size() < 4096;
        }
        pending.append(data, n);
        size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
          const std::string line = pending.substr(0, nl);
          pending.erase(0, nl + 1);
          if (line.empty()) continue;
          json ev = json::parse(line, nullptr, false);
          if (!ev.is_object() || !ev.contains("type") || !ev["type"].is_string() || !ev.contains("object")) continue;
          const std::string type = ev["type"].get<std::string>();
          if (type == "ERROR") {
            const json& o = ev["object"];
            const int code = o.is_object() && o.contains("code") && o["code"].is_number_integer() ? o["code"].get<int>() : 0;
            error = Status::IO(fmt::format("watch pods: error event {} {}", code,
                                           o.is_object() && o.contains("message") ? Dump(o["message"]) : ""));
            return false;
          }
          if (!on_event(type, ev["object"])) {
            stopped = true;
            return false;
          }
        }
        return pending.size() < kMaxListBytes;
      });
  if (!error.ok()) return error;
  if (stopped) return Status::OK();
  if (status != 0 && status != 200) {
    return Status::IO(fmt::format("watch pods: {} {}", status, pending.substr(0, 300)));
  }
  if (!res && res.error() != httplib::Error::Canceled && res.error() != httplib::Error::Read) {
    return Status::IO(fmt::format("watch pods: {}", httplib::to_string(res.error())));
  }
  return Status::OK();
}

}  // namespace hase::service
