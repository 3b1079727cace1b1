#include "hase/service/extender.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "hase/service/request_json.h"
#include "hase/service/task_json.h"
#include "hase/telemetry/http_get.h"

namespace hase::service {
namespace {

using nlohmann::json;
constexpr size_t kMaxRememberedPods = 20000;

bool EqualsCI(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// Kubernetes quantities as used for GPUs: "1", 1, "2" (a GPU count has no suffix). InvalidArgument
// naming the resource for anything else ("1.5", "two").
Result<int64_t> Quantity(const json& v, const std::string& where) {
  Result<int64_t> q = IntegerFromStringOrNumber(v, where);
  if (!q.ok() || *q < 0) {
    return Status::InvalidArgument("must be a whole, non-negative number, not " + DescribeJsonValue(v), where,
                                   "nvidia.com/gpu and nvidia.com/gpumem are counts (GPUs, MiB)");
  }
  return q;
}

std::string PodKey(const json& pod) {
  const json* meta = FindCaseInsensitive(pod, "metadata");
  if (!meta) return "";
  const json* uid = FindCaseInsensitive(*meta, "uid");
  if (uid && uid->is_string() && !uid->get<std::string>().empty()) return uid->get<std::string>();
  const json* ns = FindCaseInsensitive(*meta, "namespace");
  const json* name = FindCaseInsensitive(*meta, "name");
  return (ns && ns->is_string() ? ns->get<std::string>() : "default") + "/" +
         (name && name->is_string() ? name->get<std::string>() : "");
}

std::string NodeName(const json& node) {
  const json* meta = FindCaseInsensitive(node, "metadata");
  const json* name = meta ? FindCaseInsensitive(*meta, "name") : nullptr;
  return name && name->is_string() ? name->get<std::string>() : "";
}

// A v1.Node cordoned with `kubectl cordon` (spec.unschedulable: true).
bool Cordoned(const json& node) {
  const json* spec = FindCaseInsensitive(node, "spec");
  const json* u = spec ? FindCaseInsensitive(*spec, "unschedulable") : nullptr;
  return u && u->is_boolean() && u->get<bool>();
}

// The candidates of an ExtenderArgs: names, and the full node objects when sent that way.
struct Candidates {
  bool full = false;
  std::vector<std::string> names;
  std::vector<json> nodes;  // parallel to names when full
};

Result<Candidates> ReadCandidates(const json& args) {
  Candidates c;
  const json* nodes = FindCaseInsensitive(args, "Nodes");
  const json* names = FindCaseInsensitive(args, "NodeNames");
  if (nodes && nodes->is_object()) {
    const json* items = FindCaseInsensitive(*nodes, "items");
    c.full = true;
    if (items && items->is_array()) {
      for (const json& n : *items) {
        c.names.push_back(NodeName(n));
        c.nodes.push_back(n);
      }
    }
    return c;
  }
  if (names && names->is_array()) {
    for (const json& n : *names) {
      if (n.is_string()) c.names.push_back(n.get<std::string>());
    }
    return c;
  }
  return Status::InvalidArgument("ExtenderArgs has neither Nodes nor NodeNames");
}

// Per node: the predicted completion (wall s) for a task wanting `gpus` GPUs, +inf if the node
// cannot host it, NaN if hase does not know the node.
std::map<std::string, double> NodeCompletion(const Daemon& d, const std::vector<double>& per_gpu, int gpus) {
  std::map<std::string, std::vector<double>> by_node;
  for (const sched::Gpu& g : d.cluster().gpus) by_node[g.node].push_back(per_gpu[g.id]);
  std::map<std::string, double> out;
  for (auto& [node, c] : by_node) {
    std::sort(c.begin(), c.end());
    const size_t k = static_cast<size_t>(std::max(1, gpus));
    out[node] = c.size() >= k ? c[k - 1] : std::numeric_limits<double>::infinity();
  }
  return out;
}

}  // namespace

const json* FindCaseInsensitive(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto exact = obj.find(std::string(key));
  if (exact != obj.end()) return &*exact;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (EqualsCI(it.key(), key)) return &it.value();
  }
  return nullptr;
}

Result<TaskSpec> TaskSpecFromPod(const json& pod) {
  const json* meta = FindCaseInsensitive(pod, "metadata");
  const json* ann = meta ? FindCaseInsensitive(*meta, "annotations") : nullptr;
  const json* model = ann ? FindCaseInsensitive(*ann, "hase.io/model") : nullptr;
  if (!model || !model->is_string() || model->get<std::string>().empty()) {
    return Status::NotFound("pod has no hase.io/model annotation");
  }
  const std::string ns = meta && FindCaseInsensitive(*meta, "namespace") && FindCaseInsensitive(*meta, "namespace")->is_string()
                             ? FindCaseInsensitive(*meta, "namespace")->get<std::string>()
                             : "default";
  const std::string name = meta && FindCaseInsensitive(*meta, "name") && FindCaseInsensitive(*meta, "name")->is_string()
                               ? FindCaseInsensitive(*meta, "name")->get<std::string>()
                               : "";
  const std::string context = "pod " + ns + "/" + name;
  json body = {{"model", *model}};
  // Annotations are strings (map[string]string): "8" becomes the integer the REST body has.
  auto copy = [&](const char* annotation, const char* field) -> Status {
    const json* v = FindCaseInsensitive(*ann, annotation);
    if (!v) return Status::OK();
    HASE_ASSIGN_OR_RETURN(int64_t n, IntegerFromStringOrNumber(*v, context + " annotation " + annotation));
    body[field] = n;
    return Status::OK();
  };
  for (const auto& [annotation, field] : {std::pair{"hase.io/batch-size", "batch_size"}, {"hase.io/batch", "batch_size"},
                                          {"hase.io/samples", "samples"}, {"hase.io/num-batches", "num_batches"},
                                          {"hase.io/input-size", "input_size"}, {"hase.io/priority", "priority"}}) {
    HASE_RETURN_IF_ERROR(copy(annotation, field));
  }
  if (const json* shape = FindCaseInsensitive(*ann, "hase.io/input-shape")) {
    if (!shape->is_string()) {
      return Status::InvalidArgument("must be a string such as \"3x640x640\", not " + DescribeJsonValue(*shape),
                                     context + " annotation hase.io/input-shape");
    }
    body["input_shape"] = *shape;
  }
  // GPUs and memory from the containers' resources.
  int64_t gpus = 0, gpumem = 0;
  const json* spec = FindCaseInsensitive(pod, "spec");
  const json* containers = spec ? FindCaseInsensitive(*spec, "containers") : nullptr;
  if (containers && containers->is_array()) {
    for (const json& c : *containers) {
      const json* res = FindCaseInsensitive(c, "resources");
      if (!res) continue;
      const json* lim = FindCaseInsensitive(*res, "limits");
      const json* req = FindCaseInsensitive(*res, "requests");
      const json* from = (lim && FindCaseInsensitive(*lim, "nvidia.com/gpu")) ? lim : req;
      const char* part = from == lim ? "limits" : "requests";
      if (from) {
        if (const json* g = FindCaseInsensitive(*from, "nvidia.com/gpu")) {
          HASE_ASSIGN_OR_RETURN(int64_t n, Quantity(*g, context + " resources." + part + " nvidia.com/gpu"));
          gpus += n;
        }
        if (const json* m = FindCaseInsensitive(*from, "nvidia.com/gpumem")) {
          HASE_ASSIGN_OR_RETURN(int64_t n, Quantity(*m, context + " resources." + part + " nvidia.com/gpumem"));
          gpumem += n;
        }
      }
    }
  }
  body["gpus"] = std::max<int64_t>(gpus, 1);
  if (gpumem > 0) body["memory_mib"] = gpumem;
  body["name"] = name;
  body["pod"] = ns + "/" + name;
  body["key"] = std::string(kPodKeyPrefix) + PodKey(pod);
  Result<TaskSpec> s = TaskSpecFromJson(body);
  if (!s.ok()) return s.status().WithContext("pod " + ns + "/" + name + " annotations");
  return s;
}

Result<TaskSpec> Extender::PodTask(const json* pod) const {
  if (!pod) return Status::NotFound("no Pod");
  HASE_ASSIGN_OR_RETURN(TaskSpec spec, TaskSpecFromPod(*pod));
  return daemon_.WithInputShape(spec);
}

void Extender::Remember(const std::string& key, const TaskSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pods_.size() >= kMaxRememberedPods) pods_.clear();  // bounded; filter runs again on retry
  pods_[key] = spec;
  pods_[spec.pod] = spec;
}

