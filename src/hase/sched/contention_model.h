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
// pairs (V100, P100, K80), s_i − 1 is fitted as kappa × demand_j with the heaviest partner at
// demand 1. The result is kKappaGavel below.
#pragma once

namespace hase::sched {

// Calibrated by `python3 tools/calibrate_interference.py ../shared/data/interference` (see
// data/interference_calibration.txt for the full output and the per-GPU values).
inline constexpr double kKappaGavel = 0.88;

struct ContentionModel {
  double kappa = kKappaGavel;  // slowdown per unit of co-runners' demand, >= 0

  // Slowdown factor (>= 1) of a task whose co-runners' demands (plus background) sum to
  // `others_demand`.
  double Slowdown(double others_demand) const { return 1.0 + kappa * others_demand; }
};

}  // namespace hase::sched
