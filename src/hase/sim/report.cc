#include "hase/sim/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hase::sim {
namespace {

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Rounds for output so that tiny float noise never reaches the files.
double R(double x, int digits = 6) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

// Colours per model family (Gantt), a fixed palette; unknown families cycle through it.
const char* FamilyColour(const std::string& family) {
  static const std::map<std::string, const char*> kColours = {
      {"resnet", "#4e79a7"}, {"vgg", "#f28e2b"},      {"densenet", "#59a14f"},
      {"mobilenet", "#e15759"}, {"yolo", "#b07aa1"}, {"alexnet", "#9c755f"},
      {"other", "#bab0ac"}};
  auto it = kColours.find(family);
  return it == kColours.end() ? "#76b7b2" : it->second;
}

}  // namespace

PolicyReport Summarise(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                       const SimResult& result, const LowerBound& lb, double best_known_ms,
                       const std::vector<double>& fastest_isolated_ms) {
  PolicyReport r;
  r.policy = result.policy;
  r.tasks = static_cast<int>(tasks.size());
  std::vector<double> jct, wait, slowdown;
  for (const TaskOutcome& o : result.tasks) {
    if (o.rejected) {
      ++r.rejected;
      continue;
    }
    ++r.completed;
    jct.push_back((o.end_ms - o.arrival_ms) / 1000.0);
    wait.push_back((o.start_ms - o.arrival_ms) / 1000.0);
    const size_t id = static_cast<size_t>(o.task_id);
    if (id < fastest_isolated_ms.size() && fastest_isolated_ms[id] > 0) {
      slowdown.push_back((o.end_ms - o.arrival_ms) / fastest_isolated_ms[id]);
    }
  }
  r.makespan_s = result.makespan_ms / 1000.0;
  r.jct_mean_s = Mean(jct);
  r.jct_p50_s = Percentile(jct, 0.5);
  r.jct_p95_s = Percentile(jct, 0.95);
  r.jct_p99_s = Percentile(jct, 0.99);
  r.slowdown_mean = Mean(slowdown);
  r.slowdown_p50 = Percentile(slowdown, 0.5);
  r.slowdown_p95 = Percentile(slowdown, 0.95);
  r.wait_mean_s = Mean(wait);
  r.wait_max_s = wait.empty() ? 0 : *std::max_element(wait.begin(), wait.end());
  const std::vector<int> count = cluster.CountByType();
  r.utilisation.assign(cluster.types.size(), 0.0);
  for (const sched::Gpu& g : cluster.gpus) r.utilisation[g.type] += result.gpu_busy_ms[g.id];
  for (size_t k = 0; k < r.utilisation.size(); ++k) {
    const double denom = count[k] * result.makespan_ms;
    r.utilisation[k] = denom > 0 ? r.utilisation[k] / denom : 0;
  }
  r.reservations = static_cast<int>(result.reservations.size());
  r.backfills = result.backfills;
  r.decisions = result.decisions.count();
  r.decision_mean_us = result.decisions.mean_us();
  r.decision_p99_us = result.decisions.Percentile(0.99);
  r.ratio_to_lower_bound = lb.value_ms() > 0 ? result.makespan_ms / lb.value_ms() : 0;
  r.ratio_to_best_known = best_known_ms > 0 ? result.makespan_ms / best_known_ms : 0;
  return r;
}

void CompareToRoundRobin(Report& report) {
  double rr = 0;
  for (const PolicyReport& p : report.policies) {
    if (p.policy == "rr") rr = p.makespan_s;
  }
  for (PolicyReport& p : report.policies) p.makespan_vs_rr = rr > 0 ? p.makespan_s / rr : 0;
}

