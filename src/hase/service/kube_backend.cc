#include "hase/service/kube_backend.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hase/service/pod_status.h"

namespace hase::service {
namespace {

using nlohmann::json;

std::string Field(const json& pod, const char* object, const char* key) {
  if (!pod.contains(object) || !pod[object].is_object()) return "";
  const json& o = pod[object];
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

double NowS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TaskEnd Cancelled(std::string reason) {
  TaskEnd end;
  end.kind = TaskEnd::Kind::kCancelled;
  end.exit_code = -1;
  end.reason = std::move(reason);
  end.ended_s = NowS();
  return end;
}

}  // namespace

std::pair<std::string, std::string> SplitPodName(const std::string& pod) {
  const size_t slash = pod.find('/');
  if (slash == std::string::npos) return {"default", pod};
  return {pod.substr(0, slash), pod.substr(slash + 1)};
}

Result<std::unique_ptr<KubeBackend>> KubeBackend::Create(KubeBackendOptions options) {
  HASE_ASSIGN_OR_RETURN(KubeClient client, KubeClient::Create(options.client));
  return std::unique_ptr<KubeBackend>(new KubeBackend(std::move(client), std::move(options)));
}

KubeBackend::KubeBackend(KubeClient client, KubeBackendOptions options)
    : client_(std::move(client)), options_(std::move(options)) {
  watcher_ = std::make_unique<PodWatcher>(
      client_, options_.watcher, [this] { return Watched(); },
      [this](const WatchedPod& pod, const TaskEnd& end) { Ended(pod, end); });
}

Status KubeBackend::Start(EndCallback on_end, NodeCallback on_node) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return Status::OK();
    started_ = true;
    on_end_ = std::move(on_end);
    on_node_ = std::move(on_node);
  }
  watcher_->Start();
  if (options_.node_poll_s > 0) {
    node_thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu_);
      while (started_) {
        lock.unlock();
        if (Status s = RefreshNodesOnce(); !s.ok()) spdlog::warn("kubernetes: {} (cordons as last seen)", s.ToString());
        lock.lock();
        node_cv_.wait_for(lock, std::chrono::duration<double>(options_.node_poll_s), [this] { return !started_; });
      }
    });
  }
  return Status::OK();
}

Status KubeBackend::RefreshNodesOnce() {
  // One refresh at a time, list and apply together: a list taken before a cordon must not be
  // applied after a newer one (the poll thread and a caller racing).
  std::lock_guard<std::mutex> refresh(refresh_mu_);
  HASE_ASSIGN_OR_RETURN(json list, client_.ListNodes());
  std::set<std::string> cordoned;
  for (const json& n : list["items"]) {
    const json* spec = n.is_object() && n.contains("spec") ? &n["spec"] : nullptr;
    const json* u = spec && spec->is_object() && spec->contains("unschedulable") ? &(*spec)["unschedulable"] : nullptr;
    if (u && u->is_boolean() && u->get<bool>()) {
      cordoned.insert(Field(n, "metadata", "name"));
    }
  }
  std::vector<std::pair<std::string, NodeCondition>> changes;
  NodeCallback on_node;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& n : cordoned) {
      if (cordoned_.count(n)) continue;
      spdlog::info("kubernetes: node {} is cordoned: nothing new goes there; its pods keep running", n);
      changes.emplace_back(n, NodeCondition::kDrained);
    }
    for (const std::string& n : cordoned_) {
      if (cordoned.count(n)) continue;
      spdlog::info("kubernetes: node {} is uncordoned", n);
      changes.emplace_back(n, NodeCondition::kUsable);
    }
    cordoned_ = std::move(cordoned);
    on_node = on_node_;
  }
  // The daemon drains the node's GPUs as for Slurm's DRAIN (REST tasks without a command go
  // nowhere near it either) and resumes them when it is uncordoned. Outside the lock (backend.h).
  if (on_node) {
    for (const auto& [node, condition] : changes) {
      on_node(node, condition,
              condition == NodeCondition::kDrained ? "Kubernetes node cordoned (spec.unschedulable)" : "uncordoned");
    }
  }
  return Status::OK();
}

