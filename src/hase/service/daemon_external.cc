// Placements asked from outside the daemon's queue: whether a model can be priced, predicted
// completions per GPU (the extender's filter/score), /v1/advise, and binding a pod
// kube-scheduler sends (BindExternal → the backend). Part of Daemon (daemon.h).
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hase/service/daemon.h"
#include "hase/service/daemon_internal.h"
#include "hase/service/mig_telemetry.h"

namespace hase::service {

using internal::UnpredictableModel;

Result<TaskSpec> Daemon::WithInputShape(const TaskSpec& stated) const {
  TaskSpec spec = stated;
  if (!spec.input_shape.empty()) {
    const size_t n = spec.input_shape.size();
    if (n >= 2 && spec.input_shape[n - 1] == spec.input_shape[n - 2]) spec.input_size = spec.input_shape[n - 1];
    return spec;
  }
  Result<std::vector<int64_t>> declared = oracle_->DeclaredInputShape(spec.model);
  if (spec.input_size > 0) {
    // The side is stated; the channels are the model's (a greyscale model has 1).
    const int64_t channels = declared.ok() && declared->size() == 3 ? declared->front() : 3;
    spec.input_shape = {channels, spec.input_size, spec.input_size};
    return spec;
  }
  if (declared.ok()) {
    spec.input_shape = *declared;
    const size_t n = declared->size();
    if (n >= 2 && (*declared)[n - 1] == (*declared)[n - 2]) spec.input_size = (*declared)[n - 1];
    return spec;
  }
  if (declared.status().IsInvalidArgument()) {
    return Status::InvalidArgument("model '" + spec.model + "' has no fixed input size: " + declared.status().message(),
                                   "task field 'input_shape'",
                                   "state the input, e.g. \"input_shape\": \"3x640x640\" (REST) or the pod annotation "
                                   "hase.io/input-shape: \"3x640x640\"");
  }
  // No ONNX to read (a latency table: Unsupported; an unknown model: NotFound, named by the
  // predictability check): priced by the table's row for the model, shape unknown.
  return spec;
}

std::string Daemon::DeclaredShapeText(const std::string& model) const {
  Result<std::vector<int64_t>> d = oracle_->DeclaredInputShape(model);
  return d.ok() ? sched::InputShapeText(*d) : "";
}

Status Daemon::CheckPredictable(const sched::Task& task) const {
  std::lock_guard<std::mutex> lock(mu_);
  const sched::CycleState cycle = CycleForLocked(task);
  for (const auto& p : cycle.profile) {
    if (p.ok()) return Status::OK();
  }
  return cycle.profile.empty() ? Status::NotFound("the cluster has no GPU types") : cycle.profile.front().status();
}

bool Daemon::AcceptsNewWork(const std::string& node) const {
  return !backend_ || backend_->AcceptsNewWork(node);
}

std::vector<double> Daemon::PredictCompletion(const sched::Task& task) const {
  std::vector<double> c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    c = CompletionsLocked(task, CycleForLocked(task));
  }
  // A cordoned node takes nothing new (backend.h AcceptsNewWork): not advised, not bound.
  for (const sched::Gpu& g : cluster_.gpus) {
    if (!AcceptsNewWork(g.node)) c[g.id] = internal::kInf;
  }
  return c;
}

Result<Advice> Daemon::Advise(const TaskSpec& submitted) const {
  TaskRecord probe;
  HASE_ASSIGN_OR_RETURN(probe.spec, WithInputShape(submitted));
  if (probe.spec.runtime.empty()) probe.spec.runtime = options_.default_runtime;
  const std::vector<double> completion = PredictCompletion(probe.ToSchedTask());
  int best = -1;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (std::isfinite(completion[g.id]) && (best < 0 || completion[g.id] < completion[best])) best = g.id;
  }
  if (best < 0) {
    // A model nobody can predict is a bad request, as for POST /v1/tasks (not "no GPU now").
    if (Status st = CheckPredictable(probe.ToSchedTask()); !st.ok()) return UnpredictableModel(probe.spec, st, DeclaredShapeText(probe.spec.model));
    return Status::NotFound("no GPU can host model '" + submitted.model + "' now", "advise",
                            "check the model name and memory_mib; GET /v1/gpus shows the GPUs");
  }
  const sched::Gpu& g = cluster_.gpus[best];
  Advice a;
  a.gpu = best;
  a.node = g.node;
  a.index = g.index;
  a.gpu_type = cluster_.types[g.type].name;
  a.native = backend_ ? backend_->NativeResource(g.node, a.gpu_type) : "";
  a.predicted_end_s = completion[best];
  a.input_shape = sched::InputShapeText(probe.spec.input_shape);
  return a;
}

