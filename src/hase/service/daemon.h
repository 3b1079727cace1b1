// Daemon: the scheduler behind `hase serve` — a durable queue, live GPU load, the simulator's
// policy code, an optional backend that runs what it places (backend.h: local executor, Slurm),
// and the state the REST API and the Kubernetes extender read.
//
// Flow. Submit() commits the task to the journal (TaskStore) and returns; a scheduler thread
// then runs policy cycles (sched::Policy::Schedule + Commit, the same code `hase simulate`
// uses) over the central queue, highest priority first, then by submission. Every cycle
// starts by refreshing each GPU's background load from telemetry (see BackgroundLoad below).
// A bind that starts now makes the task `running` (the backend launches it); one that joins the
// GPU's local queue makes it `bound`, promoted to running when the GPU frees up.
//
// Live load. GpuState::background is the DCGM LoadSnapshot of the GPU (matched by node name and
// index) minus the demand of tasks hase itself runs there (DCGM sees them too), if the snapshot
// is at most load_max_age_s old. Otherwise (telemetry down, GPU never seen, too old) it is
// idle: the analytic-only estimate of what hase placed. Health() reports degraded whenever the
// scraper does; scheduling never stops for it.
//
// Recovery. Start() rebuilds everything from the journal: queued tasks re-enter the queue in
// order; bound and running tasks are put back on their GPUs (running ones with their remaining
// predicted work), and the backend re-adopts launches that outlived the previous daemon
// (Backend::Recover). Every state change is journalled before it is acted on (running is
// written before the launch, the launch's handle after it), so a `kill -9` at any moment loses
// and duplicates nothing.
//
// Failures. MarkGpuFailed / MarkNodeFailed kill what runs there and re-queue every task
// placed there (attempts + 1); failed GPUs get capacity -1 MiB so every Filter rejects them
// until RecoverGpu, plus a phantom reservation (task id -2, start +inf) so policies that
// evaluate one idle GPU per type never take a failed GPU as its type's representative.
// Failure marks live in memory only (a restart brings every GPU back). Tasks the policy
// rejects while some GPU is failed stay queued. A backend that watches node health (Slurm:
// DRAIN/DOWN) calls MarkNodeFailed / RecoverNode itself.
//
// Thread-safety: all public methods are safe for concurrent use (one mutex over the
// scheduling state; the journal has its own).
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/sched/cluster_state.h"
#include "hase/sched/latency_oracle.h"
#include "hase/sched/policy.h"
#include "hase/service/backend.h"
#include "hase/service/metrics.h"
#include "hase/service/task_record.h"
#include "hase/service/task_store.h"
#include "hase/telemetry/dcgm_scraper.h"

namespace hase::service {

struct DaemonOptions {
  std::string state_dir = "hase-state";  // journal (hase.db) and local backend files (exec/)
  std::string policy = "hase";           // a sched::PolicyNames() entry
  TaskStoreOptions store;
  // Affects behaviour.
  double load_max_age_s = 300;  // older DCGM snapshots are ignored (analytic-only), seconds
  // The local backend (LocalBackend), used when Create gets no backend of its own.
  bool executor = false;        // run task commands here (standalone mode)
  std::string executor_node;    // the node this executor runs; "" = every node (one-node setup)
  // Runtime journalled with a task that names none (`hase serve --runtime`), so a restart with
  // another --runtime does not re-price queued tasks; "" = leave it empty (latency tables).
  std::string default_runtime;
  // Affects performance.
  double tick_s = 1.0;          // a cycle runs at least this often even without events, s
  int max_cycles_per_pass = 256;  // most queued tasks offered per pass (queue head first)
  // Tests pass a fake clock; default telemetry::WallClockSeconds.
  std::function<double()> now_s;
};

// One GPU as GET /v1/gpus reports it.
struct GpuView {
  int id = 0;
  std::string node;
  int index = 0;
  std::string type;
  bool failed = false;
  int running = 0, queued = 0;
  double memory_mib = 0, memory_used_mib = 0;
  std::optional<telemetry::GpuObservation> live;  // telemetry's latest observation
  bool load_used = false;     // live load entered the last cycle (fresh enough)
  double background_sm = 0;   // background SM activity the policy saw, 0–1
  double projected_finish_s = 0;
};

// Where hase would run a task now (POST /v1/advise), without accepting it.
struct Advice {
  int gpu = -1;                 // Cluster GPU id
  std::string node;
  int index = 0;                // GPU index on the node
  std::string gpu_type;         // catalog type
  std::string native;           // the backend's name for it ("gpu:a100:1" under Slurm), or ""
  double predicted_end_s = 0;   // predicted completion if started now, wall seconds
};

struct DaemonHealth {
  bool degraded = false;
  std::vector<std::string> reasons;
};

class Daemon {
 public:
  // Builds the daemon. `scraper` may be null (no telemetry: analytic-only, not degraded) and
  // must outlive the daemon. `backend` runs what the daemon places (owned); null = the local
  // executor when options.executor, else nothing runs tasks (an outside runner reports ends
  // through Complete). Errors: NotFound (unknown policy), IO/Parse (journal),
  // InvalidArgument (cluster).
  static Result<std::unique_ptr<Daemon>> Create(sched::Cluster cluster,
                                                std::shared_ptr<const sched::LatencyOracle> oracle,
                                                DaemonOptions options,
                                                const telemetry::DcgmScraper* scraper,
                                                std::unique_ptr<Backend> backend = nullptr);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Recovers from the journal, then starts the scheduler thread (and backend). Errors: IO.
  Status Start();
  void Stop();