bool KubeBackend::AcceptsNewWork(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  return !cordoned_.count(node);
}

void KubeBackend::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) return;
    started_ = false;
  }
  node_cv_.notify_all();
  if (node_thread_.joinable()) node_thread_.join();
  watcher_->Stop();
}

std::vector<WatchedPod> KubeBackend::Watched() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<WatchedPod> out;
  out.reserve(bound_.size());
  for (const auto& [key, pod] : bound_) out.push_back(pod);
  return out;
}

void KubeBackend::Ended(const WatchedPod& pod, const TaskEnd& end) {
  EndCallback cb;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bound_.erase({pod.task_id, pod.attempt}) == 0) return;  // reported already
    cb = on_end_;
  }
  if (cb) cb(pod.task_id, pod.attempt, end);
}

void KubeBackend::Watch(const LaunchRequest& request) {
  WatchedPod w;
  w.task_id = request.task_id;
  w.attempt = request.attempt;
  w.pod = request.pod;
  w.uid = request.pod_uid;
  w.node = request.node;
  std::lock_guard<std::mutex> lock(mu_);
  bound_[{request.task_id, request.attempt}] = std::move(w);
}

Result<int64_t> KubeBackend::Launch(const LaunchRequest& request) {
  if (request.pod.empty()) {
    return Status::InvalidArgument(
        fmt::format("task {} is not a pod: the kubernetes backend only binds pods kube-scheduler asked hase to place",
                    request.task_id),
        "", "run REST tasks with a command through `hase serve --executor` or `--backend slurm`");
  }
  const auto [ns, name] = SplitPodName(request.pod);
  const std::string& uid = request.pod_uid;
  const std::string& node = request.node;
  // Every API call gets what is left of the bind budget, so the extender answers /bind inside
  // kube-scheduler's httpTimeout however slowly the API server answers.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.bind_budget_s);
  auto left_s = [&] { return std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count(); };
  constexpr double kMinCallS = 0.05;  // a call with less than this left is not started
  std::string last = "no answer";
  bool maybe_bound = false;  // a POST went out whose answer was lost: it may have bound the pod
  for (int attempt = 0; attempt < std::max(1, options_.bind_attempts) && left_s() > kMinCallS; ++attempt) {
    HASE_ASSIGN_OR_RETURN(BindOutcome out, client_.Bind(ns, name, uid, node, left_s()));
    if (out == BindOutcome::kBound) {
      Watch(request);
      return int64_t{1};
    }
    if (out == BindOutcome::kNotSent) {
      last = "cannot connect to the API server";
      continue;
    }
    if (out == BindOutcome::kNoAnswer) maybe_bound = true;
    if (left_s() <= kMinCallS) break;
    // 409 or no answer: the pod says whether (and where) it is bound.
    Result<json> pod = client_.GetPod(ns, name, left_s());
    if (!pod.ok()) {
      last = pod.status().ToString();
      if (out == BindOutcome::kConflict || pod.status().IsNotFound()) break;
      continue;
    }
    const std::string bound_to = Field(*pod, "spec", "nodeName");
    const std::string pod_uid = Field(*pod, "metadata", "uid");
    if (!uid.empty() && !pod_uid.empty() && pod_uid != uid) {
      return Status::InvalidArgument(
          fmt::format("pod {}/{} now has UID {} (the pod hase filtered is gone)", ns, name, pod_uid));
    }
    if (bound_to == node) {
      Watch(request);
      return int64_t{1};
    }
    if (!bound_to.empty()) {
      return Status::InvalidArgument(fmt::format("pod {}/{} is already bound to {}", ns, name, bound_to));
    }
    maybe_bound = false;  // read after the POST: it did not bind (yet)
    last = out == BindOutcome::kConflict ? "409 Conflict but the pod has no node" : "no answer from the API server";
  }
  if (maybe_bound) {
    // The binding may still land: follow the pod (bound here → it runs; elsewhere, deleted →
    // cancelled) and let the daemon keep the task unconfirmed (handle 0).
    spdlog::warn("kubernetes: binding {}/{} to {} not confirmed within {:.1f} s; following the pod", ns, name, node,
                 options_.bind_budget_s);
    Watch(request);
    return int64_t{0};
  }
  return Status::IO(fmt::format("binding {}/{} to {} failed within {:.1f} s: {}", ns, name, node, options_.bind_budget_s,
                                last));
}

