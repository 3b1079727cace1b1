#include "hase/sim/team_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace hase::sim {
namespace {

double NearestRank(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

double R(double x, int digits = 3) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

}  // namespace

std::vector<TeamFigures> SummariseTeams(const sched::TeamConfig& config, const std::vector<sched::Task>& tasks,
                                        const SimResult& result) {
  std::vector<TeamFigures> out;
  if (!config.enabled()) return out;
  const size_t n = config.teams.size();
  out.resize(n);
  std::vector<std::vector<double>> jct(n), wait(n), slow(n);
  for (size_t i = 0; i < n; ++i) {
    const sched::TeamQuota& q = config.teams[i];
    out[i].team = q.name;
    out[i].guaranteed_gpus = q.guaranteed_gpus;
    out[i].max_gpus = q.unlimited() ? -1 : q.max_gpus;
    if (i < result.team_usage.size()) {
      out[i].usage_eq_s = result.team_usage[i].usage_eq_s;
      out[i].raw_eq_s = result.team_usage[i].raw_eq_s;
      out[i].gpu_s = result.team_usage[i].gpu_s;
      out[i].fair_share = result.team_usage[i].factor;
    }
  }
  for (const sched::Task& t : tasks) {
    const int team = config.TeamOf(t);
    if (team < 0 || static_cast<size_t>(t.id) >= result.tasks.size()) continue;
    TeamFigures& f = out[team];
    const TaskOutcome& o = result.tasks[t.id];
    ++f.tasks;
    f.preemptions += o.preemptions;
    if (o.rejected) {
      ++f.rejected;
      continue;
    }
    ++f.completed;
    const double j = (o.end_ms - o.arrival_ms) / 1000;
    jct[team].push_back(j);
    wait[team].push_back((o.start_ms - o.arrival_ms) / 1000);
    if (o.isolated_best_ms > 0) slow[team].push_back((o.end_ms - o.arrival_ms) / o.isolated_best_ms);
  }
  for (size_t i = 0; i < n; ++i) {
    out[i].jct_p50_s = NearestRank(jct[i], 0.5);
    out[i].jct_p95_s = NearestRank(jct[i], 0.95);
    out[i].wait_p50_s = NearestRank(wait[i], 0.5);
    out[i].wait_p95_s = NearestRank(wait[i], 0.95);
    out[i].wait_max_s = wait[i].empty() ? 0 : *std::max_element(wait[i].begin(), wait[i].end());
    out[i].slowdown_p50 = NearestRank(slow[i], 0.5);
    out[i].slowdown_p95 = NearestRank(slow[i], 0.95);
  }
  return out;
}

nlohmann::ordered_json TeamFiguresJson(const std::vector<TeamFigures>& teams) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const TeamFigures& f : teams) {
    nlohmann::ordered_json e;
    e["team"] = f.team;
    e["guaranteed_gpus"] = f.guaranteed_gpus;
    e["max_gpus"] = f.max_gpus < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(f.max_gpus);
    e["tasks"] = f.tasks;
    e["completed"] = f.completed;
    e["rejected"] = f.rejected;
    e["usage"] = {{"equivalent_s", R(f.usage_eq_s)},
                  {"raw_equivalent_s", R(f.raw_eq_s)},
                  {"gpu_s", R(f.gpu_s)},
                  {"fair_share", R(f.fair_share, 4)}};
    e["jct_s"] = {{"p50", R(f.jct_p50_s)}, {"p95", R(f.jct_p95_s)}};
    e["wait_s"] = {{"p50", R(f.wait_p50_s)}, {"p95", R(f.wait_p95_s)}, {"max", R(f.wait_max_s)}};
    e["slowdown"] = {{"p50", R(f.slowdown_p50)}, {"p95", R(f.slowdown_p95)}};
    e["preemptions"] = f.preemptions;
    a.push_back(e);
  }
  return a;
}

std::string FormatTeamTable(const std::string& policy, const std::vector<TeamFigures>& teams) {
  if (teams.empty()) return "";
  std::string out = fmt::format("teams ({}):\n{:<12} {:>9} {:>6} {:>11} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>5}\n",
                                policy, "team", "guar/max", "tasks", "A100-eq s", "GPU s", "JCT p50", "JCT p95",
                                "wait max", "slow p50", "slow p95", "preem");
  for (const TeamFigures& f : teams) {
    out += fmt::format("{:<12} {:>9} {:>6} {:>11.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>8.2f} {:>8.2f} {:>5}\n",
                       f.team,
                       fmt::format("{}/{}", f.guaranteed_gpus, f.max_gpus < 0 ? std::string("-") : std::to_string(f.max_gpus)),
                       f.tasks, f.raw_eq_s, f.gpu_s, f.jct_p50_s, f.jct_p95_s, f.wait_max_s, f.slowdown_p50,
                       f.slowdown_p95, f.preemptions);
  }
  return out;
}

}  // namespace hase::sim
