// The scheduling framework: one task's cycle as named extension points, after
// kube-scheduler's framework (staging/src/k8s.io/kube-scheduler/framework/interface.go).
//
//   PreFilter(task)          once per cycle: per-task work (predicted profile per GPU type)
//                            into CycleState. An error rejects the task.
//   Filter(task, gpu)        per GPU: Fits, Unfit (not now), UnfitAnywhere (never, e.g. too
//                            little memory) or Error. Reads only the GpuState it is handed.
//   Score(task, gpu)         per GPU that passed Filter: 0–100, higher is better.
//   Select(task, candidates) one plugin picks the outcome from the scored GPUs: bind now,
//                            wait (optionally holding a reservation), or reject. Default:
//                            highest weighted score, ties on the lower GPU id.
//   Reserve / Unreserve      hold / release a reservation on a GPU; idempotent.
//   Bind(task, gpu)          the only phase with side effects on ClusterState.
//
// A plugin implements only the phases it needs; a policy is a named list of plugins built by
// one registry function (registry.h). Nothing self-registers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster_state.h"
#include "hase/sched/latency_oracle.h"
#include "hase/sched/task.h"

namespace hase::sched {

// Per-task, per-cycle scratch written by PreFilter and read by the later phases.
struct CycleState {
  double now_ms = 0;
  // The task id `profile` and `best_isolated_ms` were computed for. Policy::Schedule skips
  // PreFilter when it equals the task's id, so a driver that offers the same task on many
  // passes may keep its CycleState (the simulator does; the oracle's answers for a task never
  // change during a run). -1: not computed.
  int profiled_task = -1;
  // profile[type] = the oracle's profile of the task on Cluster::types[type]; ok() false when
  // the oracle has none (Filter then reports UnfitAnywhere for GPUs of that type).
  std::vector<Result<TaskProfile>> profile;
  // The fastest isolated runtime over all types with a profile, ms (+inf if none).
  double best_isolated_ms = 0;
  // False when a RankPlugin produced the candidates: they are the best-ranked GPUs only
  // (every GPU that could be among the Select plugin's top ones), not every GPU that passes
  // Filter; Select must not treat them as exhaustive.
  bool candidates_complete = true;
};

// Filter's answer for one GPU. `reason` is a static string (no allocation per GPU).
struct FilterVerdict {
  enum class Code {
    kFits,           // can start here now (or, for policies that wait, can run here)
    kUnfit,          // not now: memory or slots busy, GPU reserved for another task
    kUnfitAnywhere,  // never on this GPU: memory need > capacity, no profile for its type
    kError,          // unexpected failure; the cycle stops with an Internal error
  };
  Code code = Code::kFits;
  const char* reason = "";

