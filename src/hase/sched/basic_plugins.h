// Plugins most policies share: the oracle PreFilter, capacity and fits-now Filters, the
// default Bind, and the GPU-id helpers. Each is a small class named after what it does.
#pragma once

#include <limits>
#include <string_view>

#include "hase/sched/framework.h"

namespace hase::sched {

// The memory `task` needs with `profile` (Task::memory_mib when set, else the profile's), MiB.
inline double MemoryNeedMib(const Task& task, const TaskProfile& profile) {
  return task.memory_mib > 0 ? task.memory_mib : profile.memory_mib;
}

// PreFilter: asks the oracle for the task's profile on every GPU type, once per cycle.
// Errors only when no type has a profile (the first type's error is returned, with context).
class ProfilePreFilter final : public PreFilterPlugin {
 public:
  explicit ProfilePreFilter(const LatencyOracle& oracle) : oracle_(oracle) {}
  std::string_view Name() const override { return "ProfilePreFilter"; }
  Status PreFilter(const Task& task, const ClusterState& state, CycleState& cycle) const override;

 private:
  const LatencyOracle& oracle_;  // owned by the Policy, which outlives its plugins' use
};

// Filter: UnfitAnywhere when the oracle has no profile for the GPU's type or the task needs
// more memory than the GPU has. Dispatching policies need nothing more.
class CapacityFilter final : public FilterPlugin {
 public:
  std::string_view Name() const override { return "CapacityFilter"; }
  FilterVerdict Filter(const Task& task, const GpuState& gpu,
                       const CycleState& cycle) const override;
};

// Filter: Unfit unless the task can start now (a free slot, enough free memory, empty local
// queue) and the GPU is not reserved for another task. Implies nothing about capacity: list
// CapacityFilter first.
class FitsNowFilter final : public FilterPlugin {
 public:
  std::string_view Name() const override { return "FitsNowFilter"; }
  FilterVerdict Filter(const Task& task, const GpuState& gpu,
                       const CycleState& cycle) const override;
};

// Bind: running when it fits now, else the back of the GPU's local queue. Remaining work is
// the profile's isolated_ms; progress_rate starts at 0 (the driver observes it).
class DefaultBind final : public BindPlugin {
 public:
  std::string_view Name() const override { return "DefaultBind"; }
  void Bind(const Task& task, const Decision& decision, const CycleState& cycle,
            ClusterState& state) override;
};

// Reserve: records the reservation on decision.gpu and in ClusterState::reservation_of_task.
class DefaultReserve final : public ReservePlugin {
 public:
  std::string_view Name() const override { return "DefaultReserve"; }
  void Reserve(const Task& task, const Decision& decision, const CycleState& cycle,
               ClusterState& state) const override;
  void Unreserve(const Task& task, ClusterState& state) const override;
};

}  // namespace hase::sched
