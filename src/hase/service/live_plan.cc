#include "hase/service/live_plan.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hase/base/iso_time.h"
#include "hase/base/seconds_text.h"
#include "hase/sched/basic_plugins.h"
#include "hase/sched/registry.h"

namespace hase::service {
namespace {

using nlohmann::json;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNowMs = 1e-3;  // a planned start within this of now starts now, ms

json Seconds(double s) { return std::isfinite(s) ? json(s) : json(nullptr); }

class Reasons {
 public:
  Reasons(const LivePlanInput& in, const sched::QueuePlan& plan) : in_(in), plan_(plan) {}

  double ToS(double ms) const { return std::isfinite(ms) ? in_.epoch_s + ms / 1000.0 : ms; }

  PlanGpu Gpu(int g) const {
    PlanGpu p;
    if (g < 0) return p;
    const sched::Gpu& gpu = in_.state->cluster.gpus[g];
    p.id = g;
    p.node = gpu.node;
    p.index = gpu.index;
    p.type = in_.state->cluster.types[gpu.type].name;
    return p;
  }
  static std::string Label(const PlanGpu& g) { return fmt::format("{}/{} ({})", g.node, g.index, g.type); }

  PlanReason Of(const sched::Task& task, const sched::PlannedTask& p) const;

 private:
  PlanReason NotPlanned(const sched::Task& task, const sched::PlannedTask& p) const;
  // quota / team_share (r: gpu and until_s set).
  PlanReason TeamReason(const sched::Task& task, const sched::PlannedTask& p, PlanReason r) const;
  const LivePlanInput& in_;
  const sched::QueuePlan& plan_;
};

PlanReason Reasons::Of(const sched::Task& task, const sched::PlannedTask& p) const {
  if (p.gpu < 0 || !std::isfinite(p.start_ms)) return NotPlanned(task, p);
  PlanReason r;
  r.gpu = Gpu(p.gpu);
  r.until_s = ToS(p.start_ms);
  const std::string where = Label(r.gpu);
  const std::string at = IsoUtc(r.until_s);
  if (p.outcome == sched::PlannedTask::Outcome::kExtrapolated) {
    r.kind = "extrapolated";
    r.text = fmt::format(
        "beyond the plan's budget ({} policy decisions): estimated on GPU {} from {} by list scheduling", plan_.decisions,
        where, at);
    return r;
  }
  if (p.start_ms <= plan_.now_ms + kNowMs) {
    r.kind = "starts_now";
    r.text = fmt::format("planned to start now on GPU {} (the next pass places it)", where);
    return r;
  }
  if (in_.teams.config && (p.first_hold || p.overtaken_by >= 0)) return TeamReason(task, p, r);
  const int held = in_.state->ReservedGpuOf(task.id);
  const auto& res = in_.state->gpus[p.gpu].reservation;
  if (held >= 0) {
    r.kind = "holds_reservation";
    r.gpu = Gpu(held);
    const auto& mine = in_.state->gpus[held].reservation;
    r.until_s = mine ? ToS(mine->start_ms) : r.until_s;
    r.task = p.behind_task;
    r.text = fmt::format("holds the reservation of GPU {} from {}{}", Label(r.gpu), IsoUtc(r.until_s),
                         p.behind_task >= 0 ? fmt::format(", when task {} ends there", p.behind_task) : std::string());
    if (held != p.gpu || std::abs(r.until_s - ToS(p.start_ms)) > 1e-3) {
      r.text += fmt::format("; the plan starts it on GPU {} at {}", where, at);
    }
    return r;
  }
  if (p.behind_task >= 0 && res && res->task_id == p.behind_task) {
    r.kind = "reserved_for";
    r.task = p.behind_task;
    r.text = fmt::format("GPU {} is reserved for task {}, planned to run there until {}", where, p.behind_task, at);
    return r;
  }
  if (p.behind_task >= 0) {
    r.kind = "behind";
    r.task = p.behind_task;
    r.text = fmt::format("waiting behind task {} on GPU {} until {}", p.behind_task, where, at);
    return r;
  }
  r.kind = "queue_order";
  r.text = fmt::format("planned on GPU {} from {}, after the tasks ahead of it in the queue", where, at);
  return r;
}

PlanReason Reasons::TeamReason(const sched::Task& task, const sched::PlannedTask& p, PlanReason r) const {
  const sched::TeamConfig& c = *in_.teams.config;
  const int team = c.TeamOf(task);
  const std::string where = Label(r.gpu);
  const std::string at = IsoUtc(r.until_s);
  auto factor_of = [&](int t) {
    return t >= 0 && t < static_cast<int>(plan_.team_usage.size()) ? plan_.team_usage[t].factor
                                                                    : std::numeric_limits<double>::quiet_NaN();
  };
  if (team >= 0) {
    const sched::TeamQuota& q = c.teams[team];
    r.team = q.name;
    r.used_gpus = team < static_cast<int>(plan_.team_gpus.size()) ? plan_.team_gpus[team] : 0;
    r.guaranteed_gpus = q.guaranteed_gpus;
    r.max_gpus = q.unlimited() ? -1 : q.max_gpus;
    r.fair_share = factor_of(team);
  }
  if (p.first_hold) {
    r.kind = "quota";
    r.text = fmt::format("team {} is at its maximum of {} GPUs ({} in use, {} guaranteed): planned on GPU {} from {}, "
                         "when one of its tasks has ended",
                         p.first_hold->team, p.first_hold->max_gpus, p.first_hold->used_gpus,
                         p.first_hold->guaranteed_gpus, where, at);
    return r;
  }
  r.kind = "team_share";
  r.task = p.overtaken_by;
  const sched::Task* other = nullptr;
  for (const sched::Task& t : in_.queue) {
    if (t.id == p.overtaken_by) other = &t;
  }
  const int ot = other ? c.TeamOf(*other) : -1;
  r.other_team = ot >= 0 ? c.teams[ot].name : (other ? other->team : std::string());
  r.other_fair_share = factor_of(ot);
  std::string ground;
  const int ot_used = ot >= 0 && ot < static_cast<int>(plan_.team_gpus.size()) ? plan_.team_gpus[ot] : 0;
  if (ot >= 0 && ot_used < c.teams[ot].guaranteed_gpus) {
    ground = fmt::format("team {} is below its guarantee ({} of {} GPUs)", r.other_team, ot_used, c.teams[ot].guaranteed_gpus);
  } else if (other && other->priority > task.priority) {
    ground = fmt::format("its priority {} is higher", other->priority);
  } else {
    ground = fmt::format("team {}'s fair-share factor {:.3g} is higher than team {}'s {:.3g}", r.other_team,
                         r.other_fair_share, r.team, r.fair_share);
  }
  r.text = fmt::format("waits for team {}'s share: task {} of team {}, queued after it, goes first ({}); planned on "
                       "GPU {} from {}",
                       r.team, p.overtaken_by, r.other_team, ground, where, at);
  return r;
}

PlanReason Reasons::NotPlanned(const sched::Task& task, const sched::PlannedTask& p) const {
  const sched::ClusterState& s = *in_.state;
  const sched::Cluster& c = s.cluster;
  PlanReason r;
  // The memory it needs per type (the oracle's profile, or the task's own memory_mib).
  std::vector<double> need(c.types.size(), -1);
  double max_need = 0;
  std::string no_profile;
  for (size_t t = 0; t < c.types.size(); ++t) {
    Result<sched::TaskProfile> prof = in_.oracle->Profile(task, c.types[t]);
    if (prof.ok()) {
      need[t] = sched::MemoryNeedMib(task, *prof);
      max_need = std::max(max_need, need[t]);
    } else if (no_profile.empty()) {
      no_profile = prof.status().message();
    }
  }
  // Could any healthy GPU host it by its catalog memory? Any failed one?
  bool healthy_catalog = false, failed_catalog = false;
  int best = -1;
  double best_free = -kInf;
  for (const sched::Gpu& g : c.gpus) {
    if (need[g.type] < 0) continue;
    const bool fits = need[g.type] <= in_.catalog_mib[g.id];
    if (in_.failed_gpus.count(g.id)) {
      failed_catalog = failed_catalog || fits;
      continue;
    }
    healthy_catalog = healthy_catalog || fits;
    const double free = s.gpus[g.id].memory_mib - s.gpus[g.id].MemoryUsedMib();
    // The GPU of most free memory relative to the need (types differ in what they need).
    if (fits && (best < 0 || free - need[g.type] > best_free - need[c.gpus[best].type])) {
      best = g.id;
      best_free = free;
    }
  }
  if (healthy_catalog && best >= 0) {
    r.kind = "memory";
    r.gpu = Gpu(best);
    r.need_mib = need[c.gpus[best].type];
    r.free_mib = std::max(0.0, best_free);
    r.capacity_mib = in_.catalog_mib[best];
    const double foreign = best < static_cast<int>(in_.foreign_mib.size()) ? in_.foreign_mib[best] : 0;
    const double own = s.gpus[best].MemoryUsedMib();
    r.text = fmt::format(
        "waits for GPU memory: needs {:.0f} MiB; GPU {} comes closest with {:.0f} MiB free of {:.0f} MiB ({:.0f} MiB "
        "in use outside hase per DCGM, {:.0f} MiB by hase's tasks)",
        r.need_mib, Label(r.gpu), r.free_mib, r.capacity_mib, foreign, own);
    r.fix = "it starts when memory used outside hase is freed on a GPU it fits";
    return r;
  }
  if (failed_catalog) {
    r.kind = "failed_gpus";
    r.need_mib = max_need;
    r.text = fmt::format("only failed GPUs can host it (needs {:.0f} MiB): waits for them to recover", max_need);
    r.fix = "recover the failed GPUs (POST /v1/gpus/{id}/recover) or add a GPU with the memory";
    return r;
  }
  r.kind = "unplaceable";
  if (max_need <= 0 && !no_profile.empty()) {
    r.text = "no GPU type of the cluster can price it: " + no_profile;
    r.fix = "add the model to the model directory (--models) or the latency table for a GPU type of the cluster";
  } else {
    r.need_mib = max_need;
    r.capacity_mib = c.MaxGpuMemoryMib();
    r.text = fmt::format("needs {:.0f} MiB; the largest GPU here has {:.0f} MiB", max_need, r.capacity_mib);
    r.fix = "lower batch_size (or memory_mib), or add a GPU type with enough memory";
  }
  if (!p.first_reason.empty() && p.outcome == sched::PlannedTask::Outcome::kRejected && max_need <= 0) {
    r.text += " (" + p.first_reason + ")";
  }
  return r;
}

std::string StateOf(const LivePlanInput& in, int64_t id) {
  auto it = in.placed_state.find(id);
  return it == in.placed_state.end() ? "queued" : it->second;
}

}  // namespace

Result<std::shared_ptr<const LiveQueuePlan>> BuildLivePlan(const LivePlanInput& in) {
  sched::PolicyConfig pc;
  pc.oracle = in.oracle;
  pc.cluster = &in.state->cluster;
  pc.hase.objective = in.objective;
  HASE_ASSIGN_OR_RETURN(std::unique_ptr<sched::Policy> policy, sched::MakePolicy(in.policy, pc));
  HASE_ASSIGN_OR_RETURN(sched::QueuePlan plan, sched::PlanQueue(*in.state, *policy, in.queue, in.options, in.teams));
  auto out = std::make_shared<LiveQueuePlan>();
  Reasons reasons(in, plan);
  out->planned_at_s = reasons.ToS(plan.now_ms);
  out->eta_s = reasons.ToS(plan.eta_ms);
  out->complete = plan.complete;
  out->decisions = plan.decisions;
  out->compute_ms = plan.compute_ms;
  out->policy = in.policy;
  out->tasks.reserve(plan.tasks.size());
  for (size_t k = 0; k < plan.tasks.size(); ++k) {
    const sched::PlannedTask& p = plan.tasks[k];
    PlanEntry e;
    e.task_id = p.task_id;
    e.model = in.queue[k].model;
    e.exact = p.outcome == sched::PlannedTask::Outcome::kPlanned;
    e.gpu = reasons.Gpu(p.gpu);
    e.start_s = reasons.ToS(p.start_ms);
    e.end_s = reasons.ToS(p.end_ms);
    e.reason = reasons.Of(in.queue[k], p);
    if (!std::isfinite(e.start_s)) {
      ++out->unplanned;
      e.gpu = PlanGpu{};
    }
    out->index[e.task_id] = out->tasks.size();
    out->tasks.push_back(std::move(e));
  }
  for (const sched::PlannedPlaced& p : plan.placed) {
    LiveQueuePlan::Placed pl{p.task_id, StateOf(in, p.task_id), reasons.Gpu(p.gpu), reasons.ToS(p.start_ms),
                             reasons.ToS(p.end_ms)};
    (pl.state == "running" ? out->running : out->bound) += 1;
    out->placed.push_back(std::move(pl));
  }
  out->critical_gpu = reasons.Gpu(plan.critical_gpu);
  for (int id : plan.critical_path) {
    LiveQueuePlan::Step st;
    st.task_id = id;
    st.state = StateOf(in, id);
    for (const sched::PlannedPlaced& p : plan.placed) {
      if (p.task_id == id) st.start_s = reasons.ToS(p.start_ms), st.end_s = reasons.ToS(p.end_ms);
    }
    if (const PlanEntry* e = out->Find(id)) st.start_s = e->start_s, st.end_s = e->end_s;
    out->critical_path.push_back(st);
  }
  return std::shared_ptr<const LiveQueuePlan>(std::move(out));
}

LivePlanner::~LivePlanner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LivePlanner::Request(LivePlanInput in, std::function<void(const Status&)> on_error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    next_ = std::make_unique<LivePlanInput>(std::move(in));
    on_error_ = std::move(on_error);
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  }
  cv_.notify_all();
}