  // Accepts a task (journalled on return). `created` is false when spec.key was seen before.
  // A spec without a runtime is journalled with DaemonOptions::default_runtime.
  Result<TaskStore::Inserted> Submit(const TaskSpec& spec);
  std::optional<TaskRecord> Get(int64_t id) const;
  // Newest first, at most `limit`, optionally only one state.
  std::vector<TaskRecord> List(std::optional<TaskState> state, size_t limit) const;
  // Cancels a queued, bound or running task (the backend stops it). NotFound for an unknown id;
  // InvalidArgument when it already ended.
  Result<TaskRecord> Cancel(int64_t id);
  // An outside runner reports the end of a running task. NotFound / InvalidArgument as Cancel.
  Result<TaskRecord> Complete(int64_t id, int exit_code);

  // GPU/node failure handling (see file comment). NotFound for an unknown GPU/node. Returns the
  // number of tasks re-queued.
  Result<int> MarkGpuFailed(int gpu, const std::string& reason);
  Result<int> MarkNodeFailed(const std::string& node, const std::string& reason);
  Status RecoverGpu(int gpu);
  // RecoverGpu for every failed GPU of `node`; returns how many came back. NotFound (node).
  Result<int> RecoverNode(const std::string& node);

  std::vector<GpuView> Gpus() const;
  std::string MetricsText() const;
  DaemonHealth Health() const;

  // --- For the Kubernetes extender (extender.h) ---
  // Predicted completion (wall seconds) of `task` on each GPU of the cluster, or +inf where it
  // cannot run (failed GPU, too little memory, no profile). Uses the policy's oracle and
  // contention model on the live state.
  std::vector<double> PredictCompletion(const sched::Task& task) const;
  // The GPU with the earliest predicted completion of `spec` on the live state (the
  // extender's criterion; PredictCompletion), without submitting anything. Errors: NotFound
  // when no GPU can host it (unknown model, too little memory everywhere).
  Result<Advice> Advise(const TaskSpec& spec) const;
  // Records a placement decided by kube-scheduler: a running task on the best GPU of `node`.
  // Idempotent by spec.key. Errors: NotFound (node), InvalidArgument (nothing fits there).
  // The kubelet starts the pod; no backend launches it (a Kubernetes binder backend would,
  // see backend.h).
  Result<TaskRecord> BindExternal(const TaskSpec& spec, const std::string& node);

  const sched::Cluster& cluster() const { return cluster_; }
  // The backend's name ("local", "slurm"), or "" when nothing runs tasks.
  std::string backend_name() const { return backend_ ? backend_->Name() : ""; }
  const std::string& policy_name() const;

  // Runs one scheduling pass now, on the caller's thread (tests; the thread does the same).
  void RunPassForTest();

