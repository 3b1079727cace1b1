// QueueEtaProbe: how far a policy's own plan of the queue is from what then happens in a
// simulation — the `queue_eta_s` and ETA errors of each policy in `hase simulate`'s report.
//
// Hooked into SimOptions::after_instant, it makes the policy's plan (sched::PlanQueue, what the
// daemon's live plan runs: a fresh instance of the policy forward with predicted durations) at
// the first instant of the run (t = 0 when the first tasks arrive at 0; only the tasks present
// then are planned) and again at the first instants at or after 25 %, 50 % and 75 % of that
// first ETA. Finish() then compares each plan's ETA with the real makespan:
// |ETA − makespan| / makespan. Deterministic: plans are bounded by Schedule calls
// (kMaxDecisions), never by wall time, so report.json stays byte-identical for a seed.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster_state.h"
#include "hase/sched/policy.h"
#include "hase/sched/task.h"

namespace hase::sim {

struct QueueEta {
  double planned_at_s = NAN;  // the first instant: when the first plan was made, s
  double eta_s = NAN;         // that plan's drain time, s (from time 0)
  bool complete = true;       // false: the plan hit kMaxDecisions and list-scheduled the rest
  double error = NAN;         // |eta_s − makespan| / makespan
  // The plans at the first instants ≥ 25 / 50 / 75 % of eta_s: when, and their errors (NaN
  // where the run ended before).
  double at_s[3] = {NAN, NAN, NAN};
  double error_at[3] = {NAN, NAN, NAN};
};

class QueueEtaProbe {
 public:
  // A plan stops after this many Schedule calls (then list-schedules the rest).
  static constexpr int64_t kMaxDecisions = 200000;

  // `make_policy` builds a fresh instance of the policy being simulated (PlanQueue runs it
  // forward); `tasks` are the simulation's, by id.
  QueueEtaProbe(std::function<Result<std::unique_ptr<sched::Policy>>()> make_policy,
                const std::vector<sched::Task>& tasks)
      : make_policy_(std::move(make_policy)), tasks_(tasks) {}

  // For SimOptions::after_instant.
  void AfterInstant(const sched::ClusterState& state, const std::vector<int>& waiting);
  // The errors against the real makespan, ms. Errors: the first failed plan's error.
  Result<QueueEta> Finish(double makespan_ms) const;

 private:
  std::function<Result<std::unique_ptr<sched::Policy>>()> make_policy_;
  const std::vector<sched::Task>& tasks_;
  QueueEta eta_;
  double eta_ms_[4] = {NAN, NAN, NAN, NAN};  // the plans' ETAs, ms
  int next_ = 0;                              // the next plan to make: 0 = first, 1–3 = 25–75 %
  Status error_ = Status::OK();
};

}  // namespace hase::sim
