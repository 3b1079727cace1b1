#include "hase/service/pod_watcher.h"

#include <algorithm>
#include <chrono>
#include <map>

#include <spdlog/spdlog.h>

namespace hase::service {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* a, const char* b) {
  if (!j.is_object() || !j.contains(a) || !j[a].is_object()) return "";
  const json& o = j[a];
  return o.contains(b) && o[b].is_string() ? o[b].get<std::string>() : "";
}

// The exit code a Failed pod reports: first non-zero terminated exit code, else 1.
int FailedExitCode(const json& pod) {
  if (!pod.contains("status") || !pod["status"].is_object()) return 1;
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const json& st = pod["status"];
    if (!st.contains(list) || !st[list].is_array()) continue;
    for (const json& c : st[list]) {
      const json* t = nullptr;
      if (c.is_object() && c.contains("state") && c["state"].is_object() && c["state"].contains("terminated")) {
        t = &c["state"]["terminated"];
      }
      if (t && t->is_object() && t->contains("exitCode") && (*t)["exitCode"].is_number_integer()) {
        const int code = (*t)["exitCode"].get<int>();
        if (code != 0) return code;
      }
    }
  }
  return 1;
}

// hase's running Kubernetes tasks: journal key "k8s:<uid>" → record.
std::map<std::string, TaskRecord> RunningPodTasks(const Daemon& d) {
  std::map<std::string, TaskRecord> out;
  for (TaskRecord& r : d.List(TaskState::kRunning, 1000000)) {
    if (r.spec.key.rfind("k8s:", 0) == 0 && !r.spec.pod.empty()) out.emplace(r.spec.key.substr(4), std::move(r));
  }
  return out;
}

}  // namespace

void PodWatcher::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void PodWatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string PodWatcher::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

void PodWatcher::NoteError(const Status& s) {
  errors_.fetch_add(1);
  spdlog::warn("pod watcher: {}", s.ToString());
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = s.ToString();
}

void PodWatcher::Apply(const std::string& type, const json& pod) {
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") return;
  const std::string uid = Str(pod, "metadata", "uid");
  const std::string pod_name = Str(pod, "metadata", "namespace") + "/" + Str(pod, "metadata", "name");
  for (auto& [task_uid, r] : RunningPodTasks(daemon_)) {
    const bool same_uid = task_uid == uid;
    // A pod recreated under the name hase bound (another UID) means the bound one is gone.
    const bool replaced = !same_uid && r.spec.pod == pod_name && !uid.empty() && type != "DELETED";
    if (!same_uid && !replaced) continue;
    const std::string phase = Str(pod, "status", "phase");
    const bool gone = type == "DELETED" || replaced;
    if (!gone && phase != "Succeeded" && phase != "Failed") continue;
    Result<TaskRecord> done = gone                   ? daemon_.Cancel(r.id)
                              : phase == "Succeeded" ? daemon_.Complete(r.id, 0)
                                                     : daemon_.Complete(r.id, FailedExitCode(pod));
    if (done.ok()) {
      ended_.fetch_add(1);
      spdlog::info("pod {} ({}): task {} {}", pod_name, type == "DELETED" ? "deleted" : replaced ? "replaced" : phase,
                   r.id, TaskStateName(done->state));
    }
  }
}

Result<std::string> PodWatcher::ResyncOnce() {
  HASE_ASSIGN_OR_RETURN(json list, client_.ListPods(options_.label_selector));
  std::map<std::string, const json*> by_uid;
  for (const json& pod : list["items"]) by_uid[Str(pod, "metadata", "uid")] = &pod;
  for (auto& [uid, r] : RunningPodTasks(daemon_)) {
    auto it = by_uid.find(uid);
    if (it == by_uid.end()) {
      if (daemon_.Cancel(r.id).ok()) {
        ended_.fetch_add(1);
        spdlog::info("pod {} no longer exists: task {} cancelled", r.spec.pod, r.id);
      }
    } else {
      Apply("MODIFIED", *it->second);
    }
  }
  return Str(list, "metadata", "resourceVersion");
}

void PodWatcher::Loop() {
  double backoff_s = 1;
  auto stopping = [&](double wait_s) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return stop_; });
    return stop_;
  };
  while (!stopping(0)) {
    Result<std::string> rv = ResyncOnce();
    if (!rv.ok()) {
      NoteError(rv.status());
      if (stopping(backoff_s)) return;
      backoff_s = std::min(backoff_s * 2, options_.max_backoff_s);
      continue;
    }
    std::string version = *rv;
    // Watch windows from the last version seen until an error asks for a re-list.
    while (!stopping(0)) {
      Status s = client_.WatchPods(options_.label_selector, version, options_.watch_timeout_s, options_.idle_s,
                                   [&](const std::string& type, const json& pod) {
                                     const std::string v = Str(pod, "metadata", "resourceVersion");
                                     if (!v.empty()) version = v;
                                     Apply(type, pod);
                                     std::lock_guard<std::mutex> lock(mu_);
                                     return !stop_;
                                   });
      if (!s.ok()) {
        NoteError(s);
        if (stopping(backoff_s)) return;
        backoff_s = std::min(backoff_s * 2, options_.max_backoff_s);
        break;  // re-list
      }
      backoff_s = 1;
    }
  }
}

}  // namespace hase::service
