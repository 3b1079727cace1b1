#include "hase/sched/timeline.h"

#include <algorithm>
#include <limits>

namespace hase::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDoneMs = 1e-9;  // remaining work below this counts as finished, ms

struct Item {
  int task_id;
  double memory_mib;
  double demand;
  double remaining;   // isolated ms left
  double not_before;  // earliest start
  size_t entry;       // index into Timeline::entries
};

}  // namespace

Timeline PredictTimeline(const GpuState& gpu, const ContentionModel& model, double now_ms,
                         const std::optional<ExtraTask>& extra) {
  Timeline tl;
  const size_t n = gpu.running.size() + gpu.queued.size() + gpu.claims.size() + (extra ? 1 : 0);
  tl.entries.reserve(n);
  // Work lists, reused between calls on this thread (PredictTimeline runs several times per
  // scheduling decision; n is bounded by max_tasks + queue length). Not re-entrant.
  thread_local std::vector<Item> run;
  thread_local std::vector<Item> wait;
  run.clear();
  wait.clear();
  run.reserve(n);
  wait.reserve(n);
  double mem_used = 0;
  for (const RunningTask& r : gpu.running) {
    tl.entries.push_back({r.task_id, r.started_ms, kInf});
    run.push_back({r.task_id, r.memory_mib, r.demand, r.RemainingAt(now_ms), 0,
                   tl.entries.size() - 1});
    mem_used += r.memory_mib;
  }
  for (const auto* list : {&gpu.queued, &gpu.claims}) {
    for (const QueuedTask& q : *list) {
      tl.entries.push_back({q.task_id, kInf, kInf});
      wait.push_back({q.task_id, q.memory_mib, q.demand, q.isolated_ms, q.not_before_ms,
                      tl.entries.size() - 1});
    }
  }
  if (extra) {
    tl.entries.push_back({extra->task_id, kInf, kInf});
    wait.push_back({extra->task_id, extra->memory_mib, extra->demand, extra->isolated_ms,
                    extra->not_before_ms, tl.entries.size() - 1});
  }
  const double background = gpu.background.EffectiveSmActive();
  double t = now_ms;
  size_t head = 0;
  while (true) {
    // Start queued tasks in FIFO order while the head fits.
    while (head < wait.size()) {
      Item& w = wait[head];
      if (w.memory_mib > gpu.memory_mib + 1e-9) {  // never fits: give up on it (and keep FIFO)
        ++head;
        continue;
      }
      const bool fits = static_cast<int>(run.size()) < gpu.max_tasks &&
                        mem_used + w.memory_mib <= gpu.memory_mib + 1e-9;
      if (!fits || t < w.not_before) break;
      tl.entries[w.entry].start_ms = t;
      mem_used += w.memory_mib;
      run.push_back(w);
      ++head;
    }
    if (run.empty()) {
      if (head >= wait.size()) break;
      t = std::max(t, wait[head].not_before);  // only not_before holds the head back
      continue;
    }
    double total = background;
    for (const Item& r : run) total += r.demand;
    // dt: isolated-work time to the next completion. The task(s) attaining it are retired by
    // index below, not by comparing their float remainder with kDoneMs: at a large time base
    // (t ~ 1e9 ms) t + dt can round to t, and a step that only subtracted (t + dt) − t would
    // make no progress and loop forever. Each iteration therefore retires at least one task or
    // starts one (a not_before step moves t to a strictly larger not_before).
    double dt = kInf;
    for (const Item& r : run) {
      const double rate = 1.0 / model.Slowdown(r.demand, total - r.demand);
      dt = std::min(dt, r.remaining / rate);
    }
    double next = t + dt;
    bool by_not_before = false;
    if (head < wait.size() && wait[head].not_before > t && wait[head].not_before < next) {
      const Item& w = wait[head];
      const bool fits_by_resources = static_cast<int>(run.size()) < gpu.max_tasks &&
                                     mem_used + w.memory_mib <= gpu.memory_mib + 1e-9;
      if (fits_by_resources) {
        next = w.not_before;
        by_not_before = true;
      }
    }
    const double step = by_not_before ? next - t : dt;
    for (Item& r : run) {
      const double rate = 1.0 / model.Slowdown(r.demand, total - r.demand);
      const double own_dt = r.remaining / rate;
      if (!by_not_before && own_dt <= dt) {
        r.remaining = 0;  // this task ends now (exactly, whatever the rounding of t + dt)
      } else {
        r.remaining -= rate * step;
      }
    }
    t = next;
    // Retire finished tasks (stable order).
    size_t keep = 0;
    for (size_t i = 0; i < run.size(); ++i) {
      if (run[i].remaining <= kDoneMs) {
        tl.entries[run[i].entry].end_ms = t;
        mem_used -= run[i].memory_mib;
      } else {
        run[keep++] = run[i];
      }
    }
    run.resize(keep);
    if (run.empty()) mem_used = 0;  // no float drift left behind when the GPU empties
  }
  tl.finish_ms = now_ms;
  for (const Timeline::Entry& e : tl.entries) {
    if (e.end_ms != kInf) tl.finish_ms = std::max(tl.finish_ms, e.end_ms);
  }
  if (extra) tl.extra = tl.entries.back();
  return tl;
}

double EarliestFitMs(const GpuState& gpu, const ContentionModel& model, double now_ms,
                     double memory_mib) {
  if (memory_mib > gpu.memory_mib + 1e-9) return kInf;
  if (gpu.FitsNow(memory_mib)) return now_ms;
  ExtraTask probe;
  probe.memory_mib = memory_mib;
  probe.demand = 0;
  probe.isolated_ms = kDoneMs;
  probe.not_before_ms = now_ms;
  return PredictTimeline(gpu, model, now_ms, probe).extra->start_ms;
}

}  // namespace hase::sched
