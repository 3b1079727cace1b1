// `random`: each arriving task goes to a uniformly random GPU that could ever host it
// (seeded std::mt19937_64; the index is drawn as engine() % n so results match everywhere).
// It joins that GPU's local queue when the GPU is busy.
#pragma once

#include <cstdint>
#include <memory>
#include <random>

#include "hase/sched/policy.h"

namespace hase::sched {

class RandomSelect final : public SelectPlugin {
 public:
  explicit RandomSelect(uint64_t seed) : rng_(seed) {}
  std::string_view Name() const override { return "RandomSelect"; }
  Decision Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                  const std::vector<Candidate>& candidates) override;

 private:
  std::mt19937_64 rng_;
};

std::unique_ptr<Policy> MakeRandomPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                         uint64_t seed);

}  // namespace hase::sched