Result<json> Extender::Filter(std::string_view body) {
  HASE_ASSIGN_OR_RETURN(json args, ParseRequestJson(body, "filter body"));
  if (!args.is_object()) return Status::InvalidArgument("filter body must be a JSON object, not " + DescribeJsonValue(args));
  json out = {{"FailedNodes", json::object()}, {"FailedAndUnresolvableNodes", json::object()}, {"Error", ""}};
  Result<Candidates> cands = ReadCandidates(args);
  if (!cands.ok()) {
    out["Error"] = cands.status().ToString();
    return out;
  }
  const json* pod = FindCaseInsensitive(args, "Pod");
  Result<TaskSpec> spec = PodTask(pod);
  std::vector<bool> pass(cands->names.size(), true);
  if (!spec.ok() && spec.status().IsInvalidArgument() && spec.status().where() == "task field 'input_shape'") {
    // The model leaves its input open and the pod states none: no node can price it.
    for (size_t i = 0; i < cands->names.size(); ++i) {
      out["FailedAndUnresolvableNodes"][cands->names[i]] = "hase: " + spec.status().message() + " (" + spec.status().hint() + ")";
      pass[i] = false;
    }
  } else if (spec.ok()) {
    Remember(PodKey(*pod), *spec);
    TaskRecord tmp;
    tmp.spec = *spec;
    std::map<std::string, double> c = NodeCompletion(daemon_, daemon_.PredictCompletion(tmp.ToSchedTask()), spec->gpus);
    // Why no GPU can host it, when the reason is the model rather than the nodes (asked only
    // when some node cannot host it: the profiles are not built twice per filter otherwise).
    Status predictable = Status::OK();
    if (std::any_of(c.begin(), c.end(), [](const auto& nc) { return !std::isfinite(nc.second); })) {
      predictable = daemon_.CheckPredictable(tmp.ToSchedTask());
    }
    for (size_t i = 0; i < cands->names.size(); ++i) {
      const std::string& n = cands->names[i];
      auto it = c.find(n);
      if ((cands->full && Cordoned(cands->nodes[i])) || !daemon_.AcceptsNewWork(n)) {
        // kube-scheduler's NodeUnschedulable filter drops these first; hase agrees when asked.
        out["FailedNodes"][n] = "hase: node is cordoned (spec.unschedulable): nothing new is placed there";
        pass[i] = false;
      } else if (it == c.end()) {
        out["FailedAndUnresolvableNodes"][n] = "hase: node is not in hase's cluster file";
        pass[i] = false;
      } else if (!std::isfinite(it->second) && !predictable.ok()) {
        out["FailedAndUnresolvableNodes"][n] = "hase: cannot predict " + spec->model +
                                               (spec->input_shape.empty() ? "" : " at input " + sched::InputShapeText(spec->input_shape)) +
                                               ": " + predictable.message();
        pass[i] = false;
      } else if (!std::isfinite(it->second)) {
        out["FailedAndUnresolvableNodes"][n] =
            fmt::format("hase: fewer than {} GPU(s) here can host {} (memory or no latency profile)", spec->gpus,
                        spec->model);
        pass[i] = false;
      }
    }
  } else if (!spec.status().IsNotFound()) {
    out["Error"] = spec.status().ToString();
    return out;
  }
  if (cands->full) {
    json items = json::array();
    for (size_t i = 0; i < pass.size(); ++i) {
      if (pass[i]) items.push_back(cands->nodes[i]);
    }
    out["Nodes"] = {{"metadata", json::object()}, {"items", items}};
    out["NodeNames"] = nullptr;
  } else {
    json names = json::array();
    for (size_t i = 0; i < pass.size(); ++i) {
      if (pass[i]) names.push_back(cands->names[i]);
    }
    out["NodeNames"] = names;
    out["Nodes"] = nullptr;
  }
  return out;
}

