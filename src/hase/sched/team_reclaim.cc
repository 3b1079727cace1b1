#include "hase/sched/team_reclaim.h"

#include <algorithm>

namespace hase::sched {

std::vector<std::pair<int, int>> YieldReservationsToReclaim(ClusterState& state, Policy& policy, const QuotaLedger& ledger,
                                            const std::vector<int>& waiting_teams,
                                            const std::function<int(int task_id)>& team_of) {
  std::vector<std::pair<int, int>> released;
  const bool reclaimer = std::any_of(waiting_teams.begin(), waiting_teams.end(),
                                     [&](int team) { return ledger.BelowGuarantee(team); });
  if (!reclaimer || state.reservation_of_task.empty()) return released;
  std::vector<std::pair<int, int>> holders(state.reservation_of_task.begin(), state.reservation_of_task.end());
  std::sort(holders.begin(), holders.end());
  for (const auto& [task_id, gpu] : holders) {
    const int team = team_of(task_id);
    if (team == -2 || ledger.BelowGuarantee(team)) continue;
    Task t;
    t.id = task_id;
    policy.Forget(t, state);
    policy.OnGpuChanged(state, gpu);
    released.emplace_back(task_id, gpu);
  }
  return released;
}

}  // namespace hase::sched
