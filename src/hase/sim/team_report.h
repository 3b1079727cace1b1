// Per-team figures of one simulation (docs/teams.md): what each team got (usage in
// reference-equivalent and plain GPU-seconds, its fair-share factor at the end) and how its
// tasks fared (JCT, wait, slowdown = JCT / the task's isolated time on the fastest GPU type,
// p50 / p95 nearest-rank; preemptions). Seconds unless the name says otherwise.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hase/sched/task.h"
#include "hase/sched/team_config.h"
#include "hase/sim/simulator.h"

namespace hase::sim {

struct TeamFigures {
  std::string team;
  int guaranteed_gpus = 0;
  int max_gpus = -1;  // -1 = no maximum
  int tasks = 0, completed = 0, rejected = 0;
  double usage_eq_s = 0;  // decayed, reference-equivalent GPU-seconds, at the makespan
  double raw_eq_s = 0;    // undecayed, reference-equivalent GPU-seconds
  double gpu_s = 0;       // undecayed, plain GPU-seconds
  double fair_share = 1;  // factor at the makespan, 0–1
  double jct_p50_s = 0, jct_p95_s = 0;
  double wait_p50_s = 0, wait_p95_s = 0, wait_max_s = 0;  // first start − arrival
  double slowdown_p50 = 0, slowdown_p95 = 0;
  int preemptions = 0;
};

// One entry per team of `config` (config order) for `result` (run with SimOptions::teams =
// &config). Empty when config is disabled.
std::vector<TeamFigures> SummariseTeams(const sched::TeamConfig& config, const std::vector<sched::Task>& tasks,
                                        const SimResult& result);

// [{"team", "guaranteed_gpus", "max_gpus" (null: none), "tasks", "completed", "rejected",
//   "usage": {"equivalent_s", "raw_equivalent_s", "gpu_s", "fair_share"},
//   "jct_s": {"p50", "p95"}, "wait_s": {"p50", "p95", "max"}, "slowdown": {"p50", "p95"},
//   "preemptions"}]
nlohmann::ordered_json TeamFiguresJson(const std::vector<TeamFigures>& teams);
// A fixed-width table, one row per team, for the terminal.
std::string FormatTeamTable(const std::string& policy, const std::vector<TeamFigures>& teams);

}  // namespace hase::sim
