#include "hase/service/pod_watcher.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>

#include <spdlog/spdlog.h>

#include "hase/service/pod_status.h"

namespace hase::service {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* a, const char* b) {
  if (!j.is_object() || !j.contains(a) || !j[a].is_object()) return "";
  const json& o = j[a];
  return o.contains(b) && o[b].is_string() ? o[b].get<std::string>() : "";
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

void PodWatcher::Report(const WatchedPod& w, const TaskEnd& end, const char* what) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!reported_.insert({w.task_id, w.attempt}).second) return;  // seen by the other path
  }
  ended_.fetch_add(1);
  spdlog::info("pod {} {}: task {} attempt {} ended", w.pod, what, w.task_id, w.attempt);
  ended_cb_(w, end);
}

void PodWatcher::Apply(const std::string& type, const json& pod) {
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") return;
  const std::string uid = Str(pod, "metadata", "uid");
  const std::string pod_name = Str(pod, "metadata", "namespace") + "/" + Str(pod, "metadata", "name");
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const WatchedPod& w : watched_()) {
    const bool same_uid = w.uid == uid;
    // A pod recreated under the name hase bound (another UID) means the bound one is gone.
    const bool replaced = !same_uid && w.pod == pod_name && !uid.empty() && type != "DELETED";
    if (!same_uid && !replaced) continue;
    const std::string phase = Str(pod, "status", "phase");
    TaskEnd end;
    end.ended_s = now;
    if (type == "DELETED" || replaced) {
      end.kind = TaskEnd::Kind::kCancelled;
      end.exit_code = -1;
      end.reason = replaced ? "pod " + pod_name + " was replaced by another pod of that name" : "pod " + pod_name + " was deleted";
      Report(w, end, type == "DELETED" ? "deleted" : "replaced");
    } else if (const std::string bound_to = Str(pod, "spec", "nodeName");
               !w.node.empty() && !bound_to.empty() && bound_to != w.node) {
      end.kind = TaskEnd::Kind::kCancelled;
      end.exit_code = -1;
      end.reason = "pod " + pod_name + " was bound to " + bound_to + ", not to " + w.node + " where hase placed it";
      Report(w, end, "bound elsewhere");
    } else if (phase == "Succeeded" || phase == "Failed") {
      // The containers' own times (a pod that ended while hase was down, or whose event came
      // late), else now.
      const PodTimes times = PodTimesOf(pod);
      if (times.ended_s > 0) end.ended_s = times.ended_s;
      if (times.started_s > 0) end.start = TaskStart{w.node, -1, times.started_s};
      end.exit_code = phase == "Succeeded" ? 0 : FailedExitCode(pod);
      if (phase == "Failed") end.reason = "pod " + pod_name + " Failed";
      Report(w, end, phase == "Succeeded" ? "Succeeded" : "Failed");
    }
  }
}

Result<std::string> PodWatcher::ResyncOnce() {
  // Only pods watched before the list was asked for can be judged absent from it: a pod bound
  // while the list was in flight is not in it yet.
  const std::vector<WatchedPod> watched = watched_();
  {
    // An end reported earlier whose launch is no longer watched cannot be seen again.
    std::set<std::pair<int64_t, int>> still;
    for (const WatchedPod& w : watched) still.insert({w.task_id, w.attempt});
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = reported_.begin(); it != reported_.end();) {
      it = still.count(*it) ? std::next(it) : reported_.erase(it);
    }
  }
  HASE_ASSIGN_OR_RETURN(json list, client_.ListPods(options_.label_selector));
  std::map<std::string, const json*> by_uid;
  for (const json& pod : list["items"]) by_uid[Str(pod, "metadata", "uid")] = &pod;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const WatchedPod& w : watched) {
    auto it = by_uid.find(w.uid);
    if (it == by_uid.end()) {
      TaskEnd end;
      end.kind = TaskEnd::Kind::kCancelled;
      end.exit_code = -1;
      end.reason = "pod " + w.pod + " no longer exists";
      end.ended_s = now;
      Report(w, end, "no longer exists");
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
