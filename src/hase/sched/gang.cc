#include "hase/sched/gang.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "hase/base/check.h"
#include "hase/sched/backfill.h"
#include "hase/sched/basic_plugins.h"
#include "hase/sched/timeline.h"

namespace hase::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The GPUs of one node and one type that could ever host the task, ascending.
struct Group {
  std::string node;
  int type = 0;
  std::vector<int> gpus;
};

// When `g` could hold a k-GPU task that runs `runtime_ms`, ms: once everything bound there
// has drained; a reservation of another task comes first unless the task ends before its
// shadow time (EASY backfilling).
// Claims (tasks that plan, in this pass, to wait for the GPU) hold nothing and are not counted:
// a k-GPU task may go ahead of them.
double ReadyMs(const GpuState& g, int task_id, double runtime_ms, double now_ms, const ContentionModel& model) {
  double ready = now_ms;
  if (!g.claims.empty()) {
    GpuState held = g;
    held.claims.clear();
    if (!held.Idle()) ready = std::max(now_ms, PredictTimeline(held, model, now_ms).finish_ms);
  } else if (!g.Idle()) {
    ready = std::max(now_ms, g.projected_finish_ms);
  }
  if (g.reservation && g.reservation->task_id != task_id &&
      ready + runtime_ms > g.reservation->start_ms + kTimeEpsMs) {
    ready = std::max(ready, g.reservation->start_ms + g.reservation->isolated_ms);
  }
  return ready;
}

}  // namespace

double GangIsolatedMs(const Task& task, double single_ms) {
  if (task.gpus <= 1) return single_ms;
  const double nb = static_cast<double>(std::max<int64_t>(1, task.num_batches));
  const double share = std::ceil(nb / task.gpus) / nb;
  const double e = task.parallel_efficiency > 0 ? task.parallel_efficiency : 1.0;
  return single_ms * share / e;
}

bool GangFitsNow(const ClusterState& state, const std::vector<int>& gpus, int task_id, double runtime_ms) {
  for (int id : gpus) {
    const GpuState& g = state.gpus[id];
    if (!g.running.empty() || !g.queued.empty() || g.memory_mib <= 0) return false;
    if (g.reservation && g.reservation->task_id != task_id &&
        state.now_ms + runtime_ms > g.reservation->start_ms + kTimeEpsMs) {
      return false;
    }
  }
  return true;
}

Decision DecideGang(const Task& task, const ClusterState& state, const CycleState& cycle,
                    const ContentionModel& model, GangRule rule, bool dispatch, const std::string& policy) {
  const int k = task.gpus;
  Decision d;
  if (rule == GangRule::kRefuse) {
    d.kind = Decision::Kind::kReject;
    d.reason = fmt::format(
        "needs {} GPUs at once, but policy '{}' places each task on one GPU (k-GPU tasks: "
        "hase, eft, eft-share, min-min, max-min, fastest-gpu)",
        k, policy);
    return d;
  }
  const Cluster& cluster = state.cluster;
  std::vector<Group> groups;
  for (const GpuState& g : state.gpus) {
    const Gpu& spec = cluster.gpus[g.id];
    if (spec.is_mig() || !cluster.types[g.type].mig_profile.empty()) continue;  // whole GPUs only
    const Result<TaskProfile>& p = cycle.profile[g.type];
    if (!p.ok() || g.memory_mib <= 0 || !g.CanEverHost(MemoryNeedMib(task, *p))) continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& x) { return x.node == spec.node && x.type == g.type; });
    if (it == groups.end()) {
      groups.push_back({spec.node, g.type, {}});
      it = groups.end() - 1;
    }
    it->gpus.push_back(g.id);
  }
  struct Option {
    std::vector<int> gpus;
    double start = kInf, end = kInf, runtime = kInf;
  };
  Option best, second;
  size_t largest = 0;
  const Group* largest_group = nullptr;
  const auto better = [&](const Option& a, const Option& b) {
    if (rule == GangRule::kFastest && std::abs(a.runtime - b.runtime) > kTimeEpsMs) return a.runtime < b.runtime;
    return a.end < b.end - kTimeEpsMs;
  };
  for (const Group& grp : groups) {
    if (grp.gpus.size() > largest) {
      largest = grp.gpus.size();
      largest_group = &grp;
    }
    if (static_cast<int>(grp.gpus.size()) < k) continue;
    Option o;
    o.runtime = GangIsolatedMs(task, cycle.profile[grp.type]->isolated_ms);
    std::vector<std::pair<double, int>> ready;
    for (int id : grp.gpus) ready.emplace_back(ReadyMs(state.gpus[id], task.id, o.runtime, cycle.now_ms, model), id);
    std::sort(ready.begin(), ready.end());
    for (int i = 0; i < k; ++i) o.gpus.push_back(ready[i].second);
    std::sort(o.gpus.begin(), o.gpus.end());
    o.start = std::max(cycle.now_ms, ready[k - 1].first);
    o.end = o.start + o.runtime;
    if (best.gpus.empty() || better(o, best)) {
      second = std::move(best);
      best = std::move(o);
    } else if (second.gpus.empty() || better(o, second)) {
      second = std::move(o);
    }
  }
  if (best.gpus.empty()) {
    d.kind = Decision::Kind::kReject;
    d.reason = largest_group == nullptr
                   ? fmt::format("task {} ({}) needs {} GPUs of one type on one node, but no whole GPU can host it",
                                 task.name, task.model, k)
                   : fmt::format("task {} ({}) needs {} GPUs of one type on one node, but the most any node has "
                                 "that can host it is {} ({} on node {})",
                                 task.name, task.model, k, largest, cluster.types[largest_group->type].name,
                                 largest_group->node);
    return d;
  }
  d.gpus = best.gpus;
  d.gpu = best.gpus.front();
  d.start_ms = best.start;
  d.end_ms = best.end;
  d.cost_ms = best.end;
  if (!second.gpus.empty()) {
    d.runner_up_gpu = second.gpus.front();
    d.runner_up_end_ms = second.end;
  }
  if (dispatch || (best.start <= cycle.now_ms + kTimeEpsMs && GangFitsNow(state, best.gpus, task.id, best.runtime))) {
    d.kind = Decision::Kind::kBind;
    return d;
  }
  d.kind = Decision::Kind::kWait;
  d.reserve = true;
  d.reason = fmt::format("waits for {} {} GPUs on node {} (predicted start {:.1f} s)", k,
                         cluster.types[state.gpus[d.gpu].type].name, cluster.gpus[d.gpu].node,
                         best.start / 1000.0);
  return d;
}

