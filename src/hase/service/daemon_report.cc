// What the daemon reports: GPU views, health, /metrics text, and the why-record of each
// placement (GET /v1/tasks/{id}). Part of Daemon (daemon.h); the core is daemon.cc.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hase/base/iso_time.h"
#include "hase/sched/basic_plugins.h"
#include "hase/sched/timeline.h"
#include "hase/service/daemon.h"
#include "hase/service/daemon_internal.h"

namespace hase::service {
namespace {

using internal::kInf;


}  // namespace

std::vector<GpuView> Daemon::Gpus() const {
  const double now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<GpuView> out;
  for (const sched::Gpu& g : cluster_.gpus) {
    const sched::GpuState& s = state_.gpus[g.id];
    GpuView v;
    v.id = g.id;
    v.node = g.node;
    v.index = g.index;
    v.label = cluster_.GpuLabel(g.id);
    v.mig_profile = g.mig_profile;
    v.type = cluster_.types[g.type].name;
    v.drained = drained_.count(g.id) > 0;
    v.failed = failed_gpus_.count(g.id) > 0 && !v.drained;
    if (auto it = drained_.find(g.id); it != drained_.end()) v.health_reason = it->second;
    if (auto it = failed_why_.find(g.id); it != failed_why_.end()) v.health_reason = it->second;
    v.running = static_cast<int>(s.running.size());
    v.queued = static_cast<int>(s.queued.size());
    v.memory_mib = g.memory_mib;
    v.memory_hase_mib = s.MemoryUsedMib();
    v.memory_foreign_mib = live_[g.id].foreign_mib;
    if (live_[g.id].settling && live_[g.id].dcgm_used_mib >= 0) {
      // The newest reading overlaps hase's last start/end here: DCGM's foreign memory from
      // the reading before, plus hase's tasks.
      v.memory_used_mib = v.memory_foreign_mib + v.memory_hase_mib;
      v.memory_used_source = "dcgm+hase";
    } else if (live_[g.id].dcgm_used_mib >= 0) {
      v.memory_used_mib = live_[g.id].dcgm_used_mib;
      v.memory_used_source = "dcgm";
    } else {
      v.memory_used_mib = v.memory_hase_mib;
    }
    if (load_) v.live = LiveObservation(load_->table(), cluster_, mig_decls_, g.id, now);
    v.load_used = live_[g.id].load_used;
    v.background_sm = s.background.EffectiveSmActive();
    v.projected_finish_s = state_.finish_ms.empty() ? 0 : ToS(state_.finish_ms[g.id]);
    out.push_back(std::move(v));
  }
  return out;
}

DaemonHealth Daemon::Health() const {
  DaemonHealth h;
  if (load_) {
    telemetry::TelemetryHealth t = load_->Health();
    h.degraded = t.degraded;
    h.reasons = t.reasons;
    h.reasons.insert(h.reasons.end(), t.notes.begin(), t.notes.end());
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [g, mem] : failed_gpus_) {
    auto d = drained_.find(g);
    h.reasons.push_back("GPU " + cluster_.GpuLabel(g) + (d != drained_.end() ? " drained" : " marked failed") +
                        (d != drained_.end() && !d->second.empty() ? ": " + d->second : ""));
  }
  if (!journal_error_.empty()) {
    h.degraded = true;
    h.reasons.push_back(fmt::format(
        "journal: {} write(s) to {} failed, the last: {}; {} task change(s) wait to be written; no task is "
        "placed or started until a write succeeds (free disk space)",
        journal_failures_, store_->path(), journal_error_, unsynced_.size()));
  }
  if (const int64_t q = quarantined_; q > 0) {
    h.degraded = true;
    h.reasons.push_back(std::to_string(q) +
                        " journal row(s) failed validation and were moved to table 'quarantine' "
                        "of " + store_->path() +
                        (first_quarantine_.empty() ? "" : " (first: " + first_quarantine_ + ")"));
  }
  return h;
}

std::string Daemon::MetricsText() const {
  std::string out = metrics_.Render();
  DaemonHealth h = Health();
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, int> by_state;
  for (const auto& [id, r] : tasks_) ++by_state[TaskStateName(r.state)];
  out += "# HELP hase_queue_length Tasks waiting in the central queue.\n# TYPE hase_queue_length gauge\n";
  out += fmt::format("hase_queue_length {}\n", queue_.size());
  out += "# HELP hase_tasks Tasks known to the daemon by state.\n# TYPE hase_tasks gauge\n";
  for (const char* s : {"queued", "bound", "running", "succeeded", "failed", "cancelled", "rejected"}) {
    out += fmt::format("hase_tasks{{state=\"{}\"}} {}\n", s, by_state[s]);
  }
  out += "# HELP hase_gpus GPUs by health.\n# TYPE hase_gpus gauge\n";
  out += fmt::format("hase_gpus{{health=\"ok\"}} {}\nhase_gpus{{health=\"failed\"}} {}\n"
                     "hase_gpus{{health=\"drained\"}} {}\n",
                     cluster_.gpus.size() - failed_gpus_.size(), failed_gpus_.size() - drained_.size(),
                     drained_.size());
  out += "# HELP hase_telemetry_degraded 1 when DCGM telemetry is down or stale.\n"
         "# TYPE hase_telemetry_degraded gauge\n";
  out += fmt::format("hase_telemetry_degraded {}\n", h.degraded ? 1 : 0);
  out += GpuAndTaskSeriesLocked(Now());
  out += TeamSeriesLocked(Now());
  const std::vector<CalibratedOracle::Entry> cal = calibration_->Entries();
  if (!cal.empty()) {
    std::string f = "# HELP hase_calibration_factor Correction applied to predicted run times of a model on a GPU "
                    "type, from completed tasks (1 until 2 completions).\n# TYPE hase_calibration_factor gauge\n";
    std::string n = "# HELP hase_calibration_samples Completed tasks the calibration of a model on a GPU type "
                    "learned from.\n# TYPE hase_calibration_samples gauge\n";
    for (const CalibratedOracle::Entry& e : cal) {
      const std::string labels =
          fmt::format("model=\"{}\",type=\"{}\"", PromLabelValue(e.model), PromLabelValue(e.type));
      f += fmt::format("hase_calibration_factor{{{}}} {:.6g}\n", labels, e.applied() ? e.factor : 1.0);
      n += fmt::format("hase_calibration_samples{{{}}} {}\n", labels, e.samples);
    }
    out += f + n;
  }
  return out;
}

std::string Daemon::GpuAndTaskSeriesLocked(double now) const {
  const auto esc = PromLabelValue;  // label values (text exposition format 0.0.4)
  std::vector<std::string> gpu_labels;
  for (const sched::Gpu& g : cluster_.gpus) {
    gpu_labels.push_back(fmt::format("gpu=\"{}\",node=\"{}\",index=\"{}\",type=\"{}\"", g.id, esc(g.node), g.index,
                                     esc(cluster_.types[g.type].name)));
  }
  std::string out;
  auto family = [&](const char* name, const char* help, auto value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
    for (const sched::Gpu& g : cluster_.gpus) out += fmt::format("{}{{{}}} {}\n", name, gpu_labels[g.id], value(g.id));
  };
  family("hase_gpu_running_tasks", "Tasks running on the GPU.",
         [&](int g) { return state_.gpus[g].running.size(); });
  family("hase_gpu_queued_tasks", "Tasks bound to the GPU's local queue.",
         [&](int g) { return state_.gpus[g].queued.size(); });
  family("hase_gpu_failed", "1 while the GPU is marked failed.",
         [&](int g) { return failed_gpus_.count(g) - drained_.count(g); });
  family("hase_gpu_drained", "1 while the GPU is drained (running tasks finish, none start).",
         [&](int g) { return drained_.count(g); });
  family("hase_gpu_projected_drain_seconds", "Seconds until everything placed on the GPU is predicted to end (0: free now).",
         [&](int g) { return state_.finish_ms.empty() ? 0.0 : std::max(0.0, ToS(state_.finish_ms[g]) - now); });
  family("hase_gpu_background_sm_active", "Background SM activity (DCGM minus hase's own tasks) the last pass used, 0-1.",
         [&](int g) { return state_.gpus[g].background.EffectiveSmActive(); });
  family("hase_gpu_live_load_used", "1 when fresh telemetry entered the last pass.", [&](int g) { return live_[g].load_used ? 1 : 0; });
  family("hase_gpu_memory_hase_mib", "Predicted memory of hase's running tasks, MiB.",
         [&](int g) { return state_.gpus[g].MemoryUsedMib(); });
  family("hase_gpu_memory_foreign_mib", "Memory DCGM reports in use beyond hase's tasks, MiB.",
         [&](int g) { return live_[g].foreign_mib; });
  family("hase_gpu_memory_capacity_mib", "Catalog memory of the GPU, MiB.", [&](int g) { return cluster_.gpus[g].memory_mib; });
  // Per task: placed and not ended (bounded by GPUs x (slots + local queue)).
  const char* task_families[][2] = {
      {"hase_task_predicted_end_seconds", "Predicted end of a placed task, seconds from now (negative: overrunning)."},
      {"hase_task_elapsed_seconds", "Seconds a running task has run."},
      {"hase_task_predicted_seconds", "Predicted duration of a placed task at placement, s."}};
  std::string rows[3];
  for (const auto& [id, r] : tasks_) {
    if (r.state != TaskState::kRunning && r.state != TaskState::kBound) continue;
    std::string labels = fmt::format("task=\"{}\",model=\"{}\",state=\"{}\",{}", id, esc(r.spec.model),
                                     TaskStateName(r.state), r.gpu >= 0 ? gpu_labels[r.gpu] : "");
    // A k-GPU task (sched/gang.h): its series name its first GPU and say how many it holds
    // (each of its GPUs shows it in the per-GPU families).
    if (r.gang.size() > 1) labels += fmt::format(",gpus=\"{}\"", r.gang.size());
    rows[0] += fmt::format("hase_task_predicted_end_seconds{{{}}} {:.3f}\n", labels, r.predicted_end_s - now);
    if (r.state == TaskState::kRunning) {
      rows[1] += fmt::format("hase_task_elapsed_seconds{{{}}} {:.3f}\n", labels, now - r.started_s);
    }
    rows[2] += fmt::format("hase_task_predicted_seconds{{{}}} {:.3f}\n", labels, r.predicted_end_s - r.predicted_start_s);
  }
  for (int i = 0; i < 3; ++i) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", task_families[i][0], task_families[i][1], task_families[i][0]);
    out += rows[i];
  }
  return out;
}

