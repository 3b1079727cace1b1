// TeamRun: the teams' side of one simulation (docs/teams.md) — quota held per team, the team
// pass order (sched/team_queue.h), fair-share usage in reference-equivalent GPU-seconds
// (sched/fair_share.h) and the choice of preemption victims (sched/preemption.h). The
// simulator owns time and the GPUs; it tells TeamRun what binds, starts and stops.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hase/sched/fair_share.h"
#include "hase/sched/preemption.h"
#include "hase/sched/quota.h"
#include "hase/sched/team_config.h"
#include "hase/sched/team_queue.h"

namespace hase::sim {

class TeamRun {
 public:
  // Reference-equivalent seconds per second of a task on a GPU type (sched::EquivalentSpeed).
  using SpeedFn = std::function<double(const sched::Task&, int type)>;

  // `config` must be enabled and outlive the run; every task's team must be listed
  // (TeamConfig::CheckTasks). `tasks` indexed by id.
  TeamRun(const sched::TeamConfig& config, const std::vector<sched::Task>& tasks, SpeedFn speed);

  const sched::TeamConfig& config() const { return config_; }
  const sched::QuotaLedger& ledger() const { return ledger_; }
  int TeamOf(int task) const { return team_of_[task]; }

  // A pass over `queue` (waiting task ids, in the simulator's queue order) at now_ms.
  void BeginPass(const std::vector<int>& queue, const std::vector<sched::Task>& tasks, double now_ms);
  // The next task id to offer, -1 when done (TeamQueue::Next).
  int Next();
  // The pass's TeamQueue input (BeginPass): items parallel to pass_ids(), factors per team.
  const std::vector<sched::TeamQueue::Item>& pass_items() const { return pass_items_; }
  const std::vector<int>& pass_ids() const { return pass_ids_; }
  const std::vector<double>& pass_factors() const { return pass_factors_; }
  // Why `task` may not be placed now (its team is at its maximum), or nullopt.
  std::optional<sched::QuotaHold> Held(int task) const { return ledger_.Check(team_of_[task]); }

  // The simulator bound `task` (running or in a GPU's local queue): its team holds a GPU.
  void Bound(int task);
  // `task` started on a GPU of type `type` at now_ms (its fair-share segment opens).
  void Started(int task, const sched::Task& t, int type, double now_ms);
  // `task` stopped running at now_ms (ended or preempted): its segment is charged, its GPU
  // released.
  void Stopped(int task, double now_ms);

  // Preemption: the running task to stop for waiting `w`, given the tasks running now;
  // pending preemptions already decided are counted as released.
  sched::PreemptChoice Choose(const sched::PreemptWaiting& w, const std::vector<sched::PreemptRunning>& running) const;
  void PreemptDecided(int victim) { ++pending_[team_of_[victim]]; }
  void PreemptDone(int victim) { --pending_[team_of_[victim]]; }

  // Every team's usage and fair-share factor at now_ms (running segments included).
  std::vector<sched::TeamUsage> Usage(double now_ms) const;

 private:
  const sched::TeamConfig& config_;
  const SpeedFn speed_;
  std::vector<int> team_of_;  // per task
  sched::QuotaLedger ledger_;
  sched::FairShare fair_share_;
  std::vector<int> pending_;  // per team: preemptions decided, not yet done
  struct Open {
    bool open = false;
    double start_s = 0;
    double speed = 1;
  };
  std::vector<Open> open_;  // per task
  std::vector<int> pass_ids_;
  std::vector<sched::TeamQueue::Item> pass_items_;
  std::vector<double> pass_factors_;
  std::unique_ptr<sched::TeamQueue> pass_;
};

}  // namespace hase::sim
