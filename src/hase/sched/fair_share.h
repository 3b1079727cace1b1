// FairShare: each team's usage in reference-equivalent GPU-seconds (A100-equivalent by
// default), decayed with a half-life, and Slurm's classic fair-share factor from it.
//
// One second of a task on a GPU of type X counts EquivalentSpeed(task, X) reference seconds:
// the oracle's predicted isolated time of the task on the reference type over its time on X
// (a task that runs 4x faster on an H100 than on the A100 reference is charged 4 s per H100
// second; 0.3 s per T4 second if it runs 3.3x slower there). So a team that got T4 hours is not
// charged like one that got H100 hours.
//
// Decay (Slurm's PriorityDecayHalfLife): usage at time t is Σ over run segments [s, e] of
// speed × ∫_s^e 2^(−(t−τ)/h) dτ, exact, also for segments still running. Factor (Slurm's
// classic fair-share, sshare's FairShare column): F = 2^(−U_norm / S_norm) with U_norm = the
// team's decayed usage over all teams' and S_norm = its shares over all teams' shares; 1 when
// nothing was used yet. 1 = under-served, 0.5 = used exactly its share, → 0 = over-served.
#pragma once

#include <vector>

#include "hase/sched/latency_oracle.h"
#include "hase/sched/team_config.h"

namespace hase::sched {

// A100 SXM4's datasheet FP32 peak, TFLOP/s (NVIDIA A100 datasheet): the reference peak of the
// fallback ratio when the reference type is not in the catalog at hand.
inline constexpr double kA100Fp32Tflops = 19.5;

// Reference-equivalent seconds per second of `task` on `type`: the oracle's isolated time on
// `reference` over its time on `type`. When the oracle cannot price either (a latency table
// without the reference type), the ratio of datasheet FP32 peaks; 1 when those are unknown too.
double EquivalentSpeed(const LatencyOracle& oracle, const Task& task, const GpuType& type, const GpuType& reference);

struct TeamUsage {
  double usage_eq_s = 0;  // decayed usage, reference-equivalent GPU-seconds
  double raw_eq_s = 0;    // undecayed total, reference-equivalent GPU-seconds
  double gpu_s = 0;       // undecayed total, plain GPU-seconds (wall time × GPUs)
  double factor = 1;      // fair-share factor, 0–1 (see file comment)
};

// Not thread-safe. Times are seconds on any one clock (the simulator's, wall time).
class FairShare {
 public:
  explicit FairShare(const TeamConfig& config);

  // A run segment still open (a running task): its team, start and speed.
  struct Open {
    int team = -1;
    double start_s = 0;
    double speed = 1;
  };

  // Adds a finished run segment of a task of `team` (a TeamConfig index; others ignored) from
  // start_s to end_s at `speed` equivalents per second. end_s < start_s counts as empty.
  void Charge(int team, double start_s, double end_s, double speed);
  // Every team's figures at now_s, closed segments plus `running` (indexed like config.teams).
  std::vector<TeamUsage> Snapshot(double now_s, const std::vector<Open>& running) const;

 private:
  // speed × ∫_s^e 2^(−(t−τ)/h) dτ, expressed at t = ref_s_.
  double Decayed(double start_s, double end_s, double speed, double at_s) const;

  const TeamConfig& config_;
  const double half_life_s_;
  double ref_s_ = 0;                // the time decayed_ is expressed at
  bool any_ = false;
  std::vector<double> decayed_;     // per team, at ref_s_
  std::vector<double> raw_eq_s_, gpu_s_;
};

}  // namespace hase::sched
