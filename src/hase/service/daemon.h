// Daemon: the scheduler behind `hase serve` — a durable queue, live GPU load, the simulator's
// policy code, an optional backend that runs what it places (backend.h: local executor, Slurm,
// Kubernetes), and the state the REST API and the Kubernetes extender read. Files: daemon.cc
// (core: queue, passes, launches), daemon_reconcile.cc (what backends report: ends, node
// health, failures, recovery), daemon_report.cc (views, /metrics, why), daemon_external.cc
// (extender, advise, bind).
//
// Flow. Submit() commits the task to the journal (TaskStore) and returns; a scheduler thread
// then runs policy cycles (sched::Policy::Schedule + Commit, the same code `hase simulate`
// uses) over the central queue, highest priority first, then by submission. Every cycle
// starts by refreshing each GPU's background load from telemetry (see BackgroundLoad below).
// A bind that starts now makes the task `running` (the backend launches it); one that joins the
// GPU's local queue makes it `bound`, promoted to running when the GPU frees up.
//
// Live load. GpuState::background is the DCGM LoadSnapshot of the GPU (matched by node name and
// index; the load source resolves host labels to nodes, telemetry/node_map.h) minus the demand
// of tasks hase itself runs there (DCGM sees them too), if the snapshot is at most
// load_max_age_s old. Otherwise (telemetry down, GPU never seen, too old) it is idle: the
// analytic-only estimate of what hase placed. Health() reports degraded whenever the load
// source does; scheduling never stops for it.
//
// Live memory. With a fresh FB_USED (or FB_FREE) reading, memory DCGM reports in use beyond
// what hase's own running tasks were predicted to hold is foreign: the GPU's capacity for
// placement becomes catalog memory − foreign, so a 30 000 MiB task does not go to an H100 that
// reports 21 000 MiB free. A task that fits some GPU's catalog memory but no GPU's live free
// memory waits (it is not rejected).
//
// Projected finishes are recomputed every pass from observed state (RefreshGpusLocked): a
// running task's remaining work from its elapsed time against its prediction; a GPU with
// nothing running, bound or claimed drains now. A DCGM reading dated less than
// load_settle_s after the last start/end of hase's own tasks on its GPU still shows the old
// own load (the exporter's collect interval, a Prometheus window): it is not used, and the
// foreign load and memory derived from the reading before stand in.
//
// Decisions. Each bind is logged (DaemonOptions::logger, info: task, GPU, predicted start and
// end, and the predicted completion on the best GPU of each other type) and kept in memory as
// a Why record (WhyOf, GET /v1/tasks/{id}); /metrics has per-GPU and per-task series.
//
// Recovery. Start() rebuilds everything from the journal: queued tasks re-enter the queue in
// order; bound and running tasks are put back on their GPUs (running ones with their remaining
// predicted work), and the backend re-adopts launches that outlived the previous daemon
// (Backend::Recover). Every state change is journalled before it is acted on (running is
// written before the launch, the launch's handle after it), so a `kill -9` at any moment loses
// and duplicates nothing.
//
// Failures and drains. MarkGpuFailed / MarkNodeFailed kill what runs there and re-queue every
// task placed there (attempts + 1 at its next placement). DrainGpu / DrainNode place nothing
// new there and let running tasks finish (tasks bound to its local queue, not yet started, are
// re-queued, as are launches a backend has not seen start, e.g. Slurm jobs that still pend);
// with `requeue` they also stop and re-queue what runs, as a failure does. Failed
// and drained GPUs get capacity -1 MiB so every Filter rejects them until RecoverGpu, plus a
// phantom reservation (task id -2, start +inf) so policies that evaluate one idle GPU per type
// never take one as its type's representative. The marks live in memory only (a restart
// brings every GPU back). Tasks the policy rejects while some GPU is failed or drained stay
// queued. A backend that watches node health calls OnNode: drained (Slurm DRAIN) → DrainNode,
// down (Slurm DOWN, NOT_RESPONDING, FAIL) → MarkNodeFailed, usable → RecoverNode.
//
// Where tasks really run. A backend that reads placements back (Slurm: the GPU index its GRES
// gave, and the job's StartTime) reports them; the daemon moves the task to that GPU in its
// state and journal (decision log: a `move` line) and takes that start time. Ends carry the
// backend's end time (Slurm's EndTime, the executor's exit file), so a task that started or
// ended while hase was down is recorded with its real times.
//
// Outside runners. A running task that no backend of this daemon runs (no command, or its GPU
// is not the backend's) is run by someone else, who reports its end (Complete). It holds its
// GPU until then or until its lease runs out: DaemonOptions::outside_lease_s after its start,
// its last Heartbeat or this daemon's start, whichever is latest; then it fails with a reason
// and frees the GPU.
//
// Full disk. A journal write that fails marks the daemon degraded (Health names the error).
// A placement whose write failed is undone: the task is queued in memory as in the journal and
// no process starts. Other changes that already happened (a process ended, a cancel) stay in
// memory and are written again at the start of every pass; until that succeeds no placement
// is made, no process is started, and mutations answer IO (HTTP 503).
//
// Thread-safety: all public methods are safe for concurrent use (one mutex over the
// scheduling state; the journal has its own).
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <unordered_map>
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
#include "hase/sched/objective.h"
#include "hase/sched/policy.h"
#include "hase/sched/fair_share.h"
#include "hase/sched/quota.h"
#include "hase/sched/team_config.h"
#include "hase/service/backend.h"
#include "hase/service/calibration.h"
#include "hase/service/live_plan.h"
#include "hase/service/metrics.h"
#include "hase/service/mig_telemetry.h"
#include "hase/service/task_record.h"
#include "hase/service/task_store.h"
#include "hase/service/whatif.h"
#include "hase/telemetry/load_source.h"