  static FilterVerdict Fits() { return {}; }
  static FilterVerdict Unfit(const char* why) { return {Code::kUnfit, why}; }
  static FilterVerdict UnfitAnywhere(const char* why) { return {Code::kUnfitAnywhere, why}; }
  bool fits() const { return code == Code::kFits; }
};

// A GPU that passed Filter and its weighted score.
struct Candidate {
  int gpu = 0;
  double score = 0;  // Σ weight × plugin score
};

// The outcome of one cycle.
struct Decision {
  enum class Kind {
    kBind,    // bind to `gpu` now (it starts now, or joins the GPU's local queue)
    kWait,    // stay in the central queue; if `reserve`, hold a reservation on `gpu`
    kReject,  // the task can never run on this cluster; `reason` says why
  };
  Kind kind = Kind::kWait;
  int gpu = -1;
  double start_ms = 0;       // predicted start on `gpu`, ms (for kBind and reservations)
  double end_ms = 0;         // predicted end on `gpu`, ms
  bool reserve = false;      // kWait only: reserve `gpu` from start_ms
  int claim_gpu = -1;        // kWait only: the GPU the task waits for (a claim for this pass)
  double claim_not_before_ms = 0;  // kWait only: the start the claim plans for
  std::string reason;        // kReject / kWait: why, for people
  // Explanation (plans, `hase simulate --plan`): the best other GPU the Select plugin priced
  // and its predicted end, ms (-1: none priced).
  int runner_up_gpu = -1;
  double runner_up_end_ms = -1;
  double runner_up_inflicted_ms = 0;  // predicted delay it would inflict on co-runners there
  double cost_ms = 0;        // the Select plugin's price of the choice (hase: C_g + w·I_g), ms
  // A k-GPU task (Task::gpus > 1; gang.h): all k GPUs, ascending (gpu == gpus[0]); empty for
  // a one-GPU decision. kBind binds (or queues) it on all of them; kWait with reserve
  // reserves all of them from start_ms.
  std::vector<int> gpus;
  // A split task (Task::split; gang.h DecideSplit): batches run on each of `gpus`, same order.
  std::vector<int64_t> parts;
};

// A Select plugin's own price of one placement, for explanations (the daemon's "why" record).
// Times are ms on the cycle's clock.
struct Price {
  double start_ms = 0;      // predicted start
  double end_ms = 0;        // predicted completion
  double inflicted_ms = 0;  // predicted extra time of the tasks already on the GPU
  double cost_ms = 0;       // what Select minimises (hase: end_ms + inflicted_weight × inflicted_ms)
  double score = 0;         // the Score (0–100) that ranked the GPU for Select
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  virtual Status PreFilter(const Task& task, const ClusterState& state,
                           CycleState& cycle) const = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual FilterVerdict Filter(const Task& task, const GpuState& gpu,
                               const CycleState& cycle) const = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // 0–100, higher is better. Called only for GPUs that passed every Filter.
  virtual double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const = 0;
};

class SelectPlugin : public virtual Plugin {
 public:
  // `candidates` are sorted by score descending, then GPU id ascending (the first
  // SortedCandidatesNeeded() of them; the rest in any order); never empty. Every GPU that
  // passes Filter unless cycle.candidates_complete is false (a RankPlugin ran). May update
  // the plugin's own state (a random policy's RNG).
  virtual Decision Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                          const std::vector<Candidate>& candidates) = 0;
  // How many of the best candidates Select reads in score order (the rest it may read in any
  // order): Policy::Schedule sorts only that prefix. Default: all.
  virtual size_t SortedCandidatesNeeded() const { return static_cast<size_t>(-1); }
  // Explanations: this plugin's price of `task` on `gpu` (which passed Filter) in `cycle`:
  // `exact` as Select compares its candidates, else the cheaper estimate that ranks them
  // (Price::score is set either way). nullopt (the default): the plugin does not price GPUs.
  virtual std::optional<Price> PriceOn(const Task& task, const GpuState& gpu, const CycleState& cycle,
                                       bool exact) const {
    (void)task, (void)gpu, (void)cycle, (void)exact;
    return std::nullopt;
  }
  // What Price::cost_ms means and how it decides, for people; "" when PriceOn gives nothing.
  virtual std::string Objective() const { return ""; }
  // Incremental passes (Policy::Options::incremental_passes): whether `last`, a kWait this
  // plugin returned for `task`, still stands when only the GPUs in `changed` differ from the
  // state it was decided in — the GPU it waits for is not among them (the driver checks),
  // and time passing only makes starting now or sharing costlier, never waiting. `cycle` is
  // the task's CycleState from that decision, with now_ms updated. Default: false (decide
  // again).
  virtual bool StillStands(const Task& task, const ClusterState& state, const CycleState& cycle,
                           const Decision& last, const std::vector<int>& changed) const {
    (void)task, (void)state, (void)cycle, (void)last, (void)changed;
    return false;
  }
};

// Rank (optional): replaces the Filter + Score sweep over every GPU by an indexed search
// (ClusterState's candidate index). Fills `out` with a superset of the GPUs the sweep would
// rank in the Select plugin's sorted prefix, each scored exactly as the sweep scores it, the
// first SortedCandidatesNeeded() sorted like the sweep (score descending, GPU id ascending;
// the rest in any order), and sets
// cycle.candidates_complete = false. Returns false (and the policy sweeps every GPU) when it
// cannot, e.g. no candidate at all, so the sweep finds the reject / wait reason.
class RankPlugin : public virtual Plugin {
 public:
  virtual bool Rank(const Task& task, const ClusterState& state, CycleState& cycle,
                    std::vector<Candidate>& out) = 0;
};

class ReservePlugin : public virtual Plugin {
 public:
  // Holds `decision.gpu` for `task` from decision.start_ms. Replaces the task's reservation
  // elsewhere. Idempotent.
  virtual void Reserve(const Task& task, const Decision& decision, const CycleState& cycle,
                       ClusterState& state) const = 0;
  // Releases any reservation `task` holds. Idempotent; not an error when there is none.
  virtual void Unreserve(const Task& task, ClusterState& state) const = 0;
};

class BindPlugin : public virtual Plugin {
 public:
  // Records `task` on decision.gpu: running when it fits now, else at the back of the GPU's
  // local queue. The policy's own bookkeeping (rr's cursor) moves here, too.
  virtual void Bind(const Task& task, const Decision& decision, const CycleState& cycle,
                    ClusterState& state) = 0;
};

}  // namespace hase::sched