Result<TaskRecord> Daemon::BindExternal(const TaskSpec& pod_spec, const std::string& node) {
  TaskSpec spec = pod_spec;
  HASE_RETURN_IF_ERROR(ResolveTeam(spec));  // teams: the pod's namespace mapping (docs/teams.md)
  if (!backend_ || !backend_->RunsPods()) {
    return Status::InvalidArgument("hase was started without --kube-api, so it cannot bind pods", "",
                                   "give --kube-api (a kubectl proxy URL or in-cluster), or drop bindVerb from the "
                                   "extender configuration");
  }
  {
    bool known = false;
    for (const sched::Gpu& g : cluster_.gpus) known = known || g.node == node;
    if (!known) return Status::NotFound("no node '" + node + "' in the cluster");
  }
  sched::Task t;
  {
    TaskRecord probe;
    probe.spec = spec;
    t = probe.ToSchedTask();
  }
  const std::vector<double> completion = PredictCompletion(t);
  int best = -1;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (g.node == node && std::isfinite(completion[g.id]) && (best < 0 || completion[g.id] < completion[best])) best = g.id;
  }
  if (best < 0 && !AcceptsNewWork(node)) {
    return Status::InvalidArgument(fmt::format("node {} is cordoned (spec.unschedulable): nothing new goes there", node),
                                   "", "kube-scheduler retries the pod on another node");
  }
  if (best < 0) {
    return Status::InvalidArgument(fmt::format("no GPU of node {} can host {} now (memory, failed GPUs)", node, spec.model),
                                   "", "kube-scheduler retries the pod; its filter step now excludes the node");
  }
  HASE_ASSIGN_OR_RETURN(TaskStore::Inserted ins, store_->Insert(spec, Now()));
  if (!ins.created) {
    metrics_.CountDuplicate();
    if (auto r = Get(ins.record.id)) return *r;
    return ins.record;
  }
  metrics_.CountSubmitted();
  t = ins.record.ToSchedTask();
  LaunchRequest request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TaskRecord& r = tasks_[ins.record.id] = ins.record;
    const double now = Now();
    state_.now_ms = ToMs(now);
    sched::CycleState cycle = CycleForLocked(t);
    sched::Decision dec;
    dec.kind = sched::Decision::Kind::kBind;
    dec.gpu = best;
    dec.start_ms = ToMs(now);
    dec.end_ms = ToMs(completion[best]);
    policy_->Commit(t, dec, cycle, state_);
    const sched::Gpu& gpu = cluster_.gpus[best];
    r.gpu = best;
    r.node = gpu.node;
    r.gpu_index = gpu.index;
    r.placed_s = r.started_s = now;
    r.predicted_start_s = now;
    r.predicted_end_s = completion[best];
    r.predicted_isolated_ms = cycle.profile[gpu.type].ok() ? cycle.profile[gpu.type]->isolated_ms : 0;
    r.attempts = 1;
    r.state = TaskState::kRunning;
    binding_.insert(r.id);  // the pass thread must not bind it too
    request = LaunchRequestLocked(r);
    // Journalled before the binding (backend.h's contract): after a kill -9, Recover finds the
    // pod bound (watched) or not (bound then).
    if (Status st = PersistLocked({r.id}); !st.ok()) {
      binding_.erase(r.id);
      RemoveFromGpuLocked(r);
      tasks_.erase(r.id);
      (void)store_->Erase(ins.record.id);
      return st;
    }
  }
  Result<int64_t> handle = backend_->Launch(request);  // the v1.Binding, outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  binding_.erase(request.task_id);
  auto it = tasks_.find(request.task_id);
  if (it == tasks_.end()) return Status::Internal("task " + std::to_string(request.task_id) + " vanished while binding");
  TaskRecord& r = it->second;
  if (!handle.ok()) {
    // Nothing ran and the pod is still pending: no phantom load, no journal row.
    const int gpu = r.gpu;
    std::vector<int64_t> changed;
    RemoveFromGpuLocked(r);
    tasks_.erase(it);
    unsynced_.erase(request.task_id);
    (void)store_->Erase(request.task_id);
    PromoteLocked(gpu, Now(), changed);
    (void)PersistLocked(changed);
    LaunchLocked(changed);
    dirty_ = true;
    cv_.notify_all();
    return handle.status();
  }
  if (r.state == TaskState::kRunning && r.attempts == request.attempt) {
    r.pid = *handle;  // 0: sent, not confirmed (the backend follows the pod; a retry confirms)
    (void)PersistLocked({r.id});
  } else if (r.state == TaskState::kCancelled) {
    backend_->Cancel(request.task_id, request.attempt);  // cancelled while binding
  }
  return r;
}