namespace spdlog {
class logger;
}
namespace hase {
class GpuCatalog;
}

namespace hase::service {

struct DaemonOptions {
  std::string state_dir = "hase-state";  // journal (hase.db) and local backend files (exec/)
  std::string policy = "hase";           // a sched::PolicyNames() entry
  // hase only: what its queue order trades (sched/objective.h; docs/scheduler.md, "Makespan
  // and JCT"). Orders the daemon's queue and its live plan.
  sched::Objective objective = sched::Objective::kBalanced;
  TaskStoreOptions store;
  // Affects behaviour.
  double load_max_age_s = 300;  // older DCGM snapshots are ignored (analytic-only), seconds
  // A reading must be this much newer than the last start/end of hase's own tasks on its GPU to
  // be used (before that the previous reading stands in): dcgm-exporter's collect interval
  // (30 s by default) or the Prometheus window, whichever is longer, seconds.
  double load_settle_s = 30;
  // The local backend (LocalBackend), used when Create gets no backend of its own.
  bool executor = false;        // run task commands here (standalone mode)
  std::string executor_node;    // the node this executor runs; "" = every node (one-node setup)
  // Runtime journalled with a task that names none (`hase serve --runtime`), so a restart with
  // another --runtime does not re-price queued tasks; "" = leave it empty (latency tables).
  std::string default_runtime;
  // A task run by an outside runner (see file comment) fails when neither Complete nor
  // Heartbeat came for this long, seconds; 0 = never (`hase serve --outside-lease`).
  double outside_lease_s = 3600;
  // Affects performance.
  double tick_s = 1.0;          // a cycle runs at least this often even without events, s
  int max_cycles_per_pass = 256;  // most queued tasks offered per pass (queue head first)
  // The live plan (live_plan.h) made after every pass: the most wall time its forward run of
  // the policy may take, ms (queued tasks beyond it are list-scheduled estimates). 0 = no plan.
  double plan_budget_ms = 250;
  // A pass that changed nothing the plan reads (queue, what runs or is bound where, reservations,
  // failures, live memory and load) keeps the last plan until it is this old, s (running tasks
  // that keep to their predictions keep it true; overruns show at the latest then).
  double plan_refresh_s = 10;
  // The GPU catalog a what-if (PlanWhatIf, POST /v1/whatif) takes GPU types from that the cluster
  // does not have; null = only the cluster's own types (`hase serve` passes its --catalog).
  std::shared_ptr<const GpuCatalog> catalog;
  // Tests pass a fake clock; default telemetry::WallClockSeconds.
  std::function<double()> now_s;
  // Structured decision log (info: one line per placement; debug: per wait/reject). Null: none.
  std::shared_ptr<spdlog::logger> logger;
  // Teams sharing the cluster (docs/teams.md; `hase serve --teams FILE`, or the --config
  // file's teams keys). Disabled (the default): no team on tasks, no /v1/usage figures.
  // Enabled: every task gets a team at submit (its own, its pod namespace's, the default),
  // a team at its max_gpus waits with the quota's reason, usage is charged per team.
  sched::TeamConfig teams;
};

// One team's quota and usage now (GET /v1/usage, `hase usage`, /metrics).
struct TeamUsageView {
  std::string team;
  int guaranteed_gpus = 0;
  int max_gpus = -1;          // -1 = no maximum
  double shares = 1;
  std::string slurm_account;
  std::vector<std::string> namespaces;
  int gpus_in_use = 0;        // its bound and running tasks (one GPU each)
  int queued = 0;             // its tasks in the central queue
  int held = 0;               // of those, waiting because the team is at its maximum
  double usage_eq_s = 0;      // decayed, reference-equivalent GPU-seconds (fair_share.h)
  double raw_eq_s = 0;        // undecayed, reference-equivalent GPU-seconds
  double gpu_s = 0;           // undecayed, plain GPU-seconds
  double fair_share = 1;      // factor 0–1 (1 = unserved, 0.5 = its share)
};

// Why a task went where it did: the chosen GPU and the best other GPU of every GPU type, in
// the policy's own numbers when it prices GPUs (sched::SelectPlugin::PriceOn; the hase policy):
// predicted start and end, the delay predicted for the tasks already there (inflicted) and the
// cost the policy minimises, so the numbers cannot contradict the choice; each alternative says
// why it lost (why_not). The best other GPU of a type is the one the policy ranks first (its
// score), priced exactly as Select prices. Policies that do not price GPUs (rr, least-loaded,
// ...) get an estimate instead, said so in `objective`: start now beside what runs when a slot
// and memory are free, else alone once the GPU drains, slowed by the contention model. Kept in
// memory from the bind (a restart forgets it).
struct PlacementWhy {
  struct Option {
    int gpu = -1;
    std::string node, type;
    double predicted_start_s = 0;  // wall s
    double predicted_end_s = 0;    // wall s
    double inflicted_s = 0;        // extra time predicted for the tasks already on the GPU, s
    double cost_s = 0;             // the policy's objective (wall s; priced policies only)
    double score = 0;              // the policy's ranking score, 0–100 (priced policies only)
    std::string why_not;           // alternatives: why the policy did not choose it
    // The calibration factor (calibration.h) applied to the task's isolated time on this GPU's
    // type in these prices: 1 = the world model as is, 1.3 = runs there took 1.3× the prediction.
    double calibration = 1.0;
    // The task alone on this GPU's type (TaskProfile::isolated_ms, calibrated), s, with its
    // p10–p90 interval (predict/latency_calibration.h); the interval is 0 when the oracle gives
    // none (a --latency-table).
    double isolated_s = 0;
    double isolated_p10_s = 0;
    double isolated_p90_s = 0;
  };
  double decided_s = 0;
  std::string policy;
  bool priced = false;     // the numbers are the policy's own (else estimates)
  std::string objective;   // what cost_s is and how the policy decides, or what the estimate is
  Option chosen;
  std::vector<Option> alternatives;  // lowest cost (priced) or earliest end first
  // The runner started the task on another GPU of the chosen type than hase picked (Slurm chose
  // another index, dcgm-exporter saw the pod on another device): where it really runs. The
  // prices above hold (same type); the task's own gpu/node/gpu_index follow the move.
  struct Moved {
    int gpu = -1;
    std::string node;
    int index = -1;
    std::string by;    // the backend that decided it: "slurm", "kubernetes", ...
    double at_s = 0;   // wall s
  };
  std::optional<Moved> moved;
};

// One GPU as GET /v1/gpus reports it.
struct GpuView {
  int id = 0;
  std::string node;
  int index = 0;          // physical GPU index on the node (a MIG instance: its GPU's)
  std::string label;      // Cluster::GpuLabel: "node/0", "node/0/mig2-1g.5gb"
  std::string mig_profile;  // MIG instance: its profile, "1g.5gb"; "" = whole GPU
  std::string type;
  bool failed = false;    // marked failed (MarkGpuFailed, its node down)
  bool drained = false;   // drained (DrainGpu, Slurm DRAIN): running tasks finish, none start
  std::string health_reason;  // why it is failed or drained ("" = healthy or none given)
  int running = 0, queued = 0;
  double memory_mib = 0;          // catalog capacity, MiB
  double memory_used_mib = 0;     // DCGM's FB_USED when live memory is in use, else hase's tasks
  // "dcgm"; "dcgm+hase" while the newest reading overlaps hase's last start/end on the GPU
  // (DCGM's foreign memory from the reading before, plus hase's tasks); "hase" without DCGM.
  std::string memory_used_source = "hase";
  double memory_hase_mib = 0;     // predicted memory of hase's running tasks, MiB
  double memory_foreign_mib = 0;  // memory in use that hase did not place (DCGM), MiB
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
  std::string input_shape;      // the input it was priced at, "3x640x640"; "" = the table's row
};

struct DaemonHealth {
  bool degraded = false;
  std::vector<std::string> reasons;
};

class Daemon {
 public:
  // Builds the daemon. `load` (a DcgmScraper or PromLoadSource) may be null (no telemetry:
  // analytic-only, not degraded) and
  // must outlive the daemon. `backend` runs what the daemon places (owned); null = the local
  // executor when options.executor, else nothing runs tasks (an outside runner reports ends
  // through Complete). Errors: NotFound (unknown policy), IO/Parse (journal),
  // InvalidArgument (cluster).
  static Result<std::unique_ptr<Daemon>> Create(sched::Cluster cluster,
                                                std::shared_ptr<const sched::LatencyOracle> oracle,
                                                DaemonOptions options,
                                                const telemetry::LoadSource* load,
                                                std::unique_ptr<Backend> backend = nullptr);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Recovers from the journal, then starts the scheduler thread (and backend). Errors: IO.
  Status Start();
  void Stop();