 private:
  Daemon(sched::Cluster cluster, std::shared_ptr<const sched::LatencyOracle> oracle,
         DaemonOptions options, const telemetry::DcgmScraper* scraper, std::unique_ptr<TaskStore> store,
         std::unique_ptr<Backend> backend);

  // (-priority, -Policy::QueueKey, submitted_s, id): the policy's order within a priority
  // (hase: longest first with aging; arrival order for the others). Deterministic per record.
  using QueueKey = std::tuple<int, double, double, int64_t>;
  QueueKey KeyOf(const TaskRecord& r) const {
    return {-r.spec.priority, -policy_->QueueKey(r.ToSchedTask(), cluster_), r.submitted_s, r.id};
  }

  void Loop();
  void PassLocked(double now);                       // requires mu_
  void RefreshGpusLocked(double now);                // requires mu_
  void PromoteLocked(int gpu, double now, std::vector<int64_t>& changed);  // requires mu_
  void LaunchLocked(const std::vector<int64_t>& ids);                      // requires mu_
  LaunchRequest LaunchRequestLocked(const TaskRecord& r) const;             // requires mu_
  // Launches what LaunchLocked queued, releasing `lock` (on mu_) around Backend::Launch.
  void LaunchPendingLocked(std::unique_lock<std::mutex>& lock);
  void RemoveFromGpuLocked(const TaskRecord& r);     // requires mu_
  void FinishLocked(TaskRecord& r, TaskState s, int exit_code, double now);  // requires mu_
  int RequeueGpuLocked(int gpu, const std::string& reason, double now,
                       std::vector<int64_t>& changed);  // requires mu_
  void RequeueTaskLocked(TaskRecord& r, const std::string& reason);  // requires mu_
  Status PersistLocked(const std::vector<int64_t>& ids);  // requires mu_
  void OnEnd(int64_t id, int attempt, const TaskEnd& end);
  void OnNode(const std::string& node, bool healthy, const std::string& reason);
  Result<sched::TaskProfile> ProfileOnLocked(const TaskRecord& r, int gpu) const;  // requires mu_
  sched::CycleState CycleForLocked(const sched::Task& t) const;                    // requires mu_
  bool ExecutesOn(int gpu) const;
  double Now() const { return options_.now_s(); }
  // Scheduler time: ms since this daemon was created. Kept small because sched's timeline
  // arithmetic in absolute epoch ms (~1.7e12) loses sub-ms precision.
  double ToMs(double wall_s) const { return (wall_s - epoch_s_) * 1000.0; }
  double ToS(double ms) const { return epoch_s_ + ms / 1000.0; }

  // Fixed at construction.
  const sched::Cluster cluster_;
  const std::shared_ptr<const sched::LatencyOracle> oracle_;
  const DaemonOptions options_;
  const telemetry::DcgmScraper* const scraper_;  // may be null
  const std::unique_ptr<TaskStore> store_;
  const std::unique_ptr<Backend> backend_;  // may be null (nothing runs tasks)
  Metrics metrics_;
  const double epoch_s_;  // wall seconds at construction: scheduler time 0

  mutable std::mutex mu_;
  std::condition_variable cv_;
  sched::ClusterState state_;                       // guarded by mu_
  std::unique_ptr<sched::Policy> policy_;           // guarded by mu_
  std::map<int64_t, TaskRecord> tasks_;             // guarded by mu_, every task
  int64_t quarantined_ = 0;                          // guarded by mu_: journal rows quarantined
  std::string first_quarantine_;                     // guarded by mu_: the first one, for /healthz
  std::set<QueueKey> queue_;                        // guarded by mu_, queued tasks
  std::map<int, double> failed_gpus_;               // guarded by mu_: id → original memory
  std::vector<bool> load_used_;                     // guarded by mu_, per GPU, last refresh
  std::map<int64_t, LaunchRequest> pending_launches_;  // guarded by mu_: journalled running, not launched
  bool dirty_ = true;                               // guarded by mu_: a pass is due
  bool stop_ = false;                               // guarded by mu_
  std::thread thread_;
};

}  // namespace hase::service