void Daemon::RecordWhyLocked(const TaskRecord& r, const sched::Task& t, const sched::CycleState& cycle,
                             const sched::Decision& dec, double now) {
  auto option = [&](int gpu, double end_s) {
    const sched::Gpu& g = cluster_.gpus[gpu];
    PlacementWhy::Option o;
    o.gpu = gpu;
    o.node = g.node;
    o.type = cluster_.types[g.type].name;
    o.predicted_start_s = ToS(dec.start_ms);
    o.predicted_end_s = end_s;
    o.calibration = calibration_->Factor(t.model, o.type);
    if (const auto& p = cycle.profile[g.type]; p.ok()) {
      o.isolated_s = p->isolated_ms / 1000.0;
      o.isolated_p10_s = p->isolated_p10_ms / 1000.0;
      o.isolated_p90_s = p->isolated_p90_ms / 1000.0;
    }
    return o;
  };
  PlacementWhy w;
  w.decided_s = now;
  w.policy = options_.policy;
  w.chosen = option(dec.gpu, ToS(dec.end_ms));
  w.objective = policy_->Objective();
  const std::optional<sched::Price> chosen = w.objective.empty()
                                                 ? std::nullopt
                                                 : policy_->PriceOn(t, state_, cycle, dec.gpu, /*exact=*/true);
  if (chosen) {
    // The policy's own numbers. The best other GPU of each type is the one it ranks first
    // (score: O(running tasks) per GPU), then priced exactly as its Select prices.
    w.priced = true;
    auto fill = [&](PlacementWhy::Option& o, const sched::Price& p) {
      o.predicted_start_s = ToS(p.start_ms);
      o.predicted_end_s = ToS(p.end_ms);
      o.inflicted_s = p.inflicted_ms / 1000.0;
      o.cost_s = ToS(p.cost_ms);
      o.score = p.score;
    };
    fill(w.chosen, *chosen);
    w.chosen.predicted_start_s = ToS(dec.start_ms);  // the record's own (equal to Select's price)
    w.chosen.predicted_end_s = ToS(dec.end_ms);
    std::map<int, std::pair<int, double>> best_of_type;  // type → (gpu, score)
    for (const sched::Gpu& g : cluster_.gpus) {
      if (g.id == dec.gpu || failed_gpus_.count(g.id)) continue;
      const std::optional<sched::Price> p = policy_->PriceOn(t, state_, cycle, g.id, /*exact=*/false);
      if (!p) continue;
      auto [it, fresh] = best_of_type.try_emplace(g.type, g.id, p->score);
      if (!fresh && p->score > it->second.second) it->second = {g.id, p->score};
    }
    constexpr double kTieS = 1e-6;
    for (const auto& [type, best] : best_of_type) {
      const std::optional<sched::Price> p = policy_->PriceOn(t, state_, cycle, best.first, /*exact=*/true);
      if (!p) continue;
      PlacementWhy::Option o = option(best.first, 0);
      fill(o, *p);
      const double more = o.cost_s - w.chosen.cost_s;
      if (more > kTieS && o.predicted_end_s < w.chosen.predicted_end_s - kTieS) {
        o.why_not = fmt::format("finishes {:.3g} s earlier but delays the tasks already there by {:.3g} s: "
                                "costs {:.3g} s more",
                                w.chosen.predicted_end_s - o.predicted_end_s, o.inflicted_s, more);
      } else if (more > kTieS) {
        o.why_not = fmt::format("costs {:.3g} s more", more);
      } else if (more >= -kTieS) {
        o.why_not = "costs the same: the earlier start, then the lower GPU id, wins";
      } else {
        o.why_not = fmt::format("not priced exactly: its score {:.3g} was below the GPUs the policy priced "
                                "(the chosen one scored {:.3g})",
                                o.score, w.chosen.score);
      }
      w.alternatives.push_back(std::move(o));
    }
    std::sort(w.alternatives.begin(), w.alternatives.end(), [](const auto& a, const auto& b) {
      return std::tie(a.cost_s, a.predicted_end_s, a.gpu) < std::tie(b.cost_s, b.predicted_end_s, b.gpu);
    });
    why_[r.id] = std::move(w);
    return;
  }
  // A policy that does not price GPUs: an estimate, O(1) per GPU (a timeline per GPU cost rr,
  // whose local queues grow long, 40 % of its submit rate): start now beside what runs when a
  // slot and memory are free, else alone once the GPU drains (its projected finish).
  w.objective = fmt::format(
      "none: the {} policy does not price GPUs; predicted_end_s of the alternatives is an estimate "
      "(start now beside what runs when a slot and memory are free, else alone once the GPU drains, "
      "slowed by the contention model), not what the policy chose by",
      options_.policy);
  const sched::ContentionModel& model = policy_->oracle().contention();
  const double now_ms = ToMs(now);
  std::vector<double> done(cluster_.gpus.size(), kInf);
  for (const sched::Gpu& g : cluster_.gpus) {
    const auto& p = cycle.profile[g.type];
    const sched::GpuState& s = state_.gpus[g.id];
    if (!p.ok() || failed_gpus_.count(g.id)) continue;
    const double need = sched::MemoryNeedMib(t, *p);
    if (need > s.memory_mib) continue;
    const double end_ms = s.FitsNow(need) && s.claims.empty()
                              ? now_ms + p->isolated_ms * model.Slowdown(p->demand, s.TotalDemand())
                              : std::max(now_ms, s.projected_finish_ms) +
                                    p->isolated_ms * model.Slowdown(p->demand, s.background.EffectiveSmActive());
    done[g.id] = ToS(end_ms);
  }
  // The best other GPU of each type (the chosen type included: its best other GPU).
  std::map<int, int> best_of_type;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (g.id == dec.gpu || !std::isfinite(done[g.id])) continue;
    auto [it, fresh] = best_of_type.try_emplace(g.type, g.id);
    if (!fresh && done[g.id] < done[it->second]) it->second = g.id;
  }
  for (const auto& [type, gpu] : best_of_type) {
    PlacementWhy::Option o = option(gpu, done[gpu]);
    o.predicted_start_s = 0;  // not estimated
    w.alternatives.push_back(std::move(o));
  }
  std::sort(w.alternatives.begin(), w.alternatives.end(), [](const auto& a, const auto& b) {
    return std::tie(a.predicted_end_s, a.gpu) < std::tie(b.predicted_end_s, b.gpu);
  });
  why_[r.id] = std::move(w);
}

