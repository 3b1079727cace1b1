// The daemon's reconciliation with the world its backends report: where and when a launch
// really started (OnStart), how it ended (OnEnd), node health (OnNode), GPU/node failures and
// drains and their re-queues, outside runners' leases, and recovery after a restart. Split from
// daemon.cc (issue #22); the queue and passes stay there.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hase/service/daemon.h"
#include "hase/service/daemon_internal.h"

namespace hase::service {

using internal::kFailedGpuTaskId;
using internal::kInf;

TaskRecord* Daemon::RunningLaunchLocked(int64_t id, int attempt) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return nullptr;
  TaskRecord& r = it->second;
  // Ended, cancelled or re-queued meanwhile: the report is about an older launch.
  return r.state == TaskState::kRunning && r.attempts == attempt ? &r : nullptr;
}

void Daemon::OnEnd(int64_t id, int attempt, const TaskEnd& end) {
  std::lock_guard<std::mutex> lock(mu_);
  TaskRecord* found = RunningLaunchLocked(id, attempt);
  if (!found) return;
  TaskRecord& r = *found;
  std::vector<int64_t> changed{id};
  awaiting_start_.erase(id);
  if (internal::IsNotStartedNote(r.reason)) r.reason.clear();  // also one journalled before a restart
  if (end.start) ApplyStartLocked(r, *end.start);  // where and when it ran, if not reported before
  const int gpu = r.gpu;
  const double now = Now();
  // The backend's end time (Slurm's EndTime, the exit file's), also when seen late.
  const double ended_s = end.ended_s > 0 ? end.ended_s : now;
  lease_renewed_.erase(id);
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
  // What waits on the GPU starts now at the earliest (an end seen late is in the past).
  const double at = std::max(ended_s, now);
  state_.now_ms = ToMs(at);
  PromoteLocked(gpu, at, changed);
  if (PersistLocked(changed).ok()) LaunchLocked(changed);
  dirty_ = true;
  cv_.notify_all();
}

void Daemon::OnStart(int64_t id, int attempt, const TaskStart& start) {
  std::lock_guard<std::mutex> lock(mu_);
  TaskRecord* found = RunningLaunchLocked(id, attempt);
  if (!found) return;
  TaskRecord& r = *found;
  awaiting_start_.erase(id);
  const bool was_waiting = internal::IsNotStartedNote(r.reason);
  if (was_waiting) r.reason.clear();
  const int from = r.gpu;
  if (!ApplyStartLocked(r, start) && !was_waiting) return;
  std::vector<int64_t> changed{id};
  // Moved: what waits in the local queue of the GPU hase had chosen may start there now.
  if (r.gpu != from && from >= 0) PromoteLocked(from, std::max(Now(), ToS(state_.now_ms)), changed);
  // A failed write stays in unsynced_ and is written before the next placement.
  if (PersistLocked(changed).ok()) LaunchLocked(changed);
  dirty_ = true;
  cv_.notify_all();
}

