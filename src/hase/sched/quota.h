// Quota: how many GPUs each team holds now against its guarantee and maximum (team_config.h),
// and the structured reason a task waits when its team is at its maximum.
//
// A team holds one GPU per task of it that is running or bound to a GPU (every hase task
// requests one GPU). Below its guarantee a team is reclaiming: its tasks go first (TeamQueue).
// Between guarantee and maximum it borrows what others leave idle. At its maximum its tasks
// are not offered to the policy; they wait with a QuotaHold. Kueue terms: guarantee =
// nominalQuota, maximum = nominalQuota + borrowingLimit, the cluster = one cohort.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hase/sched/team_config.h"

namespace hase::sched {

// Why a task may not be placed now because of its team's quota.
struct QuotaHold {
  std::string team;
  int used_gpus = 0;        // GPUs the team holds now
  int guaranteed_gpus = 0;
  int max_gpus = 0;
  // "team vision is at its maximum of 6 GPUs (6 in use, 2 guaranteed): waits until one of its
  // tasks ends"
  std::string Text() const;
};

// Not thread-safe; a driver keeps one per pass (or per run) and rebuilds it from what runs.
class QuotaLedger {
 public:
  explicit QuotaLedger(const TeamConfig& config) : config_(config), used_(config.teams.size(), 0) {}

  const TeamConfig& config() const { return config_; }
  // Team `team` (a TeamConfig index) holds one more / one fewer GPU. Out-of-range: ignored.
  void Hold(int team);
  void Release(int team);
  int used(int team) const { return team >= 0 && team < static_cast<int>(used_.size()) ? used_[team] : 0; }
  bool BelowGuarantee(int team) const;
  bool AtMax(int team) const;
  // The hold of a task of `team`, or nullopt when it may be placed (quotas disabled, or the
  // team is below its maximum).
  std::optional<QuotaHold> Check(int team) const;

 private:
  const TeamConfig& config_;
  std::vector<int> used_;  // per team
};

}  // namespace hase::sched