std::shared_ptr<const LiveQueuePlan> LivePlanner::Latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

void LivePlanner::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stop_ || (!next_ && !busy_); });
}

void LivePlanner::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || next_; });
    if (stop_) return;
    std::unique_ptr<LivePlanInput> in = std::move(next_);
    std::function<void(const Status&)> on_error = on_error_;
    busy_ = true;
    lock.unlock();
    Result<std::shared_ptr<const LiveQueuePlan>> plan = BuildLivePlan(*in);
    if (!plan.ok() && on_error) on_error(plan.status());
    in.reset();
    lock.lock();
    if (plan.ok()) latest_ = std::move(*plan);
    busy_ = false;
    cv_.notify_all();
  }
}

json PlanGpuJson(const PlanGpu& g) {
  if (g.id < 0) return nullptr;
  return json{{"id", g.id}, {"node", g.node}, {"index", g.index}, {"type", g.type}};
}

json PlannedJson(const PlanEntry& e) {
  return json{{"start_s", Seconds(e.start_s)},
              {"end_s", Seconds(e.end_s)},
              {"start", IsoUtc(e.start_s)},
              {"end", IsoUtc(e.end_s)},
              {"runtime_s", std::isfinite(e.start_s) ? json(e.end_s - e.start_s) : json(nullptr)},
              {"gpu", PlanGpuJson(e.gpu)},
              {"exact", e.exact},
              {"source", e.exact ? "plan" : (std::isfinite(e.start_s) ? "extrapolated" : "none")}};
}