std::string FormatTable(const Report& report, bool with_timing) {
  std::string out;
  out += fmt::format("cluster {} ({} GPUs:", report.cluster,
                     [&] {
                       int n = 0;
                       for (int c : report.gpus_per_type) n += c;
                       return n;
                     }());
  for (size_t k = 0; k < report.gpu_types.size(); ++k) {
    out += fmt::format(" {}×{}", report.gpus_per_type[k], report.gpu_types[k]);
  }
  out += fmt::format("), workload {} ({} tasks), truth {}, seed {}{}{}\n", report.workload,
                     report.tasks, report.truth, report.seed,
                     report.predictions.empty() ? "" : ", predictions: ", report.predictions);
  const LowerBound& lb = report.lower_bound;
  out += fmt::format("makespan lower bound {:.1f} s (longest task {:.1f} s, {} {:.1f} s)\n",
                     lb.value_ms() / 1000, lb.longest_task_ms / 1000,
                     lb.lp_solved ? "LP relaxation"
                                  : fmt::format("aggregate work bound ({})", lb.lp_status),
                     lb.lp_ms / 1000);
  if (report.best_known_ms > 0) {
    out += fmt::format("best known schedule  {:.1f} s (offline, perfect knowledge, one task per "
                       "GPU: {})\n",
                       report.best_known_ms / 1000, report.best_known_method);
  }
  out += "\n";
  out += fmt::format("{:<13}{:>10}{:>8}{:>9}{:>9}{:>9}{:>9}{:>10}{:>10}{:>9}{:>9}{:>10}{:>9}{:>8}{:>6}{:>6}{:>5}",
                     "policy", "makespan", "vs rr", "vs LB", "vs best", "JCT avg", "JCT p50",
                     "JCT p95", "JCT p99", "slow avg", "slow p95", "wait avg", "wait max", "util",
                     "resv", "bfill", "rej");
  if (with_timing) out += fmt::format("{:>11}{:>11}", "dec avg", "dec p99");
  out += "\n";
  for (const PolicyReport& p : report.policies) {
    double busy = 0, n = 0;
    for (size_t k = 0; k < p.utilisation.size(); ++k) {
      busy += p.utilisation[k] * report.gpus_per_type[k];
      n += report.gpus_per_type[k];
    }
    out += fmt::format(
        "{:<13}{:>9.1f}s{:>8}{:>9.2f}{:>9}{:>8.1f}s{:>8.1f}s{:>9.1f}s{:>9.1f}s{:>9.2f}{:>9.2f}{:>9.1f}s{:>8.1f}s{:>7.0f}%{:>6}{:>6}{:>5}",
        p.policy, p.makespan_s,
        p.makespan_vs_rr > 0 ? fmt::format("{:.2f}", p.makespan_vs_rr) : std::string("-"),
        p.ratio_to_lower_bound,
        p.ratio_to_best_known > 0 ? fmt::format("{:.2f}", p.ratio_to_best_known) : std::string("-"),
        p.jct_mean_s, p.jct_p50_s, p.jct_p95_s, p.jct_p99_s, p.slowdown_mean, p.slowdown_p95,
        p.wait_mean_s,
        p.wait_max_s, n > 0 ? 100 * busy / n : 0, p.reservations, p.backfills, p.rejected);
    if (with_timing) {
      out += fmt::format("{:>9.1f}µs{:>9.1f}µs", p.decision_mean_us, p.decision_p99_us);
    }
    out += "\n";
  }
  for (const PolicyReport& p : report.policies) {
    if (!p.teams.empty()) out += "\n" + FormatTeamTable(p.policy, p.teams);
  }
  out += "\nutilisation per GPU type:\n";
  out += fmt::format("{:<13}", "policy");
  // Columns as wide as their type name (MIG types are long: "A100-SXM4-40GB-MIG-1g.5gb").
  std::vector<size_t> width;
  for (const std::string& t : report.gpu_types) {
    width.push_back(std::max<size_t>(16, t.size() + 2));
    out += fmt::format("{:>{}}", t, width.back());
  }
  out += "\n";
  for (const PolicyReport& p : report.policies) {
    out += fmt::format("{:<13}", p.policy);
    for (size_t k = 0; k < p.utilisation.size(); ++k) {
      out += fmt::format("{:>{}.0f}%", 100 * p.utilisation[k], (k < width.size() ? width[k] : 16) - 1);
    }
    out += "\n";
  }
  return out;
}

std::string ReportCsv(const Report& report, bool with_timing) {
  std::string out =
      "policy,tasks,completed,rejected,makespan_s,makespan_vs_rr,ratio_to_lower_bound,"
      "ratio_to_best_known,jct_mean_s,jct_p50_s,jct_p95_s,jct_p99_s,slowdown_mean,slowdown_p50,"
      "slowdown_p95,wait_mean_s,wait_max_s,reservations,backfills";
  for (const std::string& t : report.gpu_types) out += ",util_" + t;
  if (with_timing) out += ",decisions,decision_mean_us,decision_p99_us";
  out += "\n";
  for (const PolicyReport& p : report.policies) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", p.policy,
                       p.tasks, p.completed, p.rejected, R(p.makespan_s), R(p.makespan_vs_rr),
                       R(p.ratio_to_lower_bound), R(p.ratio_to_best_known), R(p.jct_mean_s),
                       R(p.jct_p50_s), R(p.jct_p95_s), R(p.jct_p99_s), R(p.slowdown_mean),
                       R(p.slowdown_p50), R(p.slowdown_p95), R(p.wait_mean_s), R(p.wait_max_s),
                       p.reservations, p.backfills);
    for (double u : p.utilisation) out += fmt::format(",{}", R(u));
    if (with_timing) {
      out += fmt::format(",{},{},{}", p.decisions, R(p.decision_mean_us, 3),
                         R(p.decision_p99_us, 3));
    }
    out += "\n";
  }
  return out;
}

