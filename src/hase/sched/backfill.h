// EASY backfilling (Lifka 1995) on one GPU: may a task use a GPU another task has reserved?
//
// Yes only if the task can start now and, with it added, the predicted timeline still lets
// the reserved task start by its shadow time (Reservation::start_ms): the newcomer either
// ends before then or leaves enough memory and slots, and the slowdown it inflicts on the
// running tasks does not push their ends past the shadow time. Checked with PredictTimeline,
// so it is exact for the ContentionModel; with a perfect oracle backfilling never delays a
// reservation (tests/sched/backfill_test.cc checks this over many seeds).
#pragma once

#include "hase/sched/contention_model.h"
#include "hase/sched/gpu_state.h"
#include "hase/sched/timeline.h"

namespace hase::sched {

// Tolerance when comparing predicted times, ms (float rounding in the timeline).
inline constexpr double kTimeEpsMs = 1e-6;

// True when `candidate` may start on `gpu` now without delaying gpu.reservation (true when
// the GPU has no reservation or the reservation is the candidate's own).
bool BackfillAllowed(const GpuState& gpu, const ContentionModel& model, double now_ms,
                     const ExtraTask& candidate);

}  // namespace hase::sched