namespace {

// The run of a bound k-GPU or split task, ms: GangIsolatedMs, or a split task's slowest part.
double BoundRunMs(const Task& task, const Decision& decision, const CycleState& cycle, const ClusterState& state) {
  if (decision.parts.empty()) {
    return GangIsolatedMs(task, cycle.profile[state.gpus[decision.gpus.front()].type]->isolated_ms);
  }
  const double nb = static_cast<double>(std::max<int64_t>(1, task.num_batches));
  double run = 0;
  for (size_t i = 0; i < decision.gpus.size(); ++i) {
    run = std::max(run, cycle.profile[state.gpus[decision.gpus[i]].type]->isolated_ms / nb *
                            static_cast<double>(decision.parts[i]));
  }
  return run;
}

}  // namespace

std::optional<Decision> DecideSplit(const Task& task, const ClusterState& state, const CycleState& cycle,
                                    double single_end_ms) {
  const int64_t n = task.num_batches;
  if (task.gpus > 1 || n < 2) return std::nullopt;
  const double nb = static_cast<double>(n);
  std::vector<std::pair<double, int>> idle;  // (per-batch ms, GPU id)
  for (const GpuState& g : state.gpus) {
    const Gpu& spec = state.cluster.gpus[g.id];
    if (spec.is_mig() || !state.cluster.types[g.type].mig_profile.empty()) continue;
    const Result<TaskProfile>& p = cycle.profile[g.type];
    if (!p.ok() || g.memory_mib <= 0 || !g.CanEverHost(MemoryNeedMib(task, *p))) continue;
    if (!g.Idle() || g.reservation || g.background.EffectiveSmActive() > 0) continue;
    idle.emplace_back(p->isolated_ms / nb, g.id);
  }
  if (idle.size() < 2) return std::nullopt;
  std::sort(idle.begin(), idle.end());
  double best_end = single_end_ms - kTimeEpsMs;
  std::optional<Decision> best;
  double rate = 1.0 / idle[0].first;
  for (size_t m = 2; m <= std::min<size_t>({idle.size(), static_cast<size_t>(kMaxSplitParts), static_cast<size_t>(n)});
       ++m) {
    rate += 1.0 / idle[m - 1].first;
    std::vector<int64_t> parts(m);
    int64_t given = 0;
    for (size_t i = 0; i < m; ++i) {
      parts[i] = static_cast<int64_t>(std::floor(nb * (1.0 / idle[i].first) / rate));
      given += parts[i];
    }
    for (; given < n; ++given) {  // the rest, each to the GPU that would end it first
      size_t at = 0;
      for (size_t i = 1; i < m; ++i) {
        if ((parts[i] + 1) * idle[i].first < (parts[at] + 1) * idle[at].first) at = i;
      }
      ++parts[at];
    }
    double run = 0;
    for (size_t i = 0; i < m; ++i) run = std::max(run, parts[i] * idle[i].first);
    if (std::any_of(parts.begin(), parts.end(), [](int64_t b) { return b == 0; })) continue;
    const double end = cycle.now_ms + run;
    if (end >= best_end) continue;
    best_end = end;
    std::vector<std::pair<int, int64_t>> by_id;
    for (size_t i = 0; i < m; ++i) by_id.emplace_back(idle[i].second, parts[i]);
    std::sort(by_id.begin(), by_id.end());
    Decision d;
    d.kind = Decision::Kind::kBind;
    for (const auto& [id, b] : by_id) {
      d.gpus.push_back(id);
      d.parts.push_back(b);
    }
    d.gpu = d.gpus.front();
    d.start_ms = cycle.now_ms;
    d.end_ms = end;
    d.cost_ms = end;
    best = std::move(d);
  }
  return best;
}