std::string ReportJson(const Report& report, bool with_timing) {
  nlohmann::ordered_json j;
  j["cluster"] = report.cluster;
  j["workload"] = report.workload;
  j["truth"] = report.truth;
  j["seed"] = report.seed;
  if (!report.predictions.empty()) j["predictions"] = report.predictions;
  j["tasks"] = report.tasks;
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (size_t k = 0; k < report.gpu_types.size(); ++k) {
    types.push_back({{"type", report.gpu_types[k]}, {"gpus", report.gpus_per_type[k]}});
  }
  j["gpu_types"] = types;
  j["lower_bound_s"] = {{"value", R(report.lower_bound.value_ms() / 1000)},
                        {"longest_task", R(report.lower_bound.longest_task_ms / 1000)},
                        {"lp_relaxation", R(report.lower_bound.lp_ms / 1000)},
                        {"lp_solved", report.lower_bound.lp_solved},
                        {"lp_status", report.lower_bound.lp_status},
                        {"lp_groups", report.lower_bound.lp_groups}};
  j["best_known_s"] = {{"value", R(report.best_known_ms / 1000)},
                       {"method", report.best_known_method}};
  nlohmann::ordered_json ps = nlohmann::ordered_json::array();
  for (const PolicyReport& p : report.policies) {
    nlohmann::ordered_json e;
    e["policy"] = p.policy;
    e["completed"] = p.completed;
    e["rejected"] = p.rejected;
    e["makespan_s"] = R(p.makespan_s);
    e["makespan_vs_rr"] = R(p.makespan_vs_rr);
    e["ratio_to_lower_bound"] = R(p.ratio_to_lower_bound);
    e["ratio_to_best_known"] = R(p.ratio_to_best_known);
    e["jct_s"] = {{"mean", R(p.jct_mean_s)},
                  {"p50", R(p.jct_p50_s)},
                  {"p95", R(p.jct_p95_s)},
                  {"p99", R(p.jct_p99_s)}};
    e["slowdown"] = {{"mean", R(p.slowdown_mean)},
                     {"p50", R(p.slowdown_p50)},
                     {"p95", R(p.slowdown_p95)}};
    e["wait_s"] = {{"mean", R(p.wait_mean_s)}, {"max", R(p.wait_max_s)}};
    nlohmann::ordered_json u;
    for (size_t k = 0; k < p.utilisation.size(); ++k) u[report.gpu_types[k]] = R(p.utilisation[k]);
    e["utilisation"] = u;
    e["reservations"] = p.reservations;
    e["backfills"] = p.backfills;
    if (!std::isnan(p.queue_eta.eta_s)) {
      // null where not finite (a task that can never end) or not reached (the run ended first)
      auto num = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(R(x)) : nlohmann::ordered_json(); };
      const QueueEta& q = p.queue_eta;
      e["queue_eta_s"] = num(q.eta_s);
      e["queue_eta"] = {{"planned_at_s", num(q.planned_at_s)},
                        {"complete", q.complete},
                        {"error", num(q.error)},
                        {"error_at", {{"25%", num(q.error_at[0])}, {"50%", num(q.error_at[1])}, {"75%", num(q.error_at[2])}}},
                        {"at_s", {{"25%", num(q.at_s[0])}, {"50%", num(q.at_s[1])}, {"75%", num(q.at_s[2])}}}};
    }
    if (!p.teams.empty()) {
      e["preemptions"] = p.preemptions;
      e["teams"] = TeamFiguresJson(p.teams);
    }
    if (with_timing) {
      e["decision_us"] = {{"count", p.decisions},
                          {"mean", R(p.decision_mean_us, 3)},
                          {"p99", R(p.decision_p99_us, 3)}};
    }
    ps.push_back(e);
  }
  j["policies"] = ps;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

