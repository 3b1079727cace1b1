// Policy: a named list of plugins and the loop that runs one task's scheduling cycle.
//
// Schedule() runs PreFilter → Filter (every GPU) → Score → Select and returns the Decision
// without changing state; Commit() then runs Reserve / Unreserve / Bind. Split so the
// Kubernetes extender can call Filter/Score alone, and benchmarks can time a decision.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/basic_plugins.h"
#include "hase/sched/framework.h"
#include "hase/sched/gang.h"
#include "hase/sched/objective.h"

namespace hase::sched {

class Policy {
 public:
  struct Options {
    // How tasks flow. true: the driver asks the policy once, when the task arrives, and the
    // task is bound into a GPU's local queue (rr, random, least-loaded: dispatchers).
    // false: tasks wait in the central queue and are offered to the policy on every event
    // until it binds them (hase, fastest-gpu, gavel-like).
    bool dispatch_on_arrival = false;
    // Performance: evaluate only the lowest-id idle, unreserved GPU of each class of equal
    // (type, memory, max_tasks) (ClusterState::GpuClass; they are interchangeable for every
    // policy that does not cycle through GPUs).
    bool one_idle_gpu_per_type = false;
    // Central-queue policies: the most waiting tasks offered per event (queue head first).
    int max_queue_scan = 256;
    // Most GPUs holding a reservation at once (1 = EASY: only the queue head).
    int max_reservations = 1;
    // A task that waits for a particular GPU claims it for the rest of the pass
    // (GpuState::claims), so later tasks in the same pass plan around it.
    bool claim_on_wait = false;
    // Central-queue order within a priority level (QueueKey; objective.h): arrival order
    // (default), longest first with linear aging (LPT, Graham 1969), shortest first with
    // aging (SPT), or long tasks LPT ahead of the rest SPT. L is the task's fastest predicted
    // isolated time over the cluster's types. Since L + α × (now − arrival) orders tasks
    // exactly as L − α × arrival (the α × now term is common to all), an aged order is a static
    // key: a task arriving Δ ms after another goes ahead of it only if it is longer (LPT) or
    // shorter (SPT) by more than α × Δ, so every wait is bounded.
    QueueOrder queue_order;
    // Caps every GPU's max_tasks for this policy (1: one task at a time per GPU, as eft and
    // min-min assume); 0 keeps the cluster's. The driver applies it to its ClusterState.
    int max_tasks_per_gpu = 0;
    // How a central-queue pass picks the next task to decide. kOrdered: queue order.
    // kMinMin / kMaxMin: batch-mode mapping (Braun et al., JPDC 61(6), 2001; Maheswaran et al.,
    // JPDC 59(2), 1999): every task of the pass is decided, the one with the smallest (min-min)
    // or largest (max-min) predicted completion is committed, the others are decided again
    // where the commit changed their choice, until each is bound or waits with a claim.
    enum class PassOrder { kOrdered, kMinMin, kMaxMin };
    PassOrder pass_order = PassOrder::kOrdered;
    // The driver may keep a waiting task's last decision instead of deciding again when
    // Policy::StillStands says it holds (only GPUs that changed since are priced).
    bool incremental_passes = false;
    // How a task needing k > 1 GPUs (Task::gpus) is placed (gang.h): on k GPUs of one type on
    // one node by earliest predicted finish (default), on the fastest type, or refused (a policy
    // that places every task on one GPU: the task is rejected with that reason).
    GangRule gang = GangRule::kEarliestFinish;
    // A task with Task::split may have its batches split over GPUs that can start it now when
    // that ends it earlier than the policy's own choice (gang.h DecideSplit). hase only.
    bool split_batches = false;
  };

  Policy(std::string name, Options options, std::shared_ptr<const LatencyOracle> oracle)
      : name_(std::move(name)), options_(options), oracle_(std::move(oracle)) {}
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  const std::string& name() const { return name_; }
  const Options& options() const { return options_; }
  const LatencyOracle& oracle() const { return *oracle_; }

  // Building the plugin list (registry.h does this). A plugin may appear in several lists.
  void AddPreFilter(std::shared_ptr<PreFilterPlugin> p) { pre_filters_.push_back(std::move(p)); }
  void AddFilter(std::shared_ptr<FilterPlugin> p) { filters_.push_back(std::move(p)); }
  void AddScore(std::shared_ptr<ScorePlugin> p, double weight = 1.0) {
    scores_.emplace_back(std::move(p), weight);
  }
  void SetSelect(std::shared_ptr<SelectPlugin> p) { select_ = std::move(p); }
  void SetReserve(std::shared_ptr<ReservePlugin> p) { reserve_ = std::move(p); }
  void SetBind(std::shared_ptr<BindPlugin> p) { bind_ = std::move(p); }
  void SetRank(std::shared_ptr<RankPlugin> p) { rank_ = std::move(p); }