json PlanReasonJson(const PlanReason& r) {
  json j{{"kind", r.kind}, {"text", r.text}};
  if (r.task >= 0) j["task"] = r.task;
  if (r.gpu.id >= 0) j["gpu"] = PlanGpuJson(r.gpu);
  if (std::isfinite(r.until_s)) {
    j["until_s"] = r.until_s;
    j["until"] = IsoUtc(r.until_s);
  }
  if (r.need_mib > 0) j["need_mib"] = r.need_mib;
  if (r.kind == "memory") j["free_mib"] = r.free_mib;
  if (r.capacity_mib > 0) j["capacity_mib"] = r.capacity_mib;
  if (!r.fix.empty()) j["fix"] = r.fix;
  if (!r.team.empty()) {
    j["team"] = r.team;
    j["used_gpus"] = r.used_gpus;
    j["guaranteed_gpus"] = r.guaranteed_gpus;
    j["max_gpus"] = r.max_gpus >= 0 ? json(r.max_gpus) : json(nullptr);
    j["fair_share"] = Seconds(r.fair_share);
  }
  if (!r.other_team.empty()) {
    j["other_team"] = r.other_team;
    j["other_fair_share"] = Seconds(r.other_fair_share);
  }
  return j;
}

void AttachPlan(json& task, int64_t id, bool queued, const LiveQueuePlan* plan) {
  if (!queued) return;
  const PlanEntry* e = plan ? plan->Find(id) : nullptr;
  if (!e) {
    PlanEntry none;
    none.task_id = id;
    none.exact = false;
    task["predicted"] = PlannedJson(none);
    task["why"] = json{{"kind", "pending"}, {"text", "submitted after the last plan: the next pass plans it"}};
    return;
  }
  task["predicted"] = PlannedJson(*e);
  task["why"] = PlanReasonJson(e->reason);
  task["reason"] = e->reason.text;
}