std::string Label(const sched::Cluster& cluster, int gpu) {
  return gpu >= 0 ? cluster.GpuLabel(gpu) : std::string();
}

// Where a task ran: its GPU, or a k-GPU task's GPUs joined by '+' ("a100/0+a100/1").
std::string RanOn(const sched::Cluster& cluster, const TaskOutcome& o) {
  if (o.gpus.empty()) return Label(cluster, o.gpu);
  std::string out;
  for (size_t i = 0; i < o.gpus.size(); ++i) {  // a split task: "a100/0:120+v100/1:60" (batches)
    out += (out.empty() ? "" : "+") + cluster.GpuLabel(o.gpus[i]) +
           (i < o.parts.size() ? ":" + std::to_string(o.parts[i]) : "");
  }
  return out;
}

std::string CoLocated(const std::vector<sched::Task>& tasks, const TaskOutcome& o,
                      const char* sep) {
  std::string out;
  for (int id : o.co_located) out += (out.empty() ? "" : sep) + tasks[id].name;
  return out;
}

// Why the task went where it did, for people.
std::string Why(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                const TaskOutcome& o) {
  if (o.rejected) return "rejected: " + o.reason;
  std::vector<std::string> parts;
  if (o.runner_up_gpu >= 0) {
    parts.push_back(fmt::format(
        "runner-up {} ({}) predicted end {:.1f} s{}", cluster.GpuLabel(o.runner_up_gpu),
        cluster.types[cluster.gpus[o.runner_up_gpu].type].name, o.runner_up_end_ms / 1000,
        o.runner_up_inflicted_ms > 0
            ? fmt::format(" + {:.1f} s inflicted on its co-runners", o.runner_up_inflicted_ms / 1000)
            : ""));
  }
  const double waited = (o.start_ms - o.arrival_ms) / 1000;
  if (o.waited_for_gpu >= 0) {
    parts.push_back(fmt::format("waited {:.1f} s for {}{}", waited,
                                cluster.GpuLabel(o.waited_for_gpu),
                                o.wait_targets > 1
                                    ? fmt::format(" (changed target {} times)", o.wait_targets - 1)
                                    : ""));
  } else if (waited > 1e-3) {
    parts.push_back(fmt::format("queued {:.1f} s on its GPU", waited));
  }
  if (o.reserved_gpu >= 0) parts.push_back("reserved " + cluster.GpuLabel(o.reserved_gpu));
  if (o.backfilled) parts.push_back("backfilled");
  if (!o.co_located.empty()) parts.push_back("shared with " + CoLocated(tasks, o, " "));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out.empty() ? "the policy's rule (it prices no alternative)" : out;
}

std::vector<const TaskOutcome*> ByStart(const SimResult& result) {
  std::vector<const TaskOutcome*> v;
  for (const TaskOutcome& o : result.tasks) v.push_back(&o);
  std::stable_sort(v.begin(), v.end(), [](const TaskOutcome* a, const TaskOutcome* b) {
    if (a->rejected != b->rejected) return !a->rejected;
    return a->start_ms != b->start_ms ? a->start_ms < b->start_ms : a->task_id < b->task_id;
  });
  return v;
}

}  // namespace

std::string TasksCsv(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                     const SimResult& result) {
  std::string out = "task,model,batch_size,num_batches,gpu,gpu_type,arrival_s,start_s,end_s,"
                    "backfilled,predicted_start_s,predicted_end_s,runner_up_gpu,"
                    "runner_up_end_s,waited_for_gpu,reserved_gpu,co_located,rejected_reason\n";
  auto s = [](double ms) { return ms < 0 ? std::string() : fmt::format("{}", R(ms / 1000)); };
  for (const TaskOutcome& o : result.tasks) {
    const sched::Task& t = tasks[o.task_id];
    std::string reason = o.reason;
    std::replace(reason.begin(), reason.end(), ',', ';');
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", t.name, t.model,
                       t.batch_size, t.num_batches, RanOn(cluster, o),
                       o.gpu >= 0 ? cluster.types[cluster.gpus[o.gpu].type].name : "",
                       R(o.arrival_ms / 1000), o.rejected ? 0 : R(o.start_ms / 1000),
                       o.rejected ? 0 : R(o.end_ms / 1000), o.backfilled ? 1 : 0,
                       s(o.predicted_start_ms), s(o.predicted_end_ms),
                       Label(cluster, o.runner_up_gpu), s(o.runner_up_end_ms),
                       Label(cluster, o.waited_for_gpu), Label(cluster, o.reserved_gpu),
                       CoLocated(tasks, o, " "), reason);
  }
  return out;
}

