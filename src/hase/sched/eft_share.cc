#include "hase/sched/eft_share.h"

#include <algorithm>

#include "hase/sched/backfill.h"
#include "hase/sched/basic_plugins.h"
#include "hase/sched/timeline.h"

namespace hase::sched {
namespace {

// Binds every task where the first candidate (the best score) says: into its local queue when
// the GPU cannot start it now (dispatching, like `eft`).
class BestScoreSelect final : public SelectPlugin {
 public:
  explicit BestScoreSelect(std::shared_ptr<const EarliestFinishSharing> score)
      : score_(std::move(score)) {}
  std::string_view Name() const override { return "BestScoreSelect"; }
  Decision Select(const Task& task, const ClusterState& state, const CycleState& cycle,
                  const std::vector<Candidate>& candidates) override {
    const GpuState& gpu = state.gpus[candidates.front().gpu];
    Decision d;
    d.kind = Decision::Kind::kBind;
    d.gpu = gpu.id;
    std::tie(d.start_ms, d.end_ms) = score_->StartEndMs(task, gpu, cycle);
    if (candidates.size() > 1) {
      const GpuState& second = state.gpus[candidates[1].gpu];
      d.runner_up_gpu = second.id;
      d.runner_up_end_ms = score_->StartEndMs(task, second, cycle).second;
    }
    return d;
  }
  size_t SortedCandidatesNeeded() const override { return 2; }

 private:
  std::shared_ptr<const EarliestFinishSharing> score_;
};

}  // namespace

std::pair<double, double> EarliestFinishSharing::StartEndMs(const Task& task, const GpuState& gpu,
                                                           const CycleState& cycle) const {
  const TaskProfile& p = *cycle.profile[gpu.type];
  const ExtraTask extra{task.id, MemoryNeedMib(task, p), p.demand, p.isolated_ms, cycle.now_ms};
  const Timeline tl = PredictTimeline(gpu, oracle_.contention(), cycle.now_ms, extra);
  return {tl.extra->start_ms, tl.extra->end_ms};
}

double EarliestFinishSharing::Score(const Task& task, const GpuState& gpu,
                                    const CycleState& cycle) const {
  const double end = StartEndMs(task, gpu, cycle).second;
  if (end <= 0) return 100;
  return std::clamp(100.0 * (cycle.now_ms + cycle.best_isolated_ms) / end, 0.0, 100.0);
}

std::unique_ptr<Policy> MakeEftSharePolicy(std::shared_ptr<const LatencyOracle> oracle) {
  Policy::Options po;
  po.dispatch_on_arrival = true;
  const LatencyOracle& o = *oracle;
  auto policy = std::make_unique<Policy>("eft-share", po, std::move(oracle));
  policy->AddPreFilter(std::make_shared<ProfilePreFilter>(o));
  policy->AddFilter(std::make_shared<CapacityFilter>());
  auto score = std::make_shared<EarliestFinishSharing>(o);
  policy->AddScore(score);
  policy->SetSelect(std::make_shared<BestScoreSelect>(score));
  return policy;
}

}  // namespace hase::sched