json QueuePlanJson(const LiveQueuePlan& p, double now_s) {
  json path = json::array();
  for (const LiveQueuePlan::Step& s : p.critical_path) {
    path.push_back({{"task", s.task_id},
                    {"state", s.state},
                    {"start_s", Seconds(s.start_s)},
                    {"end_s", Seconds(s.end_s)},
                    {"start", IsoUtc(s.start_s)},
                    {"end", IsoUtc(s.end_s)}});
  }
  json tasks = json::array();
  for (const PlanEntry& e : p.tasks) {
    tasks.push_back({{"id", e.task_id},
                     {"model", e.model},
                     {"state", "queued"},
                     {"predicted", PlannedJson(e)},
                     {"why", PlanReasonJson(e.reason)},
                     {"reason", e.reason.text}});
  }
  json placed = json::array();
  for (const LiveQueuePlan::Placed& x : p.placed) {
    placed.push_back({{"id", x.task_id},
                      {"state", x.state},
                      {"gpu", PlanGpuJson(x.gpu)},
                      {"start_s", Seconds(x.start_s)},
                      {"end_s", Seconds(x.end_s)},
                      {"start", IsoUtc(x.start_s)},
                      {"end", IsoUtc(x.end_s)}});
  }
  return json{{"planned_at_s", p.planned_at_s},
              {"planned_at", IsoUtc(p.planned_at_s)},
              {"eta_s", p.eta_s},
              {"eta", IsoUtc(p.eta_s)},
              {"drain_s", std::max(0.0, p.eta_s - now_s)},
              {"queued", p.tasks.size()},
              {"running", p.running},
              {"bound", p.bound},
              {"unplanned", p.unplanned},
              {"critical_path", {{"gpu", PlanGpuJson(p.critical_gpu)}, {"tasks", path}}},
              {"plan",
               {{"policy", p.policy},
                {"complete", p.complete},
                {"decisions", p.decisions},
                {"compute_ms", p.compute_ms}}},
              {"placed", placed},
              {"tasks", tasks}};
}

}  // namespace hase::service