Result<json> Extender::Prioritize(std::string_view body) {
  HASE_ASSIGN_OR_RETURN(json args, ParseRequestJson(body, "prioritize body"));
  if (!args.is_object()) return Status::InvalidArgument("prioritize body must be a JSON object, not " + DescribeJsonValue(args));
  json out = json::array();
  Result<Candidates> cands = ReadCandidates(args);
  if (!cands.ok()) return out;  // HostPriorityList has no error field: no opinion
  const json* pod = FindCaseInsensitive(args, "Pod");
  Result<TaskSpec> spec = PodTask(pod);
  const double now = telemetry::WallClockSeconds();  // before predicting: ratios stay exact
  std::map<std::string, double> c;
  if (spec.ok()) {
    Remember(PodKey(*pod), *spec);
    TaskRecord tmp;
    tmp.spec = *spec;
    c = NodeCompletion(daemon_, daemon_.PredictCompletion(tmp.ToSchedTask()), spec->gpus);
  }
  double best = std::numeric_limits<double>::infinity();
  for (const std::string& n : cands->names) {
    auto it = c.find(n);
    if (it != c.end()) best = std::min(best, it->second);
  }
  for (const std::string& n : cands->names) {
    int64_t score = 0;
    auto it = c.find(n);
    if (it != c.end() && std::isfinite(it->second) && std::isfinite(best)) {
      const double num = std::max(best - now, 1e-3), den = std::max(it->second - now, 1e-3);
      score = std::clamp<int64_t>(std::llround(10.0 * num / den), 0, 10);
    }
    out.push_back({{"Host", n}, {"Score", score}});
  }
  return out;
}

