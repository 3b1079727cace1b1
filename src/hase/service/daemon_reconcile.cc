// The daemon's reconciliation with the world its backends report: how a launch ended (OnEnd),
// node health (OnNode), GPU/node failures and their re-queues, and recovery. Split from
// daemon.cc (issue #22); the queue and passes stay there.
#include <fmt/format.h>

#include "hase/service/daemon.h"
#include "hase/service/daemon_internal.h"

namespace hase::service {

using internal::kFailedGpuTaskId;
using internal::kInf;

void Daemon::OnEnd(int64_t id, int attempt, const TaskEnd& end) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return;
  TaskRecord& r = it->second;
  if (r.state != TaskState::kRunning || r.attempts != attempt) return;  // cancelled / re-queued meanwhile
  std::vector<int64_t> changed{id};
  const int gpu = r.gpu;
  const double ended_s = end.ended_s;
  switch (end.kind) {
    case TaskEnd::Kind::kExited:
      RemoveFromGpuLocked(r);
      FinishLocked(r, end.exit_code == 0 ? TaskState::kSucceeded : TaskState::kFailed, end.exit_code, ended_s);
      if (end.exit_code != 0) r.reason = end.reason.empty() ? "non-zero exit code" : end.reason;
      break;
    case TaskEnd::Kind::kCancelled:
      RemoveFromGpuLocked(r);
      FinishLocked(r, TaskState::kCancelled, end.exit_code, ended_s);
      r.reason = end.reason;
      break;
    case TaskEnd::Kind::kLost:
      RequeueTaskLocked(r, end.reason);
      metrics_.CountRequeued(1);
      break;
  }
  state_.now_ms = ToMs(ended_s);
  PromoteLocked(gpu, ended_s, changed);
  if (PersistLocked(changed).ok()) LaunchLocked(changed);
  dirty_ = true;
  cv_.notify_all();
}

void Daemon::OnNode(const std::string& node, bool healthy, const std::string& reason) {
  if (healthy) {
    (void)RecoverNode(node);
  } else {
    (void)MarkNodeFailed(node, reason);
  }
}

int Daemon::RequeueGpuLocked(int gpu, const std::string& reason, double now, std::vector<int64_t>& changed) {
  sched::GpuState& g = state_.gpus[gpu];
  std::vector<int> ids;
  for (const auto& rt : g.running) ids.push_back(rt.task_id);
  for (const auto& q : g.queued) ids.push_back(q.task_id);
  for (int id : ids) {
    TaskRecord& r = tasks_.at(id);
    if (r.state == TaskState::kRunning && backend_ && ExecutesOn(r.gpu)) backend_->Cancel(id, r.attempts);
    changed.push_back(id);
    if (!r.spec.pod.empty()) {
      // A pod cannot move: it is deleted (above) and its controller recreates it, which
      // kube-scheduler places anew through the extender.
      RemoveFromGpuLocked(r);
      FinishLocked(r, TaskState::kCancelled, -1, now);
      r.reason = reason + "; its pod was deleted";
      continue;
    }
    RequeueTaskLocked(r, reason);
  }
  if (g.reservation) {
    auto it = tasks_.find(g.reservation->task_id);
    if (it != tasks_.end()) policy_->Forget(it->second.ToSchedTask(), state_);
    g.reservation.reset();
  }
  metrics_.CountRequeued(static_cast<int>(ids.size()));
  return static_cast<int>(ids.size());
}

void Daemon::RequeueTaskLocked(TaskRecord& r, const std::string& reason) {
  pending_launches_.erase(r.id);
  RemoveFromGpuLocked(r);
  r.state = TaskState::kQueued;
  r.gpu = r.gpu_index = -1;
  r.node.clear();
  r.placed_s = r.started_s = 0;
  r.pid = 0;
  r.reason = "re-queued: " + reason;
  queue_.insert(KeyOf(r));
}

Result<int> Daemon::MarkGpuFailed(int gpu, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (gpu < 0 || gpu >= static_cast<int>(cluster_.gpus.size())) return Status::NotFound("no GPU " + std::to_string(gpu));
  HASE_RETURN_IF_ERROR(FlushUnsyncedLocked());
  std::vector<int64_t> changed;
  if (!failed_gpus_.count(gpu)) failed_gpus_[gpu] = cluster_.gpus[gpu].memory_mib;
  state_.gpus[gpu].memory_mib = -1;  // every Filter: cannot host
  const std::string why = "GPU " + cluster_.GpuLabel(gpu) + " failed" + (reason.empty() ? "" : ": " + reason);
  int n = RequeueGpuLocked(gpu, why, Now(), changed);
  // A phantom reservation keeps policies that evaluate "one idle GPU per type" from picking
  // the failed GPU as its type's representative (and then skipping its healthy twins).
  sched::Reservation phantom;
  phantom.task_id = kFailedGpuTaskId;
  phantom.start_ms = kInf;
  state_.gpus[gpu].reservation = phantom;
  policy_->OnGpuChanged(state_, gpu);
  HASE_RETURN_IF_ERROR(PersistLocked(changed));
  dirty_ = true;
  cv_.notify_all();
  return n;
}

Result<int> Daemon::MarkNodeFailed(const std::string& node, const std::string& reason) {
  std::vector<int> gpus;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (g.node == node) gpus.push_back(g.id);
  }
  if (gpus.empty()) return Status::NotFound("no node '" + node + "' in the cluster");
  int n = 0;
  for (int g : gpus) {
    HASE_ASSIGN_OR_RETURN(int k, MarkGpuFailed(g, "node " + node + " failed" + (reason.empty() ? "" : ": " + reason)));
    n += k;
  }
  return n;
}

Status Daemon::RecoverGpu(int gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failed_gpus_.find(gpu);
  if (it == failed_gpus_.end()) return Status::NotFound("GPU " + std::to_string(gpu) + " is not marked failed");
  state_.gpus[gpu].memory_mib = it->second;
  state_.gpus[gpu].reservation.reset();
  failed_gpus_.erase(it);
  policy_->OnGpuChanged(state_, gpu);
  dirty_ = true;
  cv_.notify_all();
  return Status::OK();
}

Result<int> Daemon::RecoverNode(const std::string& node) {
  std::vector<int> gpus;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const sched::Gpu& g : cluster_.gpus) {
      if (g.node == node && failed_gpus_.count(g.id)) gpus.push_back(g.id);
    }
  }
  bool known = false;
  for (const sched::Gpu& g : cluster_.gpus) known = known || g.node == node;
  if (!known) return Status::NotFound("no node '" + node + "' in the cluster");
  int n = 0;
  for (int g : gpus) n += RecoverGpu(g).ok() ? 1 : 0;
  return n;
}

}  // namespace hase::service
