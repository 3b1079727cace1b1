#include "hase/sim/queue_eta.h"

#include <limits>

#include "hase/sched/queue_plan.h"

namespace hase::sim {

void QueueEtaProbe::AfterInstant(const sched::ClusterState& state, const std::vector<int>& waiting) {
  if (!error_.ok() || next_ > 3) return;
  if (next_ > 0 && state.now_ms < next_ * 0.25 * eta_ms_[0]) return;
  std::vector<sched::Task> queue;
  queue.reserve(waiting.size());
  for (int id : waiting) queue.push_back(tasks_[id]);
  Result<std::unique_ptr<sched::Policy>> policy = make_policy_();
  if (!policy.ok()) return void(error_ = policy.status());
  sched::QueuePlanOptions po;
  po.budget_ms = std::numeric_limits<double>::infinity();  // deterministic: decisions only
  po.max_decisions = kMaxDecisions;
  Result<sched::QueuePlan> plan = sched::PlanQueue(state, **policy, queue, po);
  if (!plan.ok()) return void(error_ = plan.status());
  eta_ms_[next_] = plan->eta_ms;
  if (next_ == 0) {
    eta_.planned_at_s = state.now_ms / 1000.0;
    eta_.eta_s = plan->eta_ms / 1000.0;
    eta_.complete = plan->complete;
  } else {
    eta_.at_s[next_ - 1] = state.now_ms / 1000.0;
  }
  ++next_;
}

Result<QueueEta> QueueEtaProbe::Finish(double makespan_ms) const {
  HASE_RETURN_IF_ERROR(error_);
  QueueEta out = eta_;
  if (makespan_ms <= 0) return out;
  auto err = [&](double eta_ms) { return std::abs(eta_ms - makespan_ms) / makespan_ms; };
  if (!std::isnan(eta_ms_[0])) out.error = err(eta_ms_[0]);
  for (int k = 0; k < 3; ++k) {
    if (!std::isnan(eta_ms_[k + 1])) out.error_at[k] = err(eta_ms_[k + 1]);
  }
  return out;
}

}  // namespace hase::sim
