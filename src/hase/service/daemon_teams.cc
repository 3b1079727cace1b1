// Teams in the live daemon (docs/teams.md): the team of a submitted task, quota holds in the
// pass (daemon.cc), per-team usage for GET /v1/usage, `hase usage` and /metrics.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/sched/fair_share.h"
#include "hase/sched/quota.h"
#include "hase/service/daemon.h"
#include "hase/service/metrics.h"

namespace hase::service {

Status Daemon::ResolveTeam(TaskSpec& spec) const {
  const sched::TeamConfig& teams = options_.teams;
  if (!teams.enabled()) {
    if (spec.team.empty()) return Status::OK();
    return Status::InvalidArgument(fmt::format("team '{}': this daemon has no teams configured", spec.team),
                                   "task field 'team'",
                                   "leave 'team' out, or start hase serve with --teams FILE (docs/teams.md)");
  }
  if (spec.team.empty() && !spec.pod.empty()) {
    const std::string ns = spec.pod.substr(0, spec.pod.find('/'));
    spec.team = teams.TeamOfNamespace(ns);
  }
  if (spec.team.empty()) spec.team = teams.default_team;
  if (teams.Find(spec.team) < 0) {
    return Status::InvalidArgument(fmt::format("team '{}' is not one of the daemon's teams", spec.team),
                                   "task field 'team'", "the teams are: " + teams.Names());
  }
  return Status::OK();
}

std::optional<sched::QuotaHold> Daemon::QuotaHoldOf(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = quota_held_.find(id);
  if (it == quota_held_.end()) return std::nullopt;
  return it->second;
}

std::vector<TeamUsageView> Daemon::Usage() const {
  const double now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  return UsageLocked(now);
}

std::vector<TeamUsageView> Daemon::UsageLocked(double now) const {
  std::vector<TeamUsageView> out;
  const sched::TeamConfig& config = options_.teams;
  if (!config.enabled()) return out;
  // The reference type: the cluster's own, else the catalog's, else its name with the A100's
  // datasheet peak (EquivalentSpeed's fallback ratio).
  sched::GpuType reference;
  reference.name = config.fair_share.reference;
  reference.peak_fp32_tflops = sched::kA100Fp32Tflops;
  bool found = false;
  for (const sched::GpuType& t : cluster_.types) {
    if (t.name == reference.name) {
      reference = t;
      found = true;
    }
  }
  if (!found && options_.catalog) {
    if (Result<const GpuSpec*> spec = options_.catalog->Find(reference.name); spec.ok()) {
      reference.name = (*spec)->id;
      reference.memory_mib = (*spec)->memory_gib * 1024.0;
      reference.peak_fp32_tflops = (*spec)->fp32_tflops;
    }
  }
  sched::FairShare fair(config);
  std::vector<sched::FairShare::Open> open;
  sched::QuotaLedger ledger(config);
  out.resize(config.teams.size());
  for (size_t i = 0; i < config.teams.size(); ++i) {
    const sched::TeamQuota& q = config.teams[i];
    out[i].team = q.name;
    out[i].guaranteed_gpus = q.guaranteed_gpus;
    out[i].max_gpus = q.unlimited() ? -1 : q.max_gpus;
    out[i].shares = q.shares;
    out[i].slurm_account = q.slurm_account;
    out[i].namespaces = q.namespaces;
  }
  std::map<std::pair<std::string, int>, double> speed;  // (model key, type) → equivalents per s
  // Segments in start order, so that the fair-share reference time only moves forward.
  std::vector<const TaskRecord*> ran;
  for (const auto& [id, r] : tasks_) {
    const int team = config.Find(r.spec.team);
    if (team < 0) continue;
    if (r.state == TaskState::kQueued) ++out[team].queued;
    if (r.state == TaskState::kBound || r.state == TaskState::kRunning) ledger.Hold(team);
    if (r.started_s > 0 && r.gpu >= 0 && r.gpu < static_cast<int>(cluster_.gpus.size())) ran.push_back(&r);
  }
  std::sort(ran.begin(), ran.end(), [](const TaskRecord* a, const TaskRecord* b) {
    return std::tie(a->ended_s, a->id) < std::tie(b->ended_s, b->id);
  });
  for (const TaskRecord* r : ran) {
    const int team = config.Find(r->spec.team);
    const int type = cluster_.gpus[r->gpu].type;
    const sched::Task t = r->ToSchedTask();
    const auto key = std::make_pair(fmt::format("{}|{}|{}|{}", t.model, t.batch_size, sched::InputShapeText(t.input_shape), t.runtime), type);
    auto it = speed.find(key);
    if (it == speed.end()) it = speed.emplace(key, sched::EquivalentSpeed(*oracle_, t, cluster_.types[type], reference)).first;
    const bool running = r->state == TaskState::kRunning || r->ended_s <= 0;
    const double rate = it->second * std::max(1, r->spec.gpus);  // a k-GPU task holds k GPUs
    if (running) {
      open.push_back({team, r->started_s, rate});
    } else {
      fair.Charge(team, r->started_s, r->ended_s, rate);
    }
  }
  const std::vector<sched::TeamUsage> usage = fair.Snapshot(now, open);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].gpus_in_use = ledger.used(static_cast<int>(i));
    if (i < usage.size()) {
      out[i].usage_eq_s = usage[i].usage_eq_s;
      out[i].raw_eq_s = usage[i].raw_eq_s;
      out[i].gpu_s = usage[i].gpu_s;
      out[i].fair_share = usage[i].factor;
    }
    if (ledger.AtMax(static_cast<int>(i))) out[i].held = out[i].queued;
  }
  return out;
}