bool Daemon::ApplyStartLocked(TaskRecord& r, const TaskStart& start) {
  bool changed = false;
  if (start.started_s > 0 && std::abs(start.started_s - r.started_s) > 1e-3) {
    r.started_s = start.started_s;
    if (r.gpu >= 0) {  // its remaining work is projected from its own start
      for (sched::RunningTask& rt : state_.gpus[r.gpu].running) {
        if (rt.task_id == r.id) rt.started_ms = ToMs(r.started_s);
      }
    }
    changed = true;
  }
  // A k-GPU task keeps the GPUs hase recorded: Slurm names one index per line of its GRES
  // detail, and all k are the node's GPUs of the type either way.
  if (r.gpu < 0 || !r.gang.empty() || start.node.empty() || start.gpu_index < 0 ||
      (start.node == r.node && start.gpu_index == r.gpu_index)) {
    return changed;
  }
  const int from = r.gpu;
  int to = -1;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (g.node == start.node && g.index == start.gpu_index && g.type == cluster_.gpus[from].type) {
      to = g.id;
      break;
    }
  }
  if (to < 0) {
    options_.logger->warn("start task={} node={} index={}: no {} GPU there in hase's cluster; kept at gpu={} node={} "
                          "index={}",
                          r.id, start.node, start.gpu_index, cluster_.types[cluster_.gpus[from].type].name, r.gpu,
                          r.node, r.gpu_index);
    return changed;
  }
  // The backend's GPU is where the task's load and memory are: move its running entry there.
  auto& src = state_.gpus[from].running;
  auto rt = std::find_if(src.begin(), src.end(), [&](const sched::RunningTask& x) { return x.task_id == r.id; });
  if (rt != src.end()) {
    state_.gpus[to].running.push_back(*rt);
    src.erase(rt);
  }
  options_.logger->info("move task={} from_gpu={} from_node={} from_index={} gpu={} node={} index={} reason=\"{} gave "
                        "this GPU\"",
                        r.id, from, r.node, r.gpu_index, to, start.node, start.gpu_index,
                        backend_ ? backend_->Name() : "the runner");
  r.gpu = to;
  r.node = start.node;
  r.gpu_index = start.gpu_index;
  if (auto w = why_.find(r.id); w != why_.end()) {
    w->second.moved = PlacementWhy::Moved{to, start.node, start.gpu_index, backend_ ? backend_->Name() : "the runner",
                                          Now()};
  }
  policy_->OnGpuChanged(state_, from);
  policy_->OnGpuChanged(state_, to);
  return true;
}

void Daemon::OnNode(const std::string& node, NodeCondition condition, const std::string& reason) {
  switch (condition) {
    case NodeCondition::kUsable:
      (void)RecoverNode(node);
      break;
    case NodeCondition::kDrained:
      (void)DrainNode(node, reason, /*requeue=*/false);
      break;
    case NodeCondition::kDown:
      (void)MarkNodeFailed(node, reason);
      break;
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
  awaiting_start_.erase(r.id);
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
  if (gpu < 0 || gpu >= static_cast<int>(cluster_.gpus.size())) return Status::NotFound("no GPU " + std::to_string(gpu));
  return FailGpus({gpu}, reason);
}

Result<int> Daemon::MarkNodeFailed(const std::string& node, const std::string& reason) {
  std::vector<int> gpus = NodeGpus(node);
  if (gpus.empty()) return Status::NotFound("no node '" + node + "' in the cluster");
  return FailGpus(gpus, "node " + node + " failed" + (reason.empty() ? "" : ": " + reason));
}

std::vector<int> Daemon::NodeGpus(const std::string& node) const {
  std::vector<int> gpus;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (g.node == node) gpus.push_back(g.id);
  }
  return gpus;
}

Result<int> Daemon::FailGpus(const std::vector<int>& gpus, const std::string& reason) {
  // One hold of the lock for all of them: a pass between two GPUs of a node would place the
  // first one's tasks on the second, which then re-queues them again.
  std::lock_guard<std::mutex> lock(mu_);
  HASE_RETURN_IF_ERROR(FlushUnsyncedLocked());
  std::vector<int64_t> changed;
  const double now = Now();
  int n = 0;
  for (int gpu : gpus) {
    const std::string why = "GPU " + cluster_.GpuLabel(gpu) + " failed" + (reason.empty() ? "" : ": " + reason);
    n += RequeueGpuLocked(gpu, why, now, changed);
    HoldGpuLocked(gpu);
    drained_.erase(gpu);
    failed_why_[gpu] = reason;
  }
  HASE_RETURN_IF_ERROR(PersistLocked(changed));
  dirty_ = true;
  cv_.notify_all();
  return n;
}

void Daemon::HoldGpuLocked(int gpu) {
  if (!failed_gpus_.count(gpu)) failed_gpus_[gpu] = cluster_.gpus[gpu].memory_mib;
  state_.gpus[gpu].memory_mib = -1;  // every Filter: cannot host
  // A phantom reservation keeps policies that evaluate "one idle GPU per type" from picking
  // the closed GPU as its type's representative (and then skipping its healthy twins).
  sched::Reservation phantom;
  phantom.task_id = kFailedGpuTaskId;
  phantom.start_ms = kInf;
  state_.gpus[gpu].reservation = phantom;
  policy_->OnGpuChanged(state_, gpu);
}

