#include "hase/sched/team_reclaim.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace hase::sched {

std::vector<std::pair<int, int>> YieldReservationsToTeamOrder(ClusterState& state, Policy& policy,
                                                              const QuotaLedger& ledger,
                                                              const std::vector<double>& factors,
                                                              const std::vector<TeamQueue::Item>& waiting,
                                                              const std::vector<int>& waiting_ids) {
  std::vector<std::pair<int, int>> released;
  if (state.reservation_of_task.empty()) return released;
  using Key = std::tuple<int, int, double>;  // TeamQueue's order: larger goes first
  auto key = [&](int team, int priority) {
    const double f = team >= 0 && static_cast<size_t>(team) < factors.size() ? factors[team] : 1.0;
    return Key{team >= 0 && ledger.BelowGuarantee(team) ? 1 : 0, priority, f};
  };
  // Per team with waiting tasks: its best key (its head's: highest priority first); the items
  // of the reservation holders.
  std::map<int, Key> best;
  std::unordered_map<int, size_t> item_of;
  for (size_t i = 0; i < waiting.size() && i < waiting_ids.size(); ++i) {
    if (state.reservation_of_task.count(waiting_ids[i])) item_of[waiting_ids[i]] = i;
    const int team = waiting[i].team;
    if (team >= 0 && ledger.AtMax(team)) continue;  // not offered at all
    const Key k = key(team, waiting[i].priority);
    auto it = best.find(team);
    if (it == best.end() || k > it->second) best[team] = k;
  }
  std::vector<std::pair<int, int>> holders(state.reservation_of_task.begin(), state.reservation_of_task.end());
  std::sort(holders.begin(), holders.end());
  for (const auto& [task_id, gpu] : holders) {
    auto it = item_of.find(task_id);
    if (it == item_of.end()) continue;
    const TeamQueue::Item& item = waiting[it->second];
    bool yield = item.team >= 0 && ledger.AtMax(item.team);
    const Key mine = key(item.team, item.priority);
    for (const auto& [team, k] : best) yield = yield || (team != item.team && k > mine);
    if (!yield) continue;
    Task t;
    t.id = task_id;
    policy.Forget(t, state);
    policy.OnGpuChanged(state, gpu);
    released.emplace_back(task_id, gpu);
  }
  return released;
}

}  // namespace hase::sched
