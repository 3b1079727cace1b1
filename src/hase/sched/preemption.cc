#include "hase/sched/preemption.h"

#include <tuple>

#include <fmt/format.h>

namespace hase::sched {

PreemptChoice ChooseVictim(const PreemptWaiting& w, const std::vector<PreemptRunning>& running,
                           const QuotaLedger& ledger, const std::vector<int>& pending,
                           const PreemptionOptions& options) {
  PreemptChoice out;
  if (!options.enabled) return out;
  const TeamConfig& config = ledger.config();
  auto used = [&](int team) {
    const int p = team >= 0 && team < static_cast<int>(pending.size()) ? pending[team] : 0;
    return ledger.used(team) - p;
  };
  auto guaranteed = [&](int team) {
    return team >= 0 && team < static_cast<int>(config.teams.size()) ? config.teams[team].guaranteed_gpus : 0;
  };
  const bool teams = config.enabled() && w.team >= 0;
  const bool reclaims = teams && used(w.team) < guaranteed(w.team);
  std::tuple<int, int, double, int> best_key;  // larger = better victim
  for (size_t i = 0; i < running.size(); ++i) {
    const PreemptRunning& v = running[i];
    if (v.preemptions >= options.max_per_task || v.run_s < options.min_run_s) continue;
    if (v.gpu_memory_mib < w.memory_mib) continue;
    const bool by_priority = w.priority > v.priority;
    const int over = teams && v.team >= 0 ? used(v.team) - guaranteed(v.team) : 0;
    const bool by_reclaim = reclaims && v.team != w.team && over > 0;
    if (!by_priority && !by_reclaim) continue;
    const std::tuple<int, int, double, int> key{-v.priority, over, v.start_s, v.task};
    if (out.victim < 0 || key > best_key) {
      out.victim = static_cast<int>(i);
      best_key = key;
    }
  }
  if (out.victim < 0) return out;
  const PreemptRunning& v = running[out.victim];
  if (w.priority > v.priority) {
    out.why = fmt::format("preempted for {} (priority {} > {})", w.name, w.priority, v.priority);
  } else {
    const TeamQuota& wt = config.teams[w.team];
    const TeamQuota& vt = config.teams[v.team];
    out.why = fmt::format(
        "preempted for {} of team {}, below its guarantee ({} of {} GPUs): team {} holds {}, above its guarantee of {}",
        w.name, wt.name, used(w.team), wt.guaranteed_gpus, vt.name, used(v.team), vt.guaranteed_gpus);
  }
  return out;
}

}  // namespace hase::sched