  // One cycle for `task` at state.now_ms. No side effects on `state`. A task with gpus > 1
  // skips Filter/Score/Select: DecideGang (gang.h) decides it with Options::gang. Returns kReject with a
  // reason naming each distinct UnfitAnywhere cause when no GPU could ever host the task;
  // kWait when GPUs could host it but none now. `cycle` receives PreFilter's results (for
  // Commit). Errors: PreFilter's Status; Internal when a Filter returns kError.
  Result<Decision> Schedule(const Task& task, const ClusterState& state, CycleState& cycle);

  // Applies `decision`: Bind (and Unreserve the task's reservation) for kBind; Reserve when
  // kWait with reserve; Unreserve for kReject.
  void Commit(const Task& task, const Decision& decision, const CycleState& cycle,
              ClusterState& state);

  // Incremental passes: whether `last` (a kWait from Schedule for `task`, with `cycle` from
  // that call) still stands when only the GPUs in `changed` differ since it was made. False
  // unless the policy sets Options::incremental_passes and its Select plugin agrees
  // (SelectPlugin::StillStands). Updates cycle.now_ms.
  bool StillStands(const Task& task, const ClusterState& state, CycleState& cycle,
                   const Decision& last, const std::vector<int>& changed) const;

  // Explanations: the Select plugin's price of `task` on GPU `gpu` (SelectPlugin::PriceOn)
  // with `cycle` from Schedule, when every Filter passes there; nullopt otherwise or when the
  // policy does not price GPUs.
  std::optional<Price> PriceOn(const Task& task, const ClusterState& state, const CycleState& cycle, int gpu,
                               bool exact) const;
  // SelectPlugin::Objective; "" when the policy does not price GPUs.
  std::string Objective() const { return select_ ? select_->Objective() : ""; }

  // Starts a scheduling pass at state.now_ms: clears the previous pass's claims. The driver
  // calls it before offering the central queue.
  void BeginPass(ClusterState& state) const;

  // True when the rest of the current pass can only decide kWait without side effects that
  // matter: no GPU has a free slot (ClusterState::open_gpus() == 0, so nothing can start) and
  // no further reservation can be made (no Reserve plugin, or max_reservations held). Claims
  // made by such waits only steer later waits of the same pass. The simulator stops the pass
  // then (exact: no decision changes).
  // `gang_waiting`: a k-GPU task waits in the central queue; while a reservation can still be
  // made the pass goes on, so that it reaches the task and reserves its GPUs (a k-GPU task
  // holds one even under a policy without a Reserve plugin: gang.h).
  bool PassSettled(const ClusterState& state, bool gang_waiting = false) const;

  // The task's central-queue sort key (Options::queue_order; larger first within a priority):
  // 0 for arrival order. Asks the oracle once per cluster type.
  double QueueKey(const Task& task, const Cluster& cluster) const;

  // Releases whatever reservation `task` holds (it started, finished or was cancelled).
  // Idempotent.
  void Forget(const Task& task, ClusterState& state);

  // Recomputes GPU `gpu`'s projected finish (ClusterState::finish_ms) with this policy's
  // contention model and re-files the GPU in ClusterState's candidate index. The driver calls it after every change it makes to that GPU; Commit
  // calls it for the GPUs it touches.
  void OnGpuChanged(ClusterState& state, int gpu) const;

 private:
  const std::string name_;
  const Options options_;
  const std::shared_ptr<const LatencyOracle> oracle_;
  std::vector<std::shared_ptr<PreFilterPlugin>> pre_filters_;
  std::vector<std::shared_ptr<FilterPlugin>> filters_;
  std::vector<std::pair<std::shared_ptr<ScorePlugin>, double>> scores_;
  std::shared_ptr<SelectPlugin> select_;    // null: highest score
  std::shared_ptr<ReservePlugin> reserve_;  // null: reservations not used
  std::shared_ptr<BindPlugin> bind_;        // null: default_bind_
  std::shared_ptr<RankPlugin> rank_;        // null: Filter + Score sweep over every GPU
  DefaultBind default_bind_;
  std::vector<Candidate> candidates_;       // reused between cycles (no allocation per call)
  bool splitting_ = false;                  // Schedule is pricing a split task's one-GPU choice
};

}  // namespace hase::sched