int Daemon::DrainGpuLocked(int gpu, const std::string& reason, bool requeue, double now,
                           std::vector<int64_t>& changed) {
  const std::string why = "GPU " + cluster_.GpuLabel(gpu) + " drained" + (reason.empty() ? "" : ": " + reason);
  int n = 0;
  if (requeue) {
    n = RequeueGpuLocked(gpu, why, now, changed);  // stops what runs, as a failure does
  } else {
    // Running tasks finish; tasks bound to its local queue, and launches the backend has not
    // seen start (a Slurm job that pends would wait for the drain to end), are placed anew.
    sched::GpuState& g = state_.gpus[gpu];
    std::vector<int> bound;
    for (const sched::RunningTask& rt : g.running) {
      if (!awaiting_start_.count(rt.task_id)) continue;
      TaskRecord& r = tasks_.at(rt.task_id);
      if (backend_ && backend_->StartedAnyway(r.id, r.attempts)) continue;  // it runs: let it finish
      if (backend_ && ExecutesOn(gpu)) backend_->Cancel(r.id, r.attempts);
      bound.push_back(rt.task_id);
    }
    for (const sched::QueuedTask& q : g.queued) bound.push_back(q.task_id);
    for (int id : bound) {
      RequeueTaskLocked(tasks_.at(id), why + " before it started");
      changed.push_back(id);
    }
    if (g.reservation) {
      auto it = tasks_.find(g.reservation->task_id);
      if (it != tasks_.end()) policy_->Forget(it->second.ToSchedTask(), state_);
      g.reservation.reset();
    }
    n = static_cast<int>(bound.size());
    metrics_.CountRequeued(n);
  }
  HoldGpuLocked(gpu);
  failed_why_.erase(gpu);
  drained_[gpu] = reason;
  return n;
}

Result<int> Daemon::DrainGpu(int gpu, const std::string& reason, bool requeue) {
  if (gpu < 0 || gpu >= static_cast<int>(cluster_.gpus.size())) return Status::NotFound("no GPU " + std::to_string(gpu));
  return DrainGpus({gpu}, reason, requeue);
}

Result<int> Daemon::DrainNode(const std::string& node, const std::string& reason, bool requeue) {
  std::vector<int> gpus = NodeGpus(node);
  if (gpus.empty()) return Status::NotFound("no node '" + node + "' in the cluster");
  return DrainGpus(gpus, "node " + node + " drained" + (reason.empty() ? "" : ": " + reason), requeue);
}

Result<int> Daemon::DrainGpus(const std::vector<int>& gpus, const std::string& reason, bool requeue) {
  // One hold of the lock for all of them (as FailGpus): what leaves one GPU of a drained node
  // is never placed on another of its GPUs in between.
  std::lock_guard<std::mutex> lock(mu_);
  HASE_RETURN_IF_ERROR(FlushUnsyncedLocked());
  std::vector<int64_t> changed;
  const double now = Now();
  int n = 0;
  for (int gpu : gpus) {
    const int k = DrainGpuLocked(gpu, reason, requeue, now, changed);
    options_.logger->info("drain gpu={} node={} index={} requeue={} requeued={} reason=\"{}\"", gpu,
                          cluster_.gpus[gpu].node, cluster_.gpus[gpu].index, requeue, k, reason);
    n += k;
  }
  HASE_RETURN_IF_ERROR(PersistLocked(changed));
  LaunchLocked(changed);
  dirty_ = true;
  cv_.notify_all();
  return n;
}

bool Daemon::OutsideLocked(const TaskRecord& r) const {
  if (r.state != TaskState::kRunning || !r.spec.pod.empty()) return false;
  return r.spec.command.empty() || r.gpu < 0 || !ExecutesOn(r.gpu);
}

