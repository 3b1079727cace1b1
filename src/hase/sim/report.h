// Report: what `hase simulate` prints and writes for each policy.
//
// Deterministic parts (everything except decision times) depend only on the inputs and the
// seed, so the same seed gives byte-identical report.json / report.csv / tasks CSVs. Decision
// times are wall clock and go only where `with_timing` is set (the terminal table, timing.csv).
// Times in reports are seconds unless the field name says otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/sched/cluster.h"
#include "hase/sched/task.h"
#include "hase/sim/best_known.h"
#include "hase/sim/lower_bound.h"
#include "hase/sim/queue_eta.h"
#include "hase/sim/simulator.h"
#include "hase/sim/team_report.h"

namespace hase::sim {

struct PolicyReport {
  std::string policy;
  int tasks = 0;
  int completed = 0;
  int rejected = 0;
  double makespan_s = 0;
  double jct_mean_s = 0, jct_p50_s = 0, jct_p95_s = 0, jct_p99_s = 0;  // completion − arrival
  // Slowdown = JCT / the task's true isolated time on its fastest GPU type (>= 1 up to the
  // truth's noise; 0 when no per-task time was given). Mean and nearest-rank percentiles.
  double slowdown_mean = 0, slowdown_p50 = 0, slowdown_p95 = 0;
  double wait_mean_s = 0, wait_max_s = 0;               // start − arrival
  std::vector<double> utilisation;  // per GPU type (Cluster::types order): busy time /
                                    // (GPUs of the type × makespan), 0–1
  int reservations = 0;
  int backfills = 0;
  int64_t decisions = 0;            // Schedule calls
  double decision_mean_us = 0, decision_p99_us = 0;  // wall clock
  double ratio_to_lower_bound = 0;  // makespan / lower bound (>= 1 up to the bound's caveats)
  double ratio_to_best_known = 0;   // makespan / best-known offline schedule's (0: none)
  double makespan_vs_rr = 0;        // makespan / rr's makespan; 0 when rr did not run
  // The policy's own plan of the queue against what happened (queue_eta.h): its drain time as
  // planned at the first instant (t = 0) and the relative errors of that plan and of the plans
  // at 25 / 50 / 75 % of it. Not set (NaN) when the experiment did not probe.
  QueueEta queue_eta;
  // Teams (ExperimentOptions::teams): per-team figures and preemptions; empty / 0 without.
  std::vector<TeamFigures> teams;
  int preemptions = 0;
};

struct Report {
  std::string cluster;
  std::string workload;
  std::string truth;
  uint64_t seed = 0;
  std::string predictions;  // ExperimentOptions::predictions ("" = not given)
  std::vector<std::string> gpu_types;  // Cluster::types names
  std::vector<int> gpus_per_type;
  int tasks = 0;
  LowerBound lower_bound;
  // The offline reference (best_known.h); makespan_ms 0 when it was not computed.
  double best_known_ms = 0;
  std::string best_known_method;      // e.g. "lpt-insertion + 12 local-search moves"
  std::vector<PolicyReport> policies;  // in the order run
};

// Summarises one simulation. Percentiles are nearest-rank.
// `best_known_ms` 0: no offline reference. `fastest_isolated_ms`, indexed by task id: each
// task's true isolated time on its fastest type (FastestIsolatedMs, lower_bound.h), the
// denominator of its slowdown; empty (or an entry <= 0) leaves slowdown out.
PolicyReport Summarise(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                       const SimResult& result, const LowerBound& lb, double best_known_ms = 0,
                       const std::vector<double>& fastest_isolated_ms = {});
// Fills makespan_vs_rr from the "rr" entry, if any.
void CompareToRoundRobin(Report& report);

// A fixed-width table for the terminal.
std::string FormatTable(const Report& report, bool with_timing);
// One row per policy.
std::string ReportCsv(const Report& report, bool with_timing);
// The whole report as JSON (2-space indent).
std::string ReportJson(const Report& report, bool with_timing);
// One row per task: name, model, gpu, type, arrival/start/end (s), backfilled, the plan
// behind it (predicted start/end, runner-up GPU and its predicted end, the GPU it waited for,
// the GPU it reserved, co-located tasks; see TaskOutcome), rejected reason.
std::string TasksCsv(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                     const SimResult& result);
// The plan, explained, one task per row in start order: GPU, predicted and actual start/end (s)
// and why — the runner-up GPU and its predicted end, the GPU it waited for and for how long,
// the reservation it held, backfilled, the tasks it shared the GPU with. `limit` > 0 keeps the
// first `limit` rows (the JSON always has every task).
std::string PlanTable(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                      const SimResult& result, size_t limit = 0);
std::string PlanJson(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                     const SimResult& result);
// Gantt chart: a row per GPU (split into max_tasks lanes), bars coloured by model family.
std::string GanttSvg(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                     const SimResult& result);

}  // namespace hase::sim