void BindGang(const Task& task, const Decision& decision, const CycleState& cycle, ClusterState& state) {
  HASE_CHECK(!decision.gpus.empty());
  const int type = state.gpus[decision.gpus.front()].type;
  const Result<TaskProfile>& p = cycle.profile[type];
  HASE_CHECK(p.ok());
  const double runtime = BoundRunMs(task, decision, cycle, state);
  const int k = static_cast<int>(decision.gpus.size());
  if (GangFitsNow(state, decision.gpus, task.id, runtime)) {
    for (int id : decision.gpus) {
      GpuState& g = state.gpus[id];
      RunningTask r;
      r.task_id = task.id;
      r.memory_mib = g.memory_mib;  // alone on the GPU
      r.demand = p->demand;
      r.started_ms = state.now_ms;
      r.remaining_ms = runtime;
      r.as_of_ms = state.now_ms;
      r.gang = k;
      g.running.push_back(r);
    }
    state.gang_of_task.erase(task.id);
    return;
  }
  for (int id : decision.gpus) {
    GpuState& g = state.gpus[id];
    QueuedTask q;
    q.task_id = task.id;
    q.memory_mib = g.memory_mib;
    q.demand = p->demand;
    q.isolated_ms = runtime;
    q.gang = k;
    g.queued.push_back(q);
  }
  state.gang_of_task[task.id] = decision.gpus;
}

void ReserveGang(const Task& task, const Decision& decision, const CycleState& cycle, ClusterState& state) {
  UnreserveGang(task.id, state);
  const int type = state.gpus[decision.gpus.front()].type;
  const Result<TaskProfile>& p = cycle.profile[type];
  HASE_CHECK(p.ok());
  std::vector<int> held;
  for (int id : decision.gpus) {
    GpuState& g = state.gpus[id];
    if (g.reservation) continue;  // another task's: the task starts after it (ReadyMs)
    Reservation r;
    r.task_id = task.id;
    r.start_ms = decision.start_ms;
    r.memory_mib = g.memory_mib;  // the whole GPU: a backfilled task must end by start_ms
    r.demand = p->demand;
    r.isolated_ms = GangIsolatedMs(task, p->isolated_ms);
    r.made_ms = state.now_ms;
    g.reservation = r;
    held.push_back(id);
  }
  if (held.empty()) return;
  state.reservation_of_task[task.id] = held.front();
  state.gang_of_task[task.id] = std::move(held);
}

void UnreserveGang(int task_id, ClusterState& state) {
  auto it = state.gang_of_task.find(task_id);
  if (it == state.gang_of_task.end()) return;
  bool queued = false;
  for (int id : it->second) {
    GpuState& g = state.gpus[id];
    if (g.reservation && g.reservation->task_id == task_id) g.reservation.reset();
    queued = queued || std::any_of(g.queued.begin(), g.queued.end(),
                                   [&](const QueuedTask& q) { return q.task_id == task_id; });
  }
  auto r = state.reservation_of_task.find(task_id);
  if (r != state.reservation_of_task.end()) state.reservation_of_task.erase(r);
  if (!queued) state.gang_of_task.erase(it);
}

std::vector<int> StartGangIfReady(ClusterState& state, int gpu, double now_ms) {
  const GpuState& head = state.gpus[gpu];
  if (head.queued.empty() || head.queued.front().gang <= 1) return {};
  const int task_id = head.queued.front().task_id;
  auto it = state.gang_of_task.find(task_id);
  if (it == state.gang_of_task.end()) return {};
  for (int id : it->second) {
    const GpuState& g = state.gpus[id];
    if (g.queued.empty() || g.queued.front().task_id != task_id || !g.running.empty()) return {};
  }
  std::vector<int> gpus = std::move(it->second);
  state.gang_of_task.erase(it);
  for (int id : gpus) {
    GpuState& g = state.gpus[id];
    const QueuedTask q = g.queued.front();
    g.queued.erase(g.queued.begin());
    RunningTask r;
    r.task_id = q.task_id;
    r.memory_mib = q.memory_mib;
    r.demand = q.demand;
    r.started_ms = now_ms;
    r.remaining_ms = q.isolated_ms;
    r.as_of_ms = now_ms;
    r.gang = q.gang;
    g.running.push_back(r);
  }
  return gpus;
}

}  // namespace hase::sched
