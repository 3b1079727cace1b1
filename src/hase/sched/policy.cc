#include "hase/sched/policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "hase/sched/timeline.h"

namespace hase::sched {
namespace {

// The most memory any GPU offers as the policy sees it (GpuState::memory_mib: the catalog's,
// less what the daemon knows is used outside hase), MiB: what a reject must quote, since that
// is what Filter compared the need with.
double LargestCapacityMib(const ClusterState& state) {
  double m = 0;
  for (const GpuState& g : state.gpus) m = std::max(m, g.memory_mib);
  return m;
}

}  // namespace


Result<Decision> Policy::Schedule(const Task& task, const ClusterState& state, CycleState& cycle) {
  cycle.now_ms = state.now_ms;
  if (cycle.profiled_task != task.id || pre_filters_.empty()) {
    cycle.profiled_task = -1;
    for (const auto& p : pre_filters_) {
      HASE_RETURN_IF_ERROR(p->PreFilter(task, state, cycle));
    }
    cycle.profiled_task = task.id;
  }
  cycle.candidates_complete = true;
  if (task.split && options_.split_batches && !splitting_) {
    splitting_ = true;  // the policy's own one-GPU choice first (this function, once more)
    Result<Decision> own = Schedule(task, state, cycle);
    splitting_ = false;
    if (!own.ok() || own->kind == Decision::Kind::kReject) return own;
    const double own_end = own->end_ms > 0 ? own->end_ms : std::numeric_limits<double>::infinity();
    if (std::optional<Decision> split = DecideSplit(task, state, cycle, own_end)) {
      split->runner_up_gpu = own->gpu;
      split->runner_up_end_ms = own->end_ms;
      return *split;
    }
    return own;
  }
  if (task.gpus > 1) {
    return DecideGang(task, state, cycle, oracle_->contention(), options_.gang, options_.dispatch_on_arrival, name_);
  }
  if (rank_ && select_ && rank_->Rank(task, state, cycle, candidates_) && !candidates_.empty()) {
    return select_->Select(task, state, cycle, candidates_);
  }
  cycle.candidates_complete = true;
  candidates_.clear();
  std::vector<char> seen_idle(state.classes().size(), 0);
  std::vector<const char*> never_reasons;  // distinct UnfitAnywhere reasons
  bool unfit_now = false;
  for (const GpuState& gpu : state.gpus) {
    if (options_.one_idle_gpu_per_type && gpu.Idle() && !gpu.reservation &&
        gpu.background.EffectiveSmActive() == 0) {
      // Interchangeable: same class (type, memory, slots) as filed in the Cluster, and the
      // GpuState still has that memory (the daemon zeroes a failed GPU's).
      const int k = state.ClassOf(gpu.id);
      const ClusterState::GpuClass& c = state.classes()[k];
      if (gpu.memory_mib == c.memory_mib && gpu.max_tasks == c.max_tasks) {
        if (seen_idle[k]) continue;
        seen_idle[k] = 1;
      }
    }
    FilterVerdict v;
    for (const auto& f : filters_) {
      v = f->Filter(task, gpu, cycle);
      if (!v.fits()) break;
    }
    switch (v.code) {
      case FilterVerdict::Code::kFits:
        break;
      case FilterVerdict::Code::kUnfit:
        unfit_now = true;
        continue;
      case FilterVerdict::Code::kUnfitAnywhere:
        if (std::find(never_reasons.begin(), never_reasons.end(), v.reason) ==
            never_reasons.end()) {
          never_reasons.push_back(v.reason);
        }
        continue;
      case FilterVerdict::Code::kError:
        return Status::Internal(fmt::format("filter failed on GPU {}: {}", gpu.id, v.reason),
                                "task " + task.name);
    }
    double score = 0;
    for (const auto& [plugin, weight] : scores_) score += weight * plugin->Score(task, gpu, cycle);
    candidates_.push_back({gpu.id, score});
  }
  if (candidates_.empty()) {
    Decision d;
    if (!unfit_now) {
      d.kind = Decision::Kind::kReject;
      double need = 0;
      for (const auto& p : cycle.profile) {
        if (p.ok()) need = std::max(need, MemoryNeedMib(task, *p));
      }
      std::string why;
      for (const char* r : never_reasons) why += (why.empty() ? "" : "; ") + std::string(r);
      d.reason = fmt::format(
          "task {} ({}) can never run on this cluster: {} (needs {:.0f} MiB; largest GPU has "
          "{:.0f} MiB)",
          task.name, task.model, why.empty() ? "no GPU" : why, need, LargestCapacityMib(state));
    } else {
      d.kind = Decision::Kind::kWait;
      d.reason = "no GPU can take it now";
    }
    return d;
  }
  const auto better = [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score > b.score : a.gpu < b.gpu;
  };
  if (select_) {
    const size_t k = std::min(candidates_.size(), select_->SortedCandidatesNeeded());
    if (k >= candidates_.size()) {
      std::sort(candidates_.begin(), candidates_.end(), better);
    } else {
      std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<long>(k),
                        candidates_.end(), better);
    }
    return select_->Select(task, state, cycle, candidates_);
  }
  // Only the best is used: one linear pass instead of a sort.
  Decision d;
  d.kind = Decision::Kind::kBind;
  d.gpu = std::min_element(candidates_.begin(), candidates_.end(), better)->gpu;
  d.start_ms = state.now_ms;
  return d;
}