std::string PlanTable(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                      const SimResult& result, size_t limit) {
  std::string out = fmt::format("plan of {} (times in s; predicted at the moment it was bound)\n",
                                result.policy);
  out += fmt::format("{:<8}{:<32}{:<16}{:>9}{:>10}{:>10}{:>10}{:>10}  {}\n", "task", "model",
                     "gpu", "arrival", "pred beg", "pred end", "start", "end", "why");
  size_t n = 0;
  for (const TaskOutcome* o : ByStart(result)) {
    if (limit > 0 && n++ >= limit) {
      out += fmt::format("… {} more (all in plan_{}.json with --out)\n",
                         result.tasks.size() - limit, result.policy);
      break;
    }
    const sched::Task& t = tasks[o->task_id];
    auto s = [](double ms) { return ms < 0 ? std::string("-") : fmt::format("{:.1f}", ms / 1000); };
    out += fmt::format("{:<8}{:<32}{:<16}{:>9.1f}{:>10}{:>10}{:>10}{:>10}  {}\n", t.name,
                       fmt::format("{} b{} ×{}", t.model, t.batch_size, t.num_batches),
                       o->rejected ? "-" : RanOn(cluster, *o), o->arrival_ms / 1000,
                       s(o->predicted_start_ms), s(o->predicted_end_ms),
                       o->rejected ? "-" : s(o->start_ms), o->rejected ? "-" : s(o->end_ms),
                       Why(cluster, tasks, *o));
  }
  return out;
}

std::string PlanJson(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                     const SimResult& result) {
  // Written task by task (one object per line) rather than as one document: a 100 000-task
  // plan as a single nlohmann::json tree took ~450 MB.
  nlohmann::ordered_json head;
  head["policy"] = result.policy;
  head["makespan_s"] = R(result.makespan_ms / 1000);
  std::string out = head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.pop_back();  // reopen the object
  out += ",\"tasks\":[\n";
  bool first = true;
  auto s = [](double ms) -> nlohmann::ordered_json {
    if (ms < 0) return nullptr;
    return R(ms / 1000);
  };
  auto gpu = [&](int g) -> nlohmann::ordered_json {
    if (g < 0) return nullptr;
    return cluster.GpuLabel(g);
  };
  for (const TaskOutcome* o : ByStart(result)) {
    const sched::Task& t = tasks[o->task_id];
    nlohmann::ordered_json e;
    e["task"] = t.name;
    e["model"] = t.model;
    e["batch_size"] = t.batch_size;
    e["num_batches"] = t.num_batches;
    e["arrival_s"] = R(o->arrival_ms / 1000);
    if (!t.team.empty()) e["team"] = t.team;
    if (!o->preempted.empty()) e["preempted"] = o->preempted;  // why, where, after which batch
    e["gpu"] = gpu(o->gpu);
    if (!o->gpus.empty()) {  // a k-GPU task: all its GPUs
      e["gpus"] = nlohmann::ordered_json::array();
      for (int g : o->gpus) e["gpus"].push_back(cluster.GpuLabel(g));
      if (!o->parts.empty()) e["parts"] = o->parts;  // a split task: batches per GPU
    }
    e["gpu_type"] = o->gpu >= 0 ? nlohmann::ordered_json(cluster.types[cluster.gpus[o->gpu].type].name)
                                : nlohmann::ordered_json(nullptr);
    e["decided_s"] = s(o->decided_ms);
    e["predicted_start_s"] = s(o->predicted_start_ms);
    e["predicted_end_s"] = s(o->predicted_end_ms);
    e["start_s"] = o->rejected ? nullptr : s(o->start_ms);
    e["end_s"] = o->rejected ? nullptr : s(o->end_ms);
    e["runner_up"] = o->runner_up_gpu < 0
                         ? nlohmann::ordered_json(nullptr)
                         : nlohmann::ordered_json{{"gpu", cluster.GpuLabel(o->runner_up_gpu)},
                                                  {"predicted_end_s", s(o->runner_up_end_ms)},
                                                  {"inflicted_s", R(o->runner_up_inflicted_ms / 1000)}};
    e["waited_for"] = gpu(o->waited_for_gpu);
    e["wait_target_changes"] = std::max(0, o->wait_targets - 1);
    e["reserved"] = gpu(o->reserved_gpu);
    e["backfilled"] = o->backfilled;
    nlohmann::ordered_json co = nlohmann::ordered_json::array();
    for (int id : o->co_located) co.push_back(tasks[id].name);
    e["co_located"] = co;
    e["rejected"] = o->rejected;
    if (o->rejected) e["reason"] = o->reason;
    e["why"] = Why(cluster, tasks, *o);
    out += (first ? "" : ",\n") + e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    first = false;
  }
  out += "\n]}\n";
  return out;
}

