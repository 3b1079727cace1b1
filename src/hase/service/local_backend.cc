#include "hase/service/local_backend.h"

namespace hase::service {
namespace {

TaskEnd Exited(int exit_code, double ended_s) {
  TaskEnd e;
  e.kind = TaskEnd::Kind::kExited;
  e.exit_code = exit_code;
  e.ended_s = ended_s;
  if (exit_code != 0) e.reason = exit_code < 0 ? "process vanished without an exit code" : "non-zero exit code";
  return e;
}

}  // namespace

LocalBackend::LocalBackend(LocalBackendOptions options) : options_(std::move(options)) {
  executor_ = std::make_unique<Executor>(ExecutorOptions{options_.dir, options_.poll_interval_s},
                                         [this](int64_t id, int attempt, int code, double ended) {
                                           if (on_end_) on_end_(id, attempt, Exited(code, ended));
                                         });
}

LocalBackend::~LocalBackend() { Stop(); }

bool LocalBackend::RunsOn(const sched::Gpu& gpu) const {
  return options_.node.empty() || gpu.node == options_.node;
}

Status LocalBackend::Start(EndCallback on_end, NodeCallback /*on_node*/) {
  if (!on_end_) on_end_ = std::move(on_end);
  executor_->Start();
  return Status::OK();
}

void LocalBackend::Stop() { executor_->Stop(); }

Result<int64_t> LocalBackend::Launch(const LaunchRequest& r) {
  if (r.visible_devices.empty()) {
    // A MIG instance whose device UUID is unknown: its GPU index would expose another
    // instance (CUDA shows a MIG-enabled GPU's first instance), so it does not run.
    return Status::Unsupported("GPU " + r.node + "/" + std::to_string(r.gpu_index) +
                                   " is a MIG instance whose MIG device UUID hase does not know",
                               "local executor",
                               "run tasks on MIG instances through --backend slurm or Kubernetes (their GPU plugins "
                               "hand out the instance), or outside hase, reported by POST /v1/tasks/{id}/complete");
  }
  return executor_->Spawn(r.task_id, r.attempt, r.command, r.visible_devices);
}

std::vector<Result<Backend::Recovered>> LocalBackend::Recover(const std::vector<LaunchRequest>& requests,
                                                              const std::vector<int64_t>& /*handles*/) {
  std::vector<Result<Recovered>> out;
  for (const LaunchRequest& r : requests) {
    Result<Executor::Found> f = executor_->Recover(r.task_id, r.attempt);
    if (!f.ok()) {
      out.push_back(f.status());
      continue;
    }
    Recovered rec;
    rec.handle = f->pid;
    if (f->exit_code) {
      rec.end = Exited(*f->exit_code, f->ended_s);  // 0 (unknown): the daemon uses its own now
      if (f->started_s > 0) rec.end->start = TaskStart{r.node, r.gpu_index, f->started_s};
    } else {
      executor_->Watch(r.task_id, r.attempt, f->pid);
    }
    out.push_back(rec);
  }
  return out;
}

void LocalBackend::Cancel(int64_t task_id, int /*attempt*/) { executor_->Kill(task_id); }

}  // namespace hase::service
