// `eft`: online earliest finish time. On arrival a task is sent to the GPU where the oracle
// predicts it finishes earliest, one task at a time per GPU (Policy::Options::max_tasks_per_gpu
// = 1), and waits there in FIFO order: completion = max(now, the GPU's projected finish) +
// isolated time × Slowdown(background). The classic list-scheduling rule for unrelated
// machines (the "MCT" heuristic of Braun et al., JPDC 61(6), 2001) and the simplest rule that
// uses the same predictions as hase: hase must beat it.
#pragma once

#include <memory>

#include "hase/sched/policy.h"

namespace hase::sched {

// Score = 100 × (now + fastest isolated time) / predicted completion on the GPU, running after
// everything bound or claimed there (GpuState::projected_finish_ms). O(1) per GPU.
class EarliestFinish final : public ScorePlugin {
 public:
  explicit EarliestFinish(const LatencyOracle& oracle) : oracle_(oracle) {}
  std::string_view Name() const override { return "EarliestFinish"; }
  double Score(const Task& task, const GpuState& gpu, const CycleState& cycle) const override;
  // The predicted start and completion on `gpu`, ms.
  // A GPU reserved for another task: its start unless the task ends by the shadow time.
  double StartMs(const Task& task, const GpuState& gpu, const CycleState& cycle) const;
  // Predicted run time on `gpu` under its background load, ms.
  double RunMs(const GpuState& gpu, const CycleState& cycle) const;
  double CompletionMs(const Task& task, const GpuState& gpu, const CycleState& cycle) const;

 private:
  const LatencyOracle& oracle_;
};

// Select: the best-scored GPU (earliest completion), reporting the runner-up. Dispatching
// (`claim_when_busy` false, eft): always bind there (into its local queue when busy). Central
// queue (true, min-min / max-min): bind when the task can start there now, else wait with a
// claim on it.
class EarliestFinishSelect final : public SelectPlugin {
 public:
  EarliestFinishSelect(std::shared_ptr<const EarliestFinish> eft, bool claim_when_busy)
      : eft_(std::move(eft)), claim_when_busy_(claim_when_busy) {}
  std::string_view Name() const override { return "EarliestFinishSelect"; }
  Decision Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                  const std::vector<Candidate>& candidates) override;
  size_t SortedCandidatesNeeded() const override { return 2; }

 private:
  std::shared_ptr<const EarliestFinish> eft_;
  const bool claim_when_busy_;
};

std::unique_ptr<Policy> MakeEftPolicy(std::shared_ptr<const LatencyOracle> oracle);

}  // namespace hase::sched