void Daemon::LogBindLocked(const TaskRecord& r, double now) const {
  // GPUs by node name and the node's own index (as nvidia-smi and Slurm number them), times
  // ISO 8601 UTC, so a line reads the same on every machine (issue 22 item 6).
  (void)now;
  auto it = why_.find(r.id);
  std::string alts;
  if (it != why_.end()) {
    for (const PlacementWhy::Option& o : it->second.alternatives) {
      alts += fmt::format("{}{}:{}/{}@{}", alts.empty() ? "" : ",", o.type, o.node, cluster_.gpus[o.gpu].index,
                          IsoUtc(o.predicted_end_s));
    }
  }
  options_.logger->info(
      "bind task={} model={} batches={} state={} gpu={} node={} index={} type={} predicted_start={} "
      "predicted_end={} alternatives=[{}]",
      r.id, r.spec.model, r.spec.num_batches, TaskStateName(r.state), r.gpu, r.node, r.gpu_index,
      cluster_.types[cluster_.gpus[r.gpu].type].name, IsoUtc(r.predicted_start_s), IsoUtc(r.predicted_end_s), alts);
}

std::optional<PlacementWhy> Daemon::WhyOf(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = why_.find(id);
  if (it == why_.end()) return std::nullopt;
  return it->second;
}

}  // namespace hase::service