std::vector<Result<Backend::Recovered>> KubeBackend::Recover(const std::vector<LaunchRequest>& requests,
                                                            const std::vector<int64_t>& /*handles*/) {
  std::vector<Result<Recovered>> out;
  out.reserve(requests.size());
  for (const LaunchRequest& q : requests) {
    if (q.pod.empty()) {
      out.push_back(Status::NotFound(fmt::format("task {} is not a pod", q.task_id)));
      continue;
    }
    const auto [ns, name] = SplitPodName(q.pod);
    Result<json> pod = client_.GetPod(ns, name);
    Recovered r;
    r.handle = 1;
    if (!pod.ok()) {
      if (!pod.status().IsNotFound()) {
        // The API server is unreachable: keep watching; the watcher's list settles it.
        spdlog::warn("kubernetes: cannot read pod {} of task {} at start: {}", q.pod, q.task_id, pod.status().ToString());
        Watch(q);
        out.push_back(r);
        continue;
      }
      r.end = Cancelled("pod " + q.pod + " no longer exists");
      out.push_back(r);
      continue;
    }
    const std::string uid = Field(*pod, "metadata", "uid"), bound_to = Field(*pod, "spec", "nodeName");
    const std::string phase = Field(*pod, "status", "phase");
    if (!q.pod_uid.empty() && !uid.empty() && uid != q.pod_uid) {
      r.end = Cancelled("pod " + q.pod + " was replaced by another pod of that name");
    } else if (bound_to.empty()) {
      out.push_back(Status::NotFound("pod " + q.pod + " is not bound yet"));
      continue;
    } else if (bound_to != q.node) {
      r.end = Cancelled(fmt::format("pod {} was bound to {}, not to {} where hase placed it", q.pod, bound_to, q.node));
    } else if (phase == "Succeeded" || phase == "Failed") {
      // Ended while hase was down: its own start, finish and exit code (pod_status.h).
      const PodTimes times = PodTimesOf(*pod);
      TaskEnd end;
      end.exit_code = phase == "Succeeded" ? 0 : FailedExitCode(*pod);
      end.reason = phase == "Failed" ? "pod " + q.pod + " Failed" : "";
      end.ended_s = times.ended_s > 0 ? times.ended_s : NowS();
      if (times.started_s > 0) end.start = TaskStart{q.node, -1, times.started_s};
      r.end = end;
    } else {
      // Started while hase was down: its own start.
      if (const double s = PodTimesOf(*pod).started_s; s > 0) r.start = TaskStart{q.node, -1, s};
      Watch(q);
    }
    out.push_back(r);
  }
  return out;
}

void KubeBackend::Cancel(int64_t task_id, int attempt) {
  // The daemon calls this under its own lock and ends the task itself: no callback here, and
  // the pod leaves the watch first so its DELETED event reports nothing.
  WatchedPod w;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = bound_.find({task_id, attempt});
    if (it == bound_.end()) return;
    w = std::move(it->second);
    bound_.erase(it);
  }
  const auto [ns, name] = SplitPodName(w.pod);
  if (Status s = client_.DeletePod(ns, name, w.uid); !s.ok()) {
    spdlog::warn("kubernetes: task {} cancelled but its pod {} was not deleted: {}", task_id, w.pod, s.ToString());
  }
}

}  // namespace hase::service
