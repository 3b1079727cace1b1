// ContentionModel: how co-located tasks slow each other down on one GPU.
//
// Model (documented in docs/scheduler.md, "Co-location"): a task i sharing a GPU with a set S
// of other tasks, plus background load b (LoadSnapshot::EffectiveSmActive() of work hase does
// not know about), progresses at rate 1 / s_i of its isolated speed, where
//
//     s_i = 1 + kappa × (b + Σ_{j ∈ S} demand_j)
//
// demand_j ∈ (0, 1] is how much of the GPU task j keeps busy alone (TaskProfile::demand). Two
// tasks that each saturate the GPU (demand 1) with kappa = 1 share it evenly (each at half
// speed); small-batch tasks that leave the GPU mostly idle barely slow each other.
//
// kappa is calibrated offline on ../shared/data/interference (tools/calibrate_interference.py,
// its output committed in data/interference_calibration.txt): on Gavel's measured co-located
// pairs (K80, P100, V100; training jobs, one GPU each), c_j = median over victims of s − 1
// beside partner j is kappa × demand_j; the heaviest partners (90th percentile of c_j) are
// taken to saturate the GPU (demand 1). Per GPU: K80 1.23, P100 1.08, V100 1.54; kKappaGavel
// is their mean. kappa >= 1 means two saturating tasks together are no faster than one after
// the other; co-location pays only for tasks that leave the GPU partly idle. The bencyq_hase
// kernel-under-stressor data give a far lower apparent value (0.004–0.09), but its timings
// include host↔device copies that a stressor does not slow, so it only cross-checks the sign.
#pragma once

namespace hase::sched {

// Calibrated by `python3 tools/calibrate_interference.py ../shared/data/interference` (see
// data/interference_calibration.txt for the full output and the per-GPU values).
inline constexpr double kKappaGavel = 1.28;

struct ContentionModel {
  double kappa = kKappaGavel;  // slowdown per unit of co-runners' demand, >= 0

  // Slowdown factor (>= 1) of a task whose co-runners' demands (plus background) sum to
  // `others_demand`.
  double Slowdown(double others_demand) const { return 1.0 + kappa * others_demand; }
};

}  // namespace hase::sched