std::optional<Price> Policy::PriceOn(const Task& task, const ClusterState& state, const CycleState& cycle,
                                     int gpu, bool exact) const {
  if (!select_ || gpu < 0 || gpu >= static_cast<int>(state.gpus.size())) return std::nullopt;
  for (const auto& f : filters_) {
    if (!f->Filter(task, state.gpus[gpu], cycle).fits()) return std::nullopt;
  }
  return select_->PriceOn(task, state.gpus[gpu], cycle, exact);
}

void Policy::Commit(const Task& task, const Decision& decision, const CycleState& cycle,
                    ClusterState& state) {
  if (task.gpus > 1 || !decision.gpus.empty()) {  // gang.h: the plugins see one-GPU decisions only
    std::vector<int> touched = decision.gpus;
    if (auto it = state.gang_of_task.find(task.id); it != state.gang_of_task.end()) {
      touched.insert(touched.end(), it->second.begin(), it->second.end());
    }
    switch (decision.kind) {
      case Decision::Kind::kBind:
        if (const int held = state.ReservedGpuOf(task.id); held >= 0) touched.push_back(held);
        UnreserveGang(task.id, state);
        if (reserve_) reserve_->Unreserve(task, state);  // a split task's one-GPU reservation
        BindGang(task, decision, cycle, state);
        break;
      case Decision::Kind::kWait:
        if (decision.reserve && !decision.gpus.empty() &&
            (state.ReservedGpuOf(task.id) >= 0 ||
             static_cast<int>(state.reservation_of_task.size()) < options_.max_reservations)) {
          ReserveGang(task, decision, cycle, state);
        }
        break;
      case Decision::Kind::kReject:
        UnreserveGang(task.id, state);
        break;
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int g : touched) OnGpuChanged(state, g);
    return;
  }
  switch (decision.kind) {
    case Decision::Kind::kBind: {
      const int held = state.ReservedGpuOf(task.id);
      if (reserve_) reserve_->Unreserve(task, state);
      if (bind_) {
        bind_->Bind(task, decision, cycle, state);
      } else {
        default_bind_.Bind(task, decision, cycle, state);
      }
      OnGpuChanged(state, decision.gpu);
      if (held >= 0 && held != decision.gpu) OnGpuChanged(state, held);
      break;
    }
    case Decision::Kind::kWait:
      if (options_.claim_on_wait && decision.gpu >= 0 && decision.claim_gpu >= 0) {
        const GpuState& g = state.gpus[decision.claim_gpu];
        const Result<TaskProfile>& p = cycle.profile[g.type];
        if (p.ok()) {
          state.AddClaim(decision.claim_gpu,
                         {task.id, MemoryNeedMib(task, *p), p->demand, p->isolated_ms,
                          decision.claim_not_before_ms});
          OnGpuChanged(state, decision.claim_gpu);
        }
      }
      if (decision.reserve && reserve_ && decision.gpu >= 0) {
        const bool holds = state.ReservedGpuOf(task.id) >= 0;
        if (holds || static_cast<int>(state.reservation_of_task.size()) <
                         options_.max_reservations) {
          reserve_->Reserve(task, decision, cycle, state);
        }
      }
      break;
    case Decision::Kind::kReject:
      if (reserve_) reserve_->Unreserve(task, state);
      break;
  }
}

bool Policy::StillStands(const Task& task, const ClusterState& state, CycleState& cycle,
                         const Decision& last, const std::vector<int>& changed) const {
  if (!options_.incremental_passes || !select_ || last.kind != Decision::Kind::kWait || task.gpus > 1 || task.split ||
      cycle.profiled_task != task.id) {
    return false;
  }
  cycle.now_ms = state.now_ms;
  return select_->StillStands(task, state, cycle, last, changed);
}

void Policy::BeginPass(ClusterState& state) const {
  for (int g : state.ClearClaims()) OnGpuChanged(state, g);
}

bool Policy::PassSettled(const ClusterState& state, bool gang_waiting) const {
  if (state.open_gpus() > 0) return false;
  if (gang_waiting && options_.gang != GangRule::kRefuse && !options_.dispatch_on_arrival &&
      static_cast<int>(state.reservation_of_task.size()) < options_.max_reservations) {
    return false;
  }
  return !reserve_ ||
         static_cast<int>(state.reservation_of_task.size()) >= options_.max_reservations;
}

double Policy::QueueKey(const Task& task, const Cluster& cluster) const {
  if (options_.queue_order.kind == QueueOrder::Kind::kArrival) return 0;
  double fastest = std::numeric_limits<double>::infinity();
  for (const GpuType& type : cluster.types) {
    const Result<TaskProfile> p = oracle_->Profile(task, type);
    if (p.ok()) fastest = std::min(fastest, GangIsolatedMs(task, p->isolated_ms));  // k GPUs: its run on them
  }
  if (!std::isfinite(fastest)) fastest = 0;  // rejected anyway; keep arrival order
  return QueueKeyOf(options_.queue_order, fastest, task.arrival_ms);
}

void Policy::Forget(const Task& task, ClusterState& state) {
  UnreserveGang(task.id, state);
  if (reserve_) {
    reserve_->Unreserve(task, state);
  } else {
    DefaultReserve().Unreserve(task, state);
  }
}

void Policy::OnGpuChanged(ClusterState& state, int gpu) const {
  const GpuState& g = state.gpus.at(gpu);
  const double finish = g.Idle() ? state.now_ms
                                 : PredictTimeline(g, oracle_->contention(), state.now_ms).finish_ms;
  state.SetProjectedFinish(gpu, finish);
  state.gpus[gpu].projected_finish_ms = finish;
  state.Reindex(gpu);
}

}  // namespace hase::sched