Result<TaskRecord> Daemon::RetryBindExternal(const TaskSpec& spec, const std::string& node) {
  LaunchRequest request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<int64_t> id;
    for (const auto& [tid, r] : tasks_) {
      if (r.spec.key == spec.key && !IsTerminal(r.state)) id = tid;
    }
    if (!id) return Status::NotFound("no unended task for " + spec.key);
    TaskRecord& r = tasks_.at(*id);
    if (binding_.count(r.id)) {
      return Status::Conflict(fmt::format("pod {} is being bound to {} right now", spec.pod, r.node), "",
                              "kube-scheduler retries the pod");
    }
    if (r.node == node && (r.pid != 0 || !backend_ || !backend_->RunsPods())) return r;  // confirmed
    if (r.node != node && r.pid != 0) {
      return Status::InvalidArgument(fmt::format("pod {} is already bound to {}", spec.pod, r.node));
    }
    request = LaunchRequestLocked(r);
    binding_.insert(r.id);
  }
  if (request.node == node) {
    // Sent before, never confirmed: the backend asks again (201, or 409 and the pod says).
    Result<int64_t> handle = backend_->Launch(request);
    std::lock_guard<std::mutex> lock(mu_);
    binding_.erase(request.task_id);
    auto it = tasks_.find(request.task_id);
    if (it == tasks_.end()) return Status::Internal("task vanished while binding");
    if (!handle.ok()) return handle.status();
    if (it->second.state == TaskState::kRunning && it->second.attempts == request.attempt) {
      it->second.pid = *handle;
      (void)PersistLocked({it->first});
    }
    return it->second;
  }
  // Unconfirmed on another node, and kube-scheduler now asks for `node`: if the pod is still
  // unbound the first binding never landed, so the task moves (its row is erased, the pod is
  // bound afresh); bound anywhere, the pod decides.
  std::vector<Result<Backend::Recovered>> seen = backend_->Recover({request}, {0});
  const bool unbound = !seen.empty() && !seen[0].ok() && seen[0].status().IsNotFound();
  {
    std::lock_guard<std::mutex> lock(mu_);
    binding_.erase(request.task_id);
    auto it = tasks_.find(request.task_id);
    if (it == tasks_.end()) return Status::Internal("task vanished while binding");
    if (!unbound) {
      return Status::InvalidArgument(fmt::format("pod {} was sent to {} before; hase follows it there", spec.pod,
                                                 it->second.node));
    }
    TaskRecord& r = it->second;
    const int gpu = r.gpu;
    std::vector<int64_t> changed;
    RemoveFromGpuLocked(r);
    tasks_.erase(it);
    unsynced_.erase(request.task_id);
    why_.erase(request.task_id);
    (void)store_->Erase(request.task_id);
    PromoteLocked(gpu, Now(), changed);
    (void)PersistLocked(changed);
    LaunchLocked(changed);
  }
  return BindExternal(spec, node);
}

void Daemon::FollowPodDevicesLocked(double now) {
  if (!load_ || !backend_ || !backend_->RunsPods()) return;
  // Pod → the GPUs whose fresh DCGM series carry its pod labels.
  std::map<std::string, std::vector<int>> seen;
  for (const sched::Gpu& g : cluster_.gpus) {
    std::optional<telemetry::GpuObservation> obs = LiveObservation(load_->table(), cluster_, mig_decls_, g.id, now);
    if (!obs || obs->load.age_s > options_.load_max_age_s) continue;
    for (const std::string& pod : obs->pods) seen[pod].push_back(g.id);
  }
  if (seen.empty()) return;
  std::vector<int64_t> changed;
  for (auto& [id, r] : tasks_) {
    if (r.state != TaskState::kRunning || r.spec.pod.empty() || r.gpu < 0 || !r.gang.empty()) continue;
    auto it = seen.find(r.spec.pod);
    if (it == seen.end() || std::find(it->second.begin(), it->second.end(), r.gpu) != it->second.end()) continue;
    // The device plugin gave the pod another GPU of the node than the one hase predicted on.
    int to = -1;
    for (int g : it->second) {
      if (cluster_.gpus[g].node == r.node && (to < 0 || g < to)) to = g;
    }
    if (to < 0) continue;  // a series of another node: a pod cannot change nodes
    std::vector<sched::RunningTask>& from = state_.gpus[r.gpu].running;
    auto rt = std::find_if(from.begin(), from.end(), [&](const sched::RunningTask& t) { return t.task_id == id; });
    if (rt == from.end()) continue;
    const int was = r.gpu, was_index = r.gpu_index;
    state_.gpus[to].running.push_back(*rt);
    from.erase(rt);
    r.gpu = to;
    r.gpu_index = cluster_.gpus[to].index;
    policy_->OnGpuChanged(state_, was);
    policy_->OnGpuChanged(state_, to);
    options_.logger->info("move task={} pod={} node={} from_index={} to_index={} reason=\"dcgm-exporter reports the "
                          "pod on that GPU (the device plugin's choice)\"",
                          id, r.spec.pod, r.node, was_index, r.gpu_index);
    changed.push_back(id);
  }
  (void)PersistLocked(changed);
  if (!changed.empty()) dirty_ = true;
}

}  // namespace hase::service
