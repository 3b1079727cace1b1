#include "hase/service/calibration.h"

#include <algorithm>

namespace hase::service {

Result<sched::TaskProfile> CalibratedOracle::Profile(const sched::Task& task, const sched::GpuType& type) const {
  Result<sched::TaskProfile> p = base_->Profile(task, type);
  if (!p.ok()) return p;
  const double f = Factor(task.model, type.name);
  p->isolated_ms *= f;
  p->isolated_p10_ms *= f;
  p->isolated_p90_ms *= f;
  return p;
}

double CalibratedOracle::Factor(const std::string& model, const std::string& type) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find({model, type});
  return it != entries_.end() && it->second.applied() ? it->second.factor : 1.0;
}

std::optional<CalibratedOracle::Entry> CalibratedOracle::Observe(const sched::Task& task, const sched::GpuType& type,
                                                                 double real_s, double predicted_s,
                                                                 double placed_isolated_ms) {
  if (!(real_s >= 1e-3) || !(predicted_s >= 1e-3)) return std::nullopt;
  // The factor the placement's price carried: its isolated_ms over the uncorrected one.
  double used = 1.0;
  if (placed_isolated_ms > 0) {
    Result<sched::TaskProfile> base = base_->Profile(task, type);
    if (base.ok() && base->isolated_ms > 0) used = placed_isolated_ms / base->isolated_ms;
  }
  const double ratio = std::clamp(real_s / predicted_s * used, kMinFactor, kMaxFactor);
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[{task.model, type.name}];
  const double applied_before = e.applied() ? e.factor : 1.0;
  e.model = task.model;
  e.type = type.name;
  e.factor = e.samples == 0 ? ratio : (1 - kWeight) * e.factor + kWeight * ratio;
  e.factor = std::clamp(e.factor, kMinFactor, kMaxFactor);
  e.last_ratio = ratio;
  ++e.samples;
  if ((e.applied() ? e.factor : 1.0) != applied_before) ++generation_;
  return e;
}

std::vector<CalibratedOracle::Entry> CalibratedOracle::Entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Entry> out;
  for (const auto& [k, e] : entries_) out.push_back(e);
  return out;
}

}  // namespace hase::service