std::string Daemon::TeamSeriesLocked(double now) const {
  const std::vector<TeamUsageView> usage = UsageLocked(now);
  if (usage.empty()) return "";
  std::string gpus = "# HELP hase_team_gpus_in_use GPUs a team's bound and running tasks hold.\n"
                     "# TYPE hase_team_gpus_in_use gauge\n";
  std::string limits = "# HELP hase_team_quota_gpus A team's guaranteed and maximum GPUs (max absent: none).\n"
                       "# TYPE hase_team_quota_gpus gauge\n";
  std::string queued = "# HELP hase_team_queued_tasks A team's tasks in the central queue.\n"
                       "# TYPE hase_team_queued_tasks gauge\n";
  std::string eq = fmt::format("# HELP hase_team_usage_equivalent_seconds A team's usage in {}-equivalent GPU-seconds, "
                               "decayed with a half-life of {} s.\n# TYPE hase_team_usage_equivalent_seconds gauge\n",
                               options_.teams.fair_share.reference, options_.teams.fair_share.half_life_s);
  std::string raw = "# HELP hase_team_gpu_seconds A team's GPU-seconds (undecayed wall time x GPUs).\n"
                    "# TYPE hase_team_gpu_seconds counter\n";
  std::string factor = "# HELP hase_team_fair_share A team's fair-share factor (1 unserved, 0.5 its share).\n"
                       "# TYPE hase_team_fair_share gauge\n";
  for (const TeamUsageView& u : usage) {
    const std::string l = fmt::format("team=\"{}\"", PromLabelValue(u.team));
    gpus += fmt::format("hase_team_gpus_in_use{{{}}} {}\n", l, u.gpus_in_use);
    limits += fmt::format("hase_team_quota_gpus{{{},limit=\"guaranteed\"}} {}\n", l, u.guaranteed_gpus);
    if (u.max_gpus >= 0) limits += fmt::format("hase_team_quota_gpus{{{},limit=\"max\"}} {}\n", l, u.max_gpus);
    queued += fmt::format("hase_team_queued_tasks{{{}}} {}\n", l, u.queued);
    eq += fmt::format("hase_team_usage_equivalent_seconds{{{}}} {:.6g}\n", l, u.usage_eq_s);
    raw += fmt::format("hase_team_gpu_seconds{{{}}} {:.6g}\n", l, u.gpu_s);
    factor += fmt::format("hase_team_fair_share{{{}}} {:.6g}\n", l, u.fair_share);
  }
  return gpus + limits + queued + eq + raw + factor;
}

}  // namespace hase::service