  // Accepts a task (journalled on return). `created` is false when spec.key was seen before
  // with the same spec (the retry gets that task). A spec without a runtime is journalled with
  // DaemonOptions::default_runtime. Errors: Unsupported (gpus != 1), InvalidArgument (a model
  // no GPU type can predict), Conflict (spec.key was used for another spec: the message names
  // the key, the task and each differing field), IO (the journal).
  Result<TaskStore::Inserted> Submit(const TaskSpec& spec);
  std::optional<TaskRecord> Get(int64_t id) const;
  // The task submitted with client key `key` (TaskSpec::key), if any.
  std::optional<TaskRecord> FindByKey(const std::string& key) const;
  // Why task `id` was placed where it is; nullopt before its placement (or after a restart).
  std::optional<PlacementWhy> WhyOf(int64_t id) const;
  // Newest first, at most `limit`, optionally only one state.
  // `team`: only that team's tasks (a team token's view, api_auth.h); nullopt = every task.
  std::vector<TaskRecord> List(std::optional<TaskState> state, size_t limit,
                               const std::optional<std::string>& team = std::nullopt) const;
  // Cancels a queued, bound or running task (the backend stops it). NotFound for an unknown id;
  // Conflict when it already ended (HTTP 409).
  Result<TaskRecord> Cancel(int64_t id);
  // An outside runner reports the end of a running task. NotFound as Cancel; Conflict when the
  // task is not running or is run by this daemon's backend (which reports its end).
  Result<TaskRecord> Complete(int64_t id, int exit_code);

