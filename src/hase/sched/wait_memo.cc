#include "hase/sched/wait_memo.h"

#include <algorithm>
#include <cmath>

namespace hase::sched {

void WaitMemo::Reset(size_t num_gpus) {
  memo_.clear();
  change_seq_ = log_base_ = stamp_ = 0;
  change_log_.clear();
  gpu_changed_.assign(num_gpus, 0);
  seen_stamp_.assign(num_gpus, 0);
  changed_.clear();
}

void WaitMemo::MarkChanged(int gpu) {
  if (!policy_.options().incremental_passes) return;
  if (change_log_.size() >= (1u << 20)) {  // forget old changes: older memos decide again
    log_base_ += change_log_.size();
    change_log_.clear();
  }
  change_log_.push_back(gpu);
  gpu_changed_[gpu] = ++change_seq_;
}

std::optional<Decision> WaitMemo::Kept(int64_t key, const Task& task, const ClusterState& state, CycleState& cycle) {
  if (!policy_.options().incremental_passes) return std::nullopt;
  auto m = memo_.find(key);
  if (m == memo_.end()) return std::nullopt;
  const Decision& d = m->second.decision;
  const uint64_t seq = m->second.seq;
  constexpr uint64_t kMaxChanges = 1024;  // logged changes to look through, at most
  constexpr size_t kMaxChangedGpus = 48;   // more: deciding again is as cheap
  if (d.reserve || seq < log_base_ || change_seq_ - seq > kMaxChanges) return std::nullopt;
  if (d.start_ms <= state.now_ms + 1e-6) return std::nullopt;  // its wait is due: decide
  if ((d.gpu >= 0 && gpu_changed_[d.gpu] > seq) || (d.claim_gpu >= 0 && gpu_changed_[d.claim_gpu] > seq)) {
    return std::nullopt;
  }
  changed_.clear();
  ++stamp_;
  for (uint64_t i = seq - log_base_; i < change_log_.size(); ++i) {
    const int g = change_log_[i];
    if (seen_stamp_[g] != stamp_) {
      seen_stamp_[g] = stamp_;
      changed_.push_back(g);
      if (changed_.size() > kMaxChangedGpus) return std::nullopt;
    }
  }
  if (!policy_.StillStands(task, state, cycle, d, changed_)) return std::nullopt;
  return d;
}

void WaitMemo::Remember(int64_t key, const Result<Decision>& d, bool reused) {
  if (!policy_.options().incremental_passes) return;
  auto m = memo_.find(key);
  const bool waits = d.ok() && d->kind == Decision::Kind::kWait;
  if (!reused && waits) {
    // A new or different plan changes what later tasks see on its GPUs.
    const bool same = m != memo_.end() && m->second.decision.gpu == d->gpu &&
                      m->second.decision.claim_gpu == d->claim_gpu &&
                      std::abs(m->second.decision.claim_not_before_ms - d->claim_not_before_ms) <=
                          1e-6 * std::max(1.0, std::abs(d->claim_not_before_ms)) &&
                      !d->reserve;
    if (!same) {
      if (m != memo_.end() && m->second.decision.claim_gpu >= 0) MarkChanged(m->second.decision.claim_gpu);
      if (d->claim_gpu >= 0) MarkChanged(d->claim_gpu);
      if (d->reserve && d->gpu >= 0) MarkChanged(d->gpu);
    }
  }
  if (waits) {
    memo_[key] = {*d, change_seq_};
  } else if (m != memo_.end()) {
    if (m->second.decision.claim_gpu >= 0) MarkChanged(m->second.decision.claim_gpu);
    memo_.erase(m);
  }
}

}  // namespace hase::sched