void Daemon::ExpireLeasesLocked(double now) {
  if (options_.outside_lease_s <= 0) return;
  std::vector<int64_t> changed;
  for (auto& [id, r] : tasks_) {
    if (!OutsideLocked(r)) continue;
    double since = std::max(r.started_s, epoch_s_);
    if (auto it = lease_renewed_.find(id); it != lease_renewed_.end()) since = std::max(since, it->second);
    if (now - since < options_.outside_lease_s) continue;
    const int gpu = r.gpu;
    RemoveFromGpuLocked(r);
    FinishLocked(r, TaskState::kFailed, -1, now);
    r.reason = fmt::format(
        "outside lease expired: no POST /v1/tasks/{}/complete or /heartbeat for {:.0f} s (hase serve "
        "--outside-lease); its GPU was freed. Report the end with /complete, renew the lease with /heartbeat "
        "(at most every {:.0f} s), or start hase serve with a longer --outside-lease",
        id, options_.outside_lease_s, options_.outside_lease_s);
    options_.logger->info("expire task={} gpu={} node={} index={} reason=\"outside lease of {:.0f} s\"", id, gpu,
                          r.node, r.gpu_index, options_.outside_lease_s);
    lease_renewed_.erase(id);
    changed.push_back(id);
    if (gpu >= 0) PromoteLocked(gpu, now, changed);
  }
  if (changed.empty()) return;
  if (PersistLocked(changed).ok()) LaunchLocked(changed);
  dirty_ = true;
}

Result<double> Daemon::Heartbeat(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return Status::NotFound("no task " + std::to_string(id));
  TaskRecord& r = it->second;
  if (r.state != TaskState::kRunning) {
    return Status::Conflict("task " + std::to_string(id) + " is " + TaskStateName(r.state) + ", not running", "",
                            "only a running task has a lease");
  }
  if (!OutsideLocked(r)) {
    return Status::Conflict("task " + std::to_string(id) + " is run by hase's " + backend_name() +
                                " backend, which reports its end; it has no lease",
                            "", "heartbeats are for tasks without a command, run outside hase");
  }
  const double now = Now();
  lease_renewed_[id] = now;
  return options_.outside_lease_s > 0 ? now + options_.outside_lease_s : internal::kInf;
}

void Daemon::RecoverLaunchesLocked(std::unique_lock<std::mutex>& lock, double now, std::vector<int64_t>& changed) {
  // Launches that outlived the previous daemon (processes, Slurm jobs).
  if (backend_) {
    std::vector<LaunchRequest> requests;
    std::vector<int64_t> handles;
    for (auto& [id, r] : tasks_) {
      if (r.state != TaskState::kRunning || !LaunchableLocked(r)) continue;
      requests.push_back(LaunchRequestLocked(r));
      handles.push_back(r.pid);
    }
    std::vector<Result<Backend::Recovered>> found = backend_->Recover(requests, handles);
    for (size_t i = 0; i < requests.size() && i < found.size(); ++i) {
      const int64_t id = requests[i].task_id;
      TaskRecord& r = tasks_.at(id);
      if (!found[i].ok()) {
        r.pid = 0;  // never launched: LaunchLocked launches it below
        changed.push_back(id);
      } else if (found[i]->end) {
        TaskEnd end = *found[i]->end;
        if (end.ended_s <= 0) end.ended_s = now;
        lock.unlock();
        OnEnd(id, r.attempts, end);
        lock.lock();
      } else {
        r.pid = found[i]->handle;
        if (found[i]->start) ApplyStartLocked(r, *found[i]->start);  // started while hase was down
        changed.push_back(id);
        // Followed from now on; a Slurm job may still pend (its start is read back).
        if (backend_->ReportsStarts()) awaiting_start_.insert(id);
      }
    }
  }
}

Status Daemon::RecoverGpu(int gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failed_gpus_.find(gpu);
  if (it == failed_gpus_.end()) {
    return Status::NotFound("GPU " + std::to_string(gpu) + " is not marked failed or drained");
  }
  state_.gpus[gpu].memory_mib = it->second;
  state_.gpus[gpu].reservation.reset();
  failed_gpus_.erase(it);
  drained_.erase(gpu);
  failed_why_.erase(gpu);
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
