// AnalyticTruth: the policies' own predictions, perturbed the way real predictions are wrong.
//
//   true isolated_ms(task, g) = predicted isolated_ms × exp(sigma × z(model, g))
//   Slowdown(i, S, b, g)      = 1 + e_b + (s − 1 − e_b) × Σ_j w_j × exp(pair_sigma × z(model_i, model_j, g))
//     with s = ContentionModel s(u_i, b + Σ_j u_j), e_b = s(u_i, b) − 1 (the background's share,
//     not perturbed) and w_j = u_j / Σ_j u_j (each co-runner's share of the rest)
//
// z are standard normal values derived by hashing (seed, model names, GPU type): the same
// (model, GPU type) is always wrong the same way within a run, as a predictor is, and results
// do not depend on the order tasks are simulated in. sigma defaults to 0.15 (a lognormal with
// sigma 0.15 has a mean absolute percentage error of ~12 %, the order of the analytic
// predictor's MAPE reported in docs/predictor.md; the public HASE predictor reached ~17 %).
// pair_sigma (0.185) is the spread (std of log) of Gavel's measured pair slowdowns around the
// fitted contention model, median over K80/P100/V100 (data/interference_calibration.txt). sigma = pair_sigma = 0 gives a perfect oracle.
#pragma once

#include <cstdint>
#include <memory>

#include "hase/sched/latency_oracle.h"
#include "hase/sim/truth_model.h"

namespace hase::sim {

struct AnalyticTruthOptions {
  uint64_t seed = 1;
  double sigma = 0.15;       // lognormal spread of isolated-runtime error
  double pair_sigma = 0.185;  // lognormal spread of pairwise interference around the model
};

class AnalyticTruth final : public TruthModel {
 public:
  AnalyticTruth(std::shared_ptr<const sched::LatencyOracle> oracle, AnalyticTruthOptions options)
      : oracle_(std::move(oracle)), options_(options) {}
  std::string Name() const override { return "analytic"; }
  Result<TrueProfile> Profile(const sched::Task& task, const sched::GpuType& type) const override;
  double Slowdown(const sched::Task& victim, double victim_demand, const CoRunners& others,
                  double background, const sched::GpuType& type) const override;
  const sched::ContentionModel& contention() const override { return oracle_->contention(); }

 private:
  const std::shared_ptr<const sched::LatencyOracle> oracle_;
  const AnalyticTruthOptions options_;
};

// A standard normal value determined by (seed, a, b, c): FNV-1a over the strings, splitmix64,
// Box–Muller on two derived uniforms. Exposed for tests.
double HashedNormal(uint64_t seed, const std::string& a, const std::string& b = "",
                    const std::string& c = "");

}  // namespace hase::sim
