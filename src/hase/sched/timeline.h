// PredictTimeline: when each task on one GPU will finish, under the ContentionModel.
//
// Runs the GPU forward in predicted time: running tasks progress at 1 / Slowdown(own demand, co-runners'
// demand + background) of isolated speed; when one finishes the rates change; queued tasks
// (and an optional extra task) start in FIFO order as soon as memory and a slot allow. Exact
// for the model (rates are piecewise constant), O(n²) for n tasks — n is bounded by the
// GPU's max_tasks plus its queue.
#pragma once

#include <optional>
#include <vector>

#include "hase/sched/contention_model.h"
#include "hase/sched/gpu_state.h"

namespace hase::sched {

// A task to add to the GPU, for "what if" questions.
struct ExtraTask {
  int task_id = -1;
  double memory_mib = 0;
  double demand = 1.0;
  double isolated_ms = 0;       // predicted isolated runtime on this GPU's type, ms
  double not_before_ms = 0;     // earliest start, ms (e.g. a reservation's shadow time)
};

struct Timeline {
  // Predicted end of every running, queued and claiming task (and the extra one), in order of
  // appearance: running first, then queued, then claims, then the extra task last.
  struct Entry {
    int task_id = 0;
    double start_ms = 0;
    double end_ms = 0;
  };
  std::vector<Entry> entries;
  double finish_ms = 0;  // max end over entries; now_ms when the GPU is idle
  // For the extra task: its entry (also the last element of entries); nullopt without one.
  std::optional<Entry> extra;
};

// Predicts the GPU's future from `now_ms`. Claims (GpuState::claims) queue behind queued
// tasks; the extra task, when given, joins behind both. A task that can never fit (memory > capacity) is given start = end =
// +infinity rather than looping.
Timeline PredictTimeline(const GpuState& gpu, const ContentionModel& model, double now_ms,
                         const std::optional<ExtraTask>& extra = std::nullopt);

// Earliest time >= now_ms at which a task needing `memory_mib` could start on `gpu` given the
// predicted timeline of what is there (ignores reservations). +infinity if never.
double EarliestFitMs(const GpuState& gpu, const ContentionModel& model, double now_ms,
                     double memory_mib);

}  // namespace hase::sched