  // An outside runner renews the lease of running task `id` (see file comment). Returns when
  // the lease now runs out (wall s). NotFound as Cancel; Conflict when the task is not running
  // or is run by this daemon's backend (it has no lease).
  Result<double> Heartbeat(int64_t id);

  // GPU/node failure handling (see file comment). NotFound for an unknown GPU/node. Returns the
  // number of tasks re-queued.
  Result<int> MarkGpuFailed(int gpu, const std::string& reason);
  Result<int> MarkNodeFailed(const std::string& node, const std::string& reason);
  // Drains a GPU or node (see file comment): nothing new is placed there; running tasks finish
  // unless `requeue` (then they are stopped and re-queued as by MarkGpuFailed). Idempotent; a
  // failed GPU becomes drained. Returns the number of tasks re-queued (bound ones included).
  // NotFound for an unknown GPU/node.
  Result<int> DrainGpu(int gpu, const std::string& reason, bool requeue);
  Result<int> DrainNode(const std::string& node, const std::string& reason, bool requeue);
  // Puts a failed or drained GPU back in service. NotFound when it is neither.
  Status RecoverGpu(int gpu);
  // RecoverGpu for every failed or drained GPU of `node`; returns how many came back.
  // NotFound (node).
  Result<int> RecoverNode(const std::string& node);

  // The plan of the whole queue made after the last pass (live_plan.h; planned on its own
  // thread, so it may lag the pass by one plan's time, at most plan_budget_ms plus the copy);
  // null before the first plan or with DaemonOptions::plan_budget_ms = 0. Shared and
  // immutable: safe to keep.
  std::shared_ptr<const LiveQueuePlan> Plan() const;

