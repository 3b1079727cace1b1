#include "hase/sched/fair_share.h"

#include <algorithm>
#include <cmath>

namespace hase::sched {

double EquivalentSpeed(const LatencyOracle& oracle, const Task& task, const GpuType& type, const GpuType& reference) {
  if (type.name == reference.name) return 1.0;
  const Result<TaskProfile> on = oracle.Profile(task, type);
  const Result<TaskProfile> ref = oracle.Profile(task, reference);
  if (on.ok() && ref.ok() && on->isolated_ms > 0 && ref->isolated_ms > 0) return ref->isolated_ms / on->isolated_ms;
  if (type.peak_fp32_tflops > 0 && reference.peak_fp32_tflops > 0) {
    return type.peak_fp32_tflops / reference.peak_fp32_tflops;
  }
  return 1.0;
}

FairShare::FairShare(const TeamConfig& config)
    : config_(config), half_life_s_(config.fair_share.half_life_s), decayed_(config.teams.size(), 0.0),
      raw_eq_s_(config.teams.size(), 0.0), gpu_s_(config.teams.size(), 0.0) {}

double FairShare::Decayed(double start_s, double end_s, double speed, double at_s) const {
  if (end_s <= start_s) return 0;
  if (half_life_s_ <= 0) return speed * (end_s - start_s);
  const double k = std::log(2.0) / half_life_s_;
  // ∫_s^e exp(−k (t − τ)) dτ = (exp(−k (t − e)) − exp(−k (t − s))) / k
  return speed * (std::exp(-k * (at_s - end_s)) - std::exp(-k * (at_s - start_s))) / k;
}

void FairShare::Charge(int team, double start_s, double end_s, double speed) {
  if (team < 0 || team >= static_cast<int>(decayed_.size()) || !(end_s > start_s) || !(speed > 0)) return;
  if (!any_) {
    ref_s_ = end_s;
    any_ = true;
  } else if (end_s > ref_s_ && half_life_s_ > 0) {  // move the reference forward: no overflow
    const double f = std::exp2(-(end_s - ref_s_) / half_life_s_);
    for (double& d : decayed_) d *= f;
    ref_s_ = end_s;
  }
  decayed_[team] += Decayed(start_s, end_s, speed, ref_s_);
  raw_eq_s_[team] += speed * (end_s - start_s);
  gpu_s_[team] += end_s - start_s;
}

std::vector<TeamUsage> FairShare::Snapshot(double now_s, const std::vector<Open>& running) const {
  const size_t n = decayed_.size();
  std::vector<TeamUsage> out(n);
  const double f = (!any_ || half_life_s_ <= 0) ? 1.0 : std::exp2(-(now_s - ref_s_) / half_life_s_);
  for (size_t i = 0; i < n; ++i) {
    out[i].usage_eq_s = decayed_[i] * f;
    out[i].raw_eq_s = raw_eq_s_[i];
    out[i].gpu_s = gpu_s_[i];
  }
  for (const Open& o : running) {
    if (o.team < 0 || o.team >= static_cast<int>(n) || now_s <= o.start_s) continue;
    out[o.team].usage_eq_s += Decayed(o.start_s, now_s, o.speed, now_s);
    out[o.team].raw_eq_s += o.speed * (now_s - o.start_s);
    out[o.team].gpu_s += now_s - o.start_s;
  }
  double total_u = 0, total_s = 0;
  for (size_t i = 0; i < n; ++i) {
    total_u += out[i].usage_eq_s;
    total_s += config_.teams[i].shares;
  }
  for (size_t i = 0; i < n; ++i) {
    if (total_u <= 0 || total_s <= 0) {
      out[i].factor = 1;
      continue;
    }
    const double u = out[i].usage_eq_s / total_u;
    const double s = config_.teams[i].shares / total_s;
    out[i].factor = std::exp2(-u / s);
  }
  return out;
}

}  // namespace hase::sched