std::string GanttSvg(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                     const SimResult& result) {
  const double left = 190, top = 40, width = 1000, row_h = 18, gap = 4;
  const double span = std::max(result.makespan_ms, 1.0);
  const size_t n = cluster.gpus.size();
  // Lanes: per GPU, assign each task (by start) to the first lane free at its start.
  std::vector<std::vector<const TaskOutcome*>> by_gpu(n);
  for (const TaskOutcome& o : result.tasks) {
    if (!o.rejected && o.gpu >= 0) by_gpu[o.gpu].push_back(&o);
    for (int h : o.gpus) {  // a k-GPU or split task: a bar on each of its GPUs
      if (!o.rejected && h != o.gpu) by_gpu[h].push_back(&o);
    }
  }
  const double height = top + n * (row_h + gap) + 72;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\">{}: makespan {:.1f} s</text>\n",
      left + width + 20, height, left, result.policy, result.makespan_ms / 1000);
  for (size_t g = 0; g < n; ++g) {
    const sched::Gpu& gpu = cluster.gpus[g];
    const double y = top + g * (row_h + gap);
    svg += fmt::format("<text x=\"4\" y=\"{:.1f}\">{} {}</text>\n", y + row_h - 5,
                       cluster.GpuLabel(static_cast<int>(g)), cluster.types[gpu.type].name);
    svg += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\"/>\n",
                       left, y, width, row_h);
    auto& list = by_gpu[g];
    std::sort(list.begin(), list.end(), [](const TaskOutcome* a, const TaskOutcome* b) {
      return a->start_ms != b->start_ms ? a->start_ms < b->start_ms : a->task_id < b->task_id;
    });
    const int lanes = std::max(1, gpu.max_tasks);
    std::vector<double> lane_free(lanes, -1);
    for (const TaskOutcome* o : list) {
      int lane = 0;
      for (int l = 0; l < lanes; ++l) {
        if (lane_free[l] <= o->start_ms + 1e-9) {
          lane = l;
          break;
        }
      }
      lane_free[lane] = o->end_ms;
      const double lh = row_h / lanes;
      const double x = left + width * o->start_ms / span;
      const double w = std::max(0.5, width * (o->end_ms - o->start_ms) / span);
      const sched::Task& t = tasks[o->task_id];
      svg += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\" "
          "stroke=\"white\" stroke-width=\"0.3\"><title>{} {} b{} ×{}: {:.1f}–{:.1f} s</title></rect>\n",
          x, y + lane * lh, w, lh, FamilyColour(t.family), t.name, t.model, t.batch_size,
          t.num_batches, o->start_ms / 1000, o->end_ms / 1000);
    }
  }
  // Legend and time axis.
  const double ly = top + n * (row_h + gap) + 20;
  double lx = left;
  std::map<std::string, int> families;
  for (const sched::Task& t : tasks) families[t.family] = 1;
  for (const auto& [f, unused] : families) {
    svg += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                       "<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n",
                       lx, ly, FamilyColour(f), lx + 16, ly + 10, f);
    lx += 110;
  }
  // Ticks every 1, 2 or 5 × 10^k seconds (at most 10 intervals), with faint grid lines; the
  // makespan itself labels the right end.
  const double span_s = span / 1000;
  const double raw = span_s / 10, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
  const double grid_bottom = top + n * (row_h + gap);
  for (int i = 0; i * step < span_s * 0.95; ++i) {
    const double x = left + width * (i * step) / span_s;
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" "
                       "stroke=\"#888\" stroke-opacity=\"0.35\" stroke-width=\"0.5\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\">{4:g} s</text>\n",
                       x, top, grid_bottom, ly + 30, i * step);
  }
  svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{:.1f} s</text>\n",
                     left + width, ly + 44, span_s);
  svg += "</svg>\n";
  return svg;
}

}  // namespace hase::sim
