// RunExperiment: what `hase simulate` does — simulate several policies on one cluster and
// workload under one truth model, and summarise them against the makespan lower bound.
//
// The oracle's profiles are computed once for every (task, GPU type) before any policy runs
// (the "latency table"), so decision times measure scheduling, not model building.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/hase_policy.h"
#include "hase/sched/latency_oracle.h"
#include "hase/sim/report.h"
#include "hase/sim/simulator.h"

namespace hase::sim {

struct ExperimentOptions {
  std::vector<std::string> policies;  // registry names; empty = all (PolicyNames())
  // "analytic" (prediction × seeded error), "perfect" (analytic with no error: truth = the
  // policies' prediction), or "table:FILE" (TableTruth).
  std::string truth = "analytic";
  uint64_t seed = 1;
  double error_sigma = 0.15;        // analytic truth: isolated-runtime error (lognormal sigma)
  double pair_sigma = 0.185;        // analytic truth: pairwise interference noise
  sched::HaseOptions hase;          // hase's parameters
  int max_reservations = 1;         // hase: reservations at once (1 = EASY)
  bool best_known = true;           // compute the offline reference (best_known.h)
  bool show_progress = false;
  bool measure_decisions = true;
  // Plan the queue with each policy's own code at t = 0 and at 25 / 50 / 75 % of that plan's
  // ETA (queue_eta.h; report.json's queue_eta_s and errors). Costs up to four PlanQueue runs
  // per policy, each bounded by QueueEtaProbe::kMaxDecisions Schedule calls.
  bool queue_eta = true;
  std::string workload_name = "workload";
  // What the policies' oracle assumes, for the report ("runtime ort-cuda, precision tf32").
  std::string predictions;
  // Teams sharing the cluster (docs/teams.md); null or disabled: none. Must outlive the call.
  // With teams each policy's report gets per-team figures (team_report.h) and the queue ETA
  // probe is off (its plans know nothing of quotas).
  const sched::TeamConfig* teams = nullptr;
};

struct ExperimentResult {
  Report report;
  // The latency table the policies used: "model,batch_size,input_size,gpu_type,
  // latency_ms_per_batch,demand,memory_mib" rows, one per distinct (model, batch, input, type),
  // sorted; written as profiles.csv (the format TableTruth reads: memory_mib is informative,
  // runtime is the task's Task::runtime, empty = the run's --runtime).
  std::string profiles_csv;
  std::vector<SimResult> runs;  // one per policy, in report order
};

// Errors: NotFound (unknown policy), InvalidArgument (bad truth spec), the truth table's load
// error, a simulation's Internal error. A task the oracle cannot profile on any type is not
// an error: every policy rejects it with the oracle's reason.
Result<ExperimentResult> RunExperiment(const sched::Cluster& cluster,
                                       const std::vector<sched::Task>& tasks,
                                       std::shared_ptr<const sched::LatencyOracle> oracle,
                                       const GpuCatalog& catalog, const ExperimentOptions& options);

// Writes report.json, report.csv (deterministic), timing.csv (decision times), profiles.csv
// (the oracle's latency table), and per policy
// tasks_<policy>.csv, plan_<policy>.json (PlanJson) and, when `gantt`, gantt_<policy>.svg into `dir` (created if needed).
// Errors: IO.
Status WriteExperiment(const std::string& dir, const sched::Cluster& cluster,
                       const std::vector<sched::Task>& tasks, const ExperimentResult& result,
                       bool gantt);

}  // namespace hase::sim
