// Teams in the live daemon (docs/teams.md): the team of a submitted task, quota holds in the
// pass (daemon.cc), per-team usage for GET /v1/usage, `hase usage` and /metrics.
#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/sched/fair_share.h"
#include "hase/sched/quota.h"
#include "hase/service/daemon.h"
#include "hase/service/live_plan.h"
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
  auto r = tasks_.find(id);
  if (r == tasks_.end() || r->second.state != TaskState::kQueued) return std::nullopt;
  auto it = quota_held_.find(options_.teams.Find(r->second.spec.team));
  if (it == quota_held_.end()) return std::nullopt;
  return it->second;
}

std::vector<TeamUsageView> Daemon::Usage() const {
  const double now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  return UsageLocked(now);
}

sched::GpuType Daemon::ReferenceTypeLocked() const {
  // The reference type: the cluster's own, else the catalog's, else its name with the A100's
  // datasheet peak (EquivalentSpeed's fallback ratio).
  sched::GpuType reference;
  reference.name = options_.teams.fair_share.reference;
  reference.peak_fp32_tflops = sched::kA100Fp32Tflops;
  for (const sched::GpuType& t : cluster_.types) {
    if (t.name == reference.name) return t;
  }
  if (options_.catalog) {
    if (Result<const GpuSpec*> spec = options_.catalog->Find(reference.name); spec.ok()) {
      reference.name = (*spec)->id;
      reference.memory_mib = (*spec)->memory_gib * 1024.0;
      reference.peak_fp32_tflops = (*spec)->fp32_tflops;
    }
  }
  return reference;
}

double Daemon::EquivalentSpeedLocked(const sched::Task& t, int type) const {
  const std::string key = fmt::format("{}|{}|{}|{}|{}|{}", t.model, t.batch_size, sched::InputShapeText(t.input_shape),
                                      t.runtime, type, calibration_->generation());
  auto it = eq_speed_.find(key);
  if (it == eq_speed_.end()) {
    if (eq_speed_.size() > 4096) eq_speed_.clear();  // bounded: models x types x calibrations
    it = eq_speed_.emplace(key, sched::EquivalentSpeed(*oracle_, t, cluster_.types[type], ReferenceTypeLocked())).first;
  }
  return it->second;
}

void Daemon::TeamUsageLocked(sched::FairShare& ended, std::map<int64_t, sched::FairShare::Open>& open,
                             double offset_s) const {
  const sched::TeamConfig& config = options_.teams;
  // Ended runs in end order, so that the fair-share reference time only moves forward.
  std::vector<const TaskRecord*> ran;
  for (const auto& [id, r] : tasks_) {
    if (config.Find(r.spec.team) < 0 || r.started_s <= 0) continue;
    if (r.gpu < 0 || r.gpu >= static_cast<int>(cluster_.gpus.size())) continue;
    if (r.state == TaskState::kRunning || (r.ended_s > 0 && r.ended_s >= r.started_s)) ran.push_back(&r);
  }
  std::sort(ran.begin(), ran.end(), [](const TaskRecord* a, const TaskRecord* b) {
    return std::tie(a->ended_s, a->id) < std::tie(b->ended_s, b->id);
  });
  const uint64_t generation = calibration_->generation();
  for (const TaskRecord* r : ran) {
    const int team = config.Find(r->spec.team);
    // Per task, its speed on the type it ran on (a pass reads every journalled run).
    TaskSpeed& cached = task_speed_[r->id];
    const int type = cluster_.gpus[r->gpu].type;
    if (cached.type != type || cached.generation != generation) {
      cached = {type, generation, EquivalentSpeedLocked(r->ToSchedTask(), type)};
    }
    const double speed = cached.speed * std::max(1, r->spec.gpus);  // a k-GPU task holds k GPUs
    if (r->state == TaskState::kRunning) {
      open[r->id] = {team, r->started_s - offset_s, speed};
    } else {
      ended.Charge(team, r->started_s - offset_s, r->ended_s - offset_s, speed);
    }
  }
}

std::vector<TeamUsageView> Daemon::UsageLocked(double now) const {
  std::vector<TeamUsageView> out;
  const sched::TeamConfig& config = options_.teams;
  if (!config.enabled()) return out;
  sched::FairShare fair(config);
  std::map<int64_t, sched::FairShare::Open> open_by_task;
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
  for (const auto& [id, r] : tasks_) {
    const int team = config.Find(r.spec.team);
    if (team < 0) continue;
    if (r.state == TaskState::kQueued) ++out[team].queued;
    if (r.state == TaskState::kBound || r.state == TaskState::kRunning) ledger.Hold(team);
  }
  TeamUsageLocked(fair, open_by_task, 0);
  std::vector<sched::FairShare::Open> open;
  for (const auto& [id, o] : open_by_task) open.push_back(o);
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

void Daemon::TeamPlanInputLocked(LivePlanInput& in) const {
  const sched::TeamConfig& config = options_.teams;
  if (!config.enabled()) return;
  auto teams = std::make_shared<sched::TeamConfig>(config);
  auto ended = std::make_shared<sched::FairShare>(*teams);
  std::map<int64_t, sched::FairShare::Open> open;
  // The plan's clock: seconds since epoch_s_ (the state's now_ms / 1000).
  TeamUsageLocked(*ended, open, epoch_s_);
  for (const auto& [id, r] : tasks_) {
    if (r.state != TaskState::kBound && r.state != TaskState::kRunning) continue;
    sched::QueuePlanTeams::Placed p;
    p.team = config.Find(r.spec.team);
    if (auto it = open.find(id); it != open.end()) {
      p.speed = it->second.speed;
      p.started_s = it->second.start_s;
    } else if (r.gpu >= 0 && r.gpu < static_cast<int>(cluster_.gpus.size())) {
      p.speed = EquivalentSpeedLocked(r.ToSchedTask(), cluster_.gpus[r.gpu].type);
    }
    in.teams.placed[static_cast<int>(id)] = p;
  }
  // Speeds of the queued tasks on every type, priced now (the plan thread has no lock), flat
  // in queue order; per task cached across plans until the calibration changes.
  const uint64_t generation = calibration_->generation();
  const size_t types = cluster_.types.size();
  in.teams.queued_speed.resize(in.queue.size() * types, 1.0);
  for (size_t k = 0; k < in.queue.size(); ++k) {
    const sched::Task& t = in.queue[k];
    QueuedSpeeds& q = queued_speed_[t.id];
    if (q.generation != generation || q.per_type.size() != types) {
      q.generation = generation;
      q.per_type.clear();
      for (size_t ty = 0; ty < types; ++ty) q.per_type.push_back(EquivalentSpeedLocked(t, static_cast<int>(ty)));
    }
    std::copy(q.per_type.begin(), q.per_type.end(), in.teams.queued_speed.begin() + k * types);
  }
  if (queued_speed_.size() > 2 * in.queue.size() + 1024) {  // forget tasks that left the queue
    for (auto it = queued_speed_.begin(); it != queued_speed_.end();) {
      auto r = tasks_.find(it->first);
      it = r == tasks_.end() || r->second.state != TaskState::kQueued ? queued_speed_.erase(it) : std::next(it);
    }
  }
  in.team_config = teams;
  in.team_ended = ended;
  in.teams.config = teams.get();
  in.teams.ended = ended.get();
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