  // What-if (whatif.h, daemon_whatif.cc): the plan of the whole queue with `w` applied to a
  // copy of the live state, made by the daemon's policy and oracle as Plan() is, and the same
  // snapshot's plan without it. Nothing is journalled; nothing live changes. Errors:
  // NotFound (a node or GPU to drain that the cluster lacks; a GPU type neither the cluster
  // nor the catalog knows: the hint lists the cluster's), InvalidArgument (a submitted task
  // whose model no GPU type can predict, as Submit; a node to add to that is a MIG node),
  // Unsupported (gpus != 1), and the policy's errors.
  Result<WhatIfResult> PlanWhatIf(const WhatIf& w) const;

  std::vector<GpuView> Gpus() const;
  // Per-team quota and usage now (daemon_teams.cc): usage from every journalled task's run
  // (started_s to ended_s, or now while running) on its GPU's type, in reference-equivalent
  // GPU-seconds priced by the daemon's oracle, decayed with fair_share.half_life_s. Empty
  // without teams. The reference type comes from the cluster, else the catalog.
  std::vector<TeamUsageView> Usage() const;
  // Why queued task `id` was not offered to the policy in the last pass: its team is at its
  // max_gpus (docs/teams.md). nullopt when it was offered (or teams are off).
  std::optional<sched::QuotaHold> QuotaHoldOf(int64_t id) const;
  // The team a submitted `spec` would get (ResolveTeam: its own, its pod namespace's, the
  // default team; "" without teams). Errors: as Submit's for the team field.
  Result<std::string> TeamOfSpec(const TaskSpec& spec) const {
    TaskSpec copy = spec;
    HASE_RETURN_IF_ERROR(ResolveTeam(copy));
    return copy.team;
  }
  // The teams configuration (disabled when none).
  const sched::TeamConfig& teams() const { return options_.teams; }
  std::string MetricsText() const;
  DaemonHealth Health() const;

  // The spec with the input it is priced at filled in (TaskSpec::input_shape): a stated
  // input_shape is kept; a stated input_size N becomes {C, N, N} with the channels the model
  // declares (3 when no ONNX can be read); neither becomes the shape the model's ONNX declares
  // (LatencyOracle::DeclaredInputShape: YOLOv8 3x640x640). Where the oracle reads no ONNX (a
  // latency table) an unstated shape stays empty: the table's row for the model prices it,
  // whatever shape that row was measured at. Submit, Advise and the extender call it first.
  // Errors: InvalidArgument (field input_shape) when the model's ONNX leaves a dim open
  // ("3xheightxwidth"), so the request must state the shape. An unknown model is not an error
  // here (Submit's predictability check names it).
  Result<TaskSpec> WithInputShape(const TaskSpec& spec) const;
  // The input `model`'s ONNX declares, "3x640x640"; "" when it cannot be read.
  std::string DeclaredShapeText(const std::string& model) const;

  // --- For the Kubernetes extender (extender.h) ---
  // Whether `node` takes new work (Backend::AcceptsNewWork: false while cordoned in Kubernetes).
  bool AcceptsNewWork(const std::string& node) const;
  // Predicted completion (wall seconds) of `task` on each GPU of the cluster, or +inf where it
  // cannot run (failed GPU, too little memory, no profile, a node that takes no new work). Uses
  // the policy's oracle and contention model on the live state.
  std::vector<double> PredictCompletion(const sched::Task& task) const;
  // OK when the oracle can price `task` on at least one GPU type of the cluster; otherwise the
  // oracle's error for the first type (e.g. NotFound: the model is not in the model directory).
  Status CheckPredictable(const sched::Task& task) const;
  // The GPU with the earliest predicted completion of `spec` on the live state (the
  // extender's criterion; PredictCompletion), without submitting anything. Errors:
  // InvalidArgument for a model no GPU type can predict (as Submit), NotFound when no GPU can
  // host it now (too little memory everywhere, failed GPUs).
  Result<Advice> Advise(const TaskSpec& spec) const;
  // Places a pod kube-scheduler asked hase to bind to `node`: on the node's GPU with the
  // earliest predicted completion, journalled as running, then started through the backend
  // (KubeBackend: the v1.Binding), outside the lock; the caller waits for the answer.
  // Idempotent by spec.key (a second call returns the task as it is). Errors: NotFound (node),
  // InvalidArgument (no GPU of the node can host it now; no pod backend: started without
  // --kube-api), and the backend's error when the binding fails, in which case nothing stays
  // journalled (the pod is still pending; kube-scheduler retries it).
  Result<TaskRecord> BindExternal(const TaskSpec& spec, const std::string& node);
  // kube-scheduler's retry of a /bind for a pod BindExternal already journalled (same key):
  // confirmed on `node` → the task, no API call; sent to `node` but unconfirmed (pid 0: no
  // answer within the bind budget) → the backend's Launch again (the API server refuses a
  // second binding); unconfirmed on another node while the pod is still unbound → the row is
  // erased and the pod bound to `node` (BindExternal). Never journals a second row. Errors:
  // InvalidArgument (bound to another node), Conflict (a bind of it is in flight), NotFound
  // (no unended task for the key), the backend's error.
  Result<TaskRecord> RetryBindExternal(const TaskSpec& spec, const std::string& node);