Result<json> Extender::Bind(std::string_view body) {
  HASE_ASSIGN_OR_RETURN(json args, ParseRequestJson(body, "bind body"));
  if (!args.is_object()) return Status::InvalidArgument("bind body must be a JSON object, not " + DescribeJsonValue(args));
  auto str = [&](const char* k) {
    const json* v = FindCaseInsensitive(args, k);
    return v && v->is_string() ? v->get<std::string>() : std::string();
  };
  const std::string name = str("PodName"), uid = str("PodUID"), node = str("Node");
  const std::string ns = str("PodNamespace").empty() ? "default" : str("PodNamespace");
  if (name.empty() || node.empty()) return json{{"Error", "hase: bind needs PodName and Node"}};
  // Only pods hase filtered/prioritized, and only the pod (UID) it saw.
  std::optional<TaskSpec> spec;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = uid.empty() ? pods_.end() : pods_.find(uid);
    if (it == pods_.end()) it = pods_.find(ns + "/" + name);
    if (it != pods_.end()) spec = it->second;
  }
  if (!spec) return json{{"Error", "hase: unknown pod " + ns + "/" + name + " (hase binds only pods it filtered)"}};
  if (!uid.empty() && spec->key != "k8s:" + uid && spec->key != "k8s:" + ns + "/" + name) {
    return json{{"Error", fmt::format("hase: pod {}/{} has UID {}, not the pod hase filtered ({})", ns, name, uid,
                                      spec->key.substr(4))}};
  }
  for (const auto& [what, value] : {std::pair<const char*, const std::string&>{"namespace", ns}, {"pod name", name}, {"node name", node}}) {
    if (Status st = CheckKubeName(what, value); !st.ok()) return json{{"Error", "hase: " + st.ToString()}};
  }
  // Already journalled (kube-scheduler retries a bind that timed out or failed): confirmed on
  // this node is success without an API call, confirmed elsewhere an error; a binding sent but
  // not confirmed is asked again. Never a second row.
  Result<TaskRecord> r = Status::NotFound("");
  if (std::optional<TaskRecord> had = daemon_.FindByKey(spec->key); had && !had->node.empty() && !IsTerminal(had->state)) {
    r = daemon_.RetryBindExternal(*spec, node);
  } else {
    r = daemon_.BindExternal(*spec, node);
  }
  if (!r.ok()) return json{{"Error", "hase: " + r.status().ToString()}};
  if (r->pid == 0 && daemon_.backend_name() == "kubernetes") {
    return json{{"Error", fmt::format("hase: the binding of {}/{} to {} was sent but not confirmed within the bind "
                                      "budget (the API server is slow); hase follows the pod and answers a retry",
                                      ns, name, node)}};
  }
  return json{{"Error", ""}};
}

}  // namespace hase::service
