#include "hase/sim/team_run.h"

#include <algorithm>
#include <utility>

namespace hase::sim {

TeamRun::TeamRun(const sched::TeamConfig& config, const std::vector<sched::Task>& tasks, SpeedFn speed)
    : config_(config), speed_(std::move(speed)), ledger_(config), fair_share_(config),
      pending_(config.teams.size(), 0), open_(tasks.size()) {
  team_of_.reserve(tasks.size());
  for (const sched::Task& t : tasks) team_of_.push_back(config.TeamOf(t));
}

void TeamRun::BeginPass(const std::vector<int>& queue, const std::vector<sched::Task>& tasks, double now_ms) {
  pass_items_.clear();
  pass_items_.reserve(queue.size());
  for (int id : queue) pass_items_.push_back({team_of_[id], tasks[id].priority});
  pass_factors_.clear();
  for (const sched::TeamUsage& u : Usage(now_ms)) pass_factors_.push_back(u.factor);
  pass_ids_ = queue;
  pass_ = std::make_unique<sched::TeamQueue>(ledger_, pass_factors_, pass_items_);
}

int TeamRun::Next() {
  if (!pass_) return -1;
  const int i = pass_->Next();
  return i < 0 ? -1 : pass_ids_[i];
}

void TeamRun::Bound(int task) { ledger_.Hold(team_of_[task]); }

void TeamRun::Started(int task, const sched::Task& t, int type, double now_ms) {
  // A k-GPU task (Task::gpus) holds k GPUs: it is charged k GPU-seconds per second.
  open_[task] = {true, now_ms / 1000.0, (speed_ ? speed_(t, type) : 1.0) * std::max(1, t.gpus)};
}

void TeamRun::Stopped(int task, double now_ms) {
  Open& o = open_[task];
  if (o.open) fair_share_.Charge(team_of_[task], o.start_s, now_ms / 1000.0, o.speed);
  o.open = false;
  ledger_.Release(team_of_[task]);
}

sched::PreemptChoice TeamRun::Choose(const sched::PreemptWaiting& w,
                                     const std::vector<sched::PreemptRunning>& running) const {
  return sched::ChooseVictim(w, running, ledger_, pending_, config_.preemption);
}

std::vector<sched::TeamUsage> TeamRun::Usage(double now_ms) const {
  std::vector<sched::FairShare::Open> running;
  for (size_t i = 0; i < open_.size(); ++i) {
    if (open_[i].open) running.push_back({team_of_[i], open_[i].start_s, open_[i].speed});
  }
  return fair_share_.Snapshot(now_ms / 1000.0, running);
}

}  // namespace hase::sim
