// ContentionModel: how co-located tasks slow each other down on one GPU.
//
// Without MPS, kernels of different processes do not overlap: the GPU time-slices between
// contexts that have work. A task i that keeps the GPU busy a fraction u_i of its time alone
// (its demand; the rest of each batch the GPU waits for i's host: launches, copies, Python)
// only waits when its kernels find the GPU busy with someone else's. With U = the co-runners'
// demands plus the background's SM activity (LoadSnapshot::EffectiveSmActive), i progresses at
// 1 / s_i of its isolated speed, where
//
//     s_i = 1 + kappa × U × min(1, u_i / (1 − U))              (U < 1)
//     s_i = 1 + kappa × U                                     (U ≥ 1: the GPU is saturated)
//
// Derivation (docs/scheduler.md, "Co-location"): i's host time (1 − u_i) is untouched; its
// device time u_i is served at the rate the others leave free, 1 − U, while the summed demand
// stays below 1: s = (1 − u) + u / (1 − U) = 1 + u·U / (1 − U). Once u_i + U ≥ 1 the GPU is
// saturated and time-slicing shares it in proportion to demand: s = 1 + U (continuous at
// u + U = 1). kappa ≥ 1 charges time-slicing's own cost (context switches, cache and TLB
// thrash) on top: two saturating tasks with kappa = 1 each run at half speed.
// Consequences: light, host-bound inference tasks (demand 0.1–0.3) barely slow each other
// (two at 0.2: s = 1.06 with kappa 1.28), saturating ones share the GPU.
//
// kappa is calibrated on Gavel's measured co-located pairs (../shared/data/interference/gavel;
// training jobs on K80/P100/V100) by tools/calibrate_interference.py, which fits kappa and each
// job's demand jointly to this formula (output in data/interference_calibration.txt).
#pragma once

#include <algorithm>

namespace hase::sched {

// Calibrated by `python3 tools/calibrate_interference.py ../shared/data/interference` (see
// data/interference_calibration.txt for the full output and the per-GPU values).
inline constexpr double kKappaGavel = 1.15;

struct ContentionModel {
  double kappa = kKappaGavel;  // cost of time-slicing per unit of co-runners' demand, >= 0

  // Slowdown factor (>= 1) of a task of demand `own` (0–1) whose co-runners' demands plus the
  // background's SM activity sum to `others` (>= 0). Monotone non-decreasing in both.
  double Slowdown(double own, double others) const {
    if (others <= 0) return 1.0;
    const double share = others >= 1.0 ? 1.0 : std::min(1.0, std::max(0.0, own) / (1.0 - others));
    return 1.0 + kappa * others * share;
  }
};

}  // namespace hase::sched
