#include "hase/sched/quota.h"

#include <fmt/format.h>

namespace hase::sched {

std::string QuotaHold::Text() const {
  return fmt::format("team {} is at its maximum of {} GPUs ({} in use, {} guaranteed): waits until one of its tasks ends",
                     team, max_gpus, used_gpus, guaranteed_gpus);
}

void QuotaLedger::Hold(int team) {
  if (team >= 0 && team < static_cast<int>(used_.size())) ++used_[team];
}

void QuotaLedger::Release(int team) {
  if (team >= 0 && team < static_cast<int>(used_.size()) && used_[team] > 0) --used_[team];
}

bool QuotaLedger::BelowGuarantee(int team) const {
  return team >= 0 && team < static_cast<int>(used_.size()) && used_[team] < config_.teams[team].guaranteed_gpus;
}

bool QuotaLedger::AtMax(int team) const {
  return team >= 0 && team < static_cast<int>(used_.size()) && used_[team] >= config_.teams[team].max_gpus;
}

std::optional<QuotaHold> QuotaLedger::Check(int team) const {
  if (!AtMax(team)) return std::nullopt;
  const TeamQuota& q = config_.teams[team];
  return QuotaHold{q.name, used_[team], q.guaranteed_gpus, q.max_gpus};
}

}  // namespace hase::sched