  const sched::Cluster& cluster() const { return cluster_; }
  // The decision logger (DaemonOptions::logger; a null sink when none was given).
  std::shared_ptr<spdlog::logger> logger() const { return options_.logger; }
  // The backend's name ("local", "slurm"), or "" when nothing runs tasks.
  std::string backend_name() const { return backend_ ? backend_->Name() : ""; }
  const std::string& policy_name() const;

  // Runs one scheduling pass now, on the caller's thread (tests; the thread does the same).
  void RunPassForTest();
  // The journal (tests inject write failures through it).
  TaskStore& StoreForTest() { return *store_; }

 private:
  Daemon(sched::Cluster cluster, std::shared_ptr<const sched::LatencyOracle> oracle,
         DaemonOptions options, const telemetry::LoadSource* load, std::unique_ptr<TaskStore> store,
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
  // Moves each running pod's task to the GPU of its node that dcgm-exporter's pod labels say
  // the pod got (the device plugin picks the device, not hase), in state and journal.
  void FollowPodDevicesLocked(double now);           // requires mu_ (daemon_external.cc)
  void PromoteLocked(int gpu, double now, std::vector<int64_t>& changed);  // requires mu_
  std::vector<int> promote_also_;  // GPUs a k-GPU task gave back with its first (RemoveFromGpuLocked)
  void LaunchLocked(const std::vector<int64_t>& ids);                      // requires mu_
  LaunchRequest LaunchRequestLocked(const TaskRecord& r) const;             // requires mu_
  // Launches what LaunchLocked queued, releasing `lock` (on mu_) around Backend::Launch.
  void LaunchPendingLocked(std::unique_lock<std::mutex>& lock);
  // Takes `r` off its GPU (a k-GPU task: off all of them; PromoteLocked then promotes the
  // others too, from promote_also_).
  void RemoveFromGpuLocked(const TaskRecord& r);     // requires mu_
  void FinishLocked(TaskRecord& r, TaskState s, int exit_code, double now);  // requires mu_
  // Teaches calibration_ the real run time of succeeded `r` (FinishLocked, Start); logs a
  // change of the applied factor when `log`. Requires mu_.
  void CalibrateLocked(const TaskRecord& r, bool log);
  int RequeueGpuLocked(int gpu, const std::string& reason, double now,
                       std::vector<int64_t>& changed);  // requires mu_
  void RequeueTaskLocked(TaskRecord& r, const std::string& reason);  // requires mu_
  // Writes `ids`; on failure records the error (Health) and keeps them for FlushUnsyncedLocked.
  Status PersistLocked(const std::vector<int64_t>& ids);  // requires mu_
  // Writes what a failed write left behind and starts their processes. Errors: IO.
  Status FlushUnsyncedLocked();  // requires mu_
  // Undoes this pass's placements of `ids` after their write failed: back to `before`.
  void RevertLocked(const std::map<int64_t, TaskRecord>& before);  // requires mu_
  // daemon_reconcile.cc: what the backend reports, failures, drains, leases, recovery.
  // Task `id` while launch `attempt` of it runs; null once it ended or was re-queued. Requires mu_.
  TaskRecord* RunningLaunchLocked(int64_t id, int attempt);
  void OnEnd(int64_t id, int attempt, const TaskEnd& end);
  void OnStart(int64_t id, int attempt, const TaskStart& start);
  void OnNode(const std::string& node, NodeCondition condition, const std::string& reason);
  // Takes the backend's start of running `r`: its start time, and its GPU (moved there in
  // state_ when it differs from hase's choice). Returns whether `r` changed. Requires mu_.
  bool ApplyStartLocked(TaskRecord& r, const TaskStart& start);
  // Closes `gpu` to placement (capacity -1, phantom reservation). Requires mu_.
  void HoldGpuLocked(int gpu);
  int DrainGpuLocked(int gpu, const std::string& reason, bool requeue, double now,
                     std::vector<int64_t>& changed);  // requires mu_
  // Whether running `r` is run by an outside runner (it has a lease). Requires mu_.
  bool OutsideLocked(const TaskRecord& r) const;
  // Ends outside tasks whose lease ran out (a pass calls it). Requires mu_.
  void ExpireLeasesLocked(double now);
  // Start(): asks the backend what became of each launch journalled running; releases `lock`
  // around OnEnd. Adds to `changed`. Requires mu_ (held by `lock`).
  void RecoverLaunchesLocked(std::unique_lock<std::mutex>& lock, double now, std::vector<int64_t>& changed);
  Result<sched::TaskProfile> ProfileOnLocked(const TaskRecord& r, int gpu) const;  // requires mu_
  sched::CycleState CycleForLocked(const sched::Task& t) const;                    // requires mu_
  bool ExecutesOn(int gpu) const;
  // Whether the backend starts `r` (a command, or a pod with a pod backend) and no
  // BindExternal is binding it right now. Requires mu_.
  bool LaunchableLocked(const TaskRecord& r) const;
  // Predicted completion of `t` on every GPU now (wall s, +inf where it cannot run).
  std::vector<double> CompletionsLocked(const sched::Task& t, const sched::CycleState& cycle) const;  // requires mu_
  // Before Commit of a bind: completions on every GPU with the state as the policy saw it.
  void RecordWhyLocked(const TaskRecord& r, const sched::Task& t, const sched::CycleState& cycle,
                       const sched::Decision& dec, double now);  // requires mu_
  void LogBindLocked(const TaskRecord& r, double now) const;      // requires mu_
  std::string GpuAndTaskSeriesLocked(double now) const;            // requires mu_: /metrics
  // Teams (daemon_teams.cc). The team of a spec being submitted: its own (checked), its pod
  // namespace's, else the default team; "" without teams. InvalidArgument: unknown team, or
  // a team named while no teams are configured.
  Status ResolveTeam(TaskSpec& spec) const;
  std::vector<TeamUsageView> UsageLocked(double now) const;         // requires mu_
  std::string TeamSeriesLocked(double now) const;                   // requires mu_: /metrics
  // Teams (daemon_teams.cc), requires mu_: the fair-share reference type; a task's equivalent
  // speed on a type (cached in eq_speed_); every journalled run charged into `ended` (ended
  // runs) or `open` (running tasks, by id), times in wall s minus offset_s; the plan's team input.
  sched::GpuType ReferenceTypeLocked() const;
  double EquivalentSpeedLocked(const sched::Task& t, int type) const;
  void TeamUsageLocked(sched::FairShare& ended, std::map<int64_t, sched::FairShare::Open>& open,
                       double offset_s) const;
  void TeamPlanInputLocked(LivePlanInput& in) const;
  bool FitsSomeCatalogGpuLocked(const sched::CycleState& cycle, const sched::Task& t) const;  // requires mu_
  // daemon_plan.cc: hands a copy of the state to planner_ (planned on its thread) when the
  // state changed since the last plan or it is plan_refresh_s old. `wait`: until it is planned
  // (RunPassForTest), with `lock` (on mu_) released meanwhile.
  // daemon_reconcile.cc: fail / drain `gpus` under one hold of mu_ (MarkGpuFailed,
  // MarkNodeFailed, DrainGpu, DrainNode). Returns the number of tasks re-queued.
  Result<int> FailGpus(const std::vector<int>& gpus, const std::string& reason);
  Result<int> DrainGpus(const std::vector<int>& gpus, const std::string& reason, bool requeue);
  std::vector<int> NodeGpus(const std::string& node) const;  // cluster GPU ids of `node`
  void PlanLocked(std::unique_lock<std::mutex>& lock, bool wait = false);
  // What the live plan (and a what-if) plans: a copy of the state and queue, and the facts
  // BuildLivePlan reads. Requires mu_.
  LivePlanInput PlanInputLocked() const;
  // The reason of a task that fits some GPU's catalog memory but no GPU's live free memory:
  // the GPU with the most free memory, its figures and the need. Requires mu_.
  std::string MemoryWaitReasonLocked(const sched::Task& t, const sched::CycleState& cycle) const;
  double Now() const { return options_.now_s(); }
  // Scheduler time: ms since this daemon was created. Kept small because sched's timeline
  // arithmetic in absolute epoch ms (~1.7e12) loses sub-ms precision.
  double ToMs(double wall_s) const { return (wall_s - epoch_s_) * 1000.0; }
  double ToS(double ms) const { return epoch_s_ + ms / 1000.0; }

  // Fixed at construction.
  const sched::Cluster cluster_;
  const MigDeclarations mig_decls_;  // DeclaredMigInstances(cluster_)
  const std::shared_ptr<const sched::LatencyOracle> oracle_;  // calibration_, as the policy sees it
  const std::shared_ptr<CalibratedOracle> calibration_;       // corrects the oracle given to Create
  const DaemonOptions options_;
  const telemetry::LoadSource* const load_;  // may be null
  const std::unique_ptr<TaskStore> store_;
  const std::unique_ptr<Backend> backend_;  // may be null (nothing runs tasks)
  Metrics metrics_;
  const double epoch_s_;  // wall seconds at construction: scheduler time 0

  mutable std::mutex mu_;
  std::condition_variable cv_;
  sched::ClusterState state_;                       // guarded by mu_
  std::unique_ptr<sched::Policy> policy_;           // guarded by mu_
  std::map<int64_t, TaskRecord> tasks_;             // guarded by mu_, every task
  std::map<int, sched::QuotaHold> quota_held_;      // guarded by mu_: team → its hold in the last pass
  mutable std::map<std::string, double> eq_speed_;  // guarded by mu_: EquivalentSpeedLocked's cache
  struct TaskSpeed {
    int type = -1;
    uint64_t generation = 0;
    double speed = 1;
  };
  mutable std::unordered_map<int64_t, TaskSpeed> task_speed_;  // guarded by mu_: per task run
  struct QueuedSpeeds {
    uint64_t generation = 0;
    std::vector<double> per_type;  // equivalent speed on each cluster type
  };
  mutable std::unordered_map<int64_t, QueuedSpeeds> queued_speed_;  // guarded by mu_: the plan's
  int64_t quarantined_ = 0;                          // guarded by mu_: journal rows quarantined
  std::string first_quarantine_;                     // guarded by mu_: the first one, for /healthz
  std::set<int64_t> unsynced_;                       // guarded by mu_: changed, not yet journalled
  std::string journal_error_;                        // guarded by mu_: last failed write, "" = ok
  int64_t journal_failures_ = 0;                     // guarded by mu_: failed writes since start
  std::set<QueueKey> queue_;                        // guarded by mu_, queued tasks
  // guarded by mu_: id → original memory of every GPU closed to placement (failed or drained)
  std::map<int, double> failed_gpus_;
  std::map<int, std::string> drained_;              // guarded by mu_: drained GPU → reason
  std::map<int, std::string> failed_why_;           // guarded by mu_: failed GPU → reason
  std::map<int64_t, double> lease_renewed_;         // guarded by mu_: outside task → last Heartbeat
  // guarded by mu_: launched by a backend that ReportsStarts, its start not reported yet (a
  // Slurm job that pends): draining its GPU re-places it.
  std::set<int64_t> awaiting_start_;
  // What the last refresh took from telemetry for one GPU (RefreshGpusLocked).
  struct LiveGpu {
    bool load_used = false;         // a reading (or its stand-in) entered the pass
    bool settling = false;          // the stand-in: the newest reading overlaps an own change
    LoadSnapshot background;        // DCGM's load minus hase's own tasks then
    double foreign_mib = 0;         // memory in use beyond hase's running tasks then, MiB
    double dcgm_used_mib = -1;      // DCGM's memory in use, -1 = not reported
    std::vector<int> own;           // hase's running task ids at the last refresh, sorted
    double own_changed_s = -1e300;  // when hase's own tasks here last started/ended (wall s)
  };
  std::vector<LiveGpu> live_;                       // guarded by mu_, per GPU
  std::map<int64_t, PlacementWhy> why_;             // guarded by mu_, placed tasks
  uint64_t plan_signature_ = 0;                     // guarded by mu_: what the last plan read
  uint64_t calibration_seen_ = 0;                   // guarded by mu_: calibration_->generation() last refresh
  double plan_made_s_ = -1e300;                     // guarded by mu_: when (wall s)
  // Plans on its own thread (destroyed, and joined, before the members above: it reads a copy
  // whose ClusterState refers to cluster_).
  LivePlanner planner_;
  std::set<int64_t> binding_;  // guarded by mu_: pods BindExternal is binding now
  std::map<int64_t, LaunchRequest> pending_launches_;  // guarded by mu_: journalled running, not launched
  bool dirty_ = true;                               // guarded by mu_: a pass is due
  bool stop_ = false;                               // guarded by mu_
  std::thread thread_;
};

}  // namespace hase::service
