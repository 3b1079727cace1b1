#include "hase/sched/cluster_state.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace hase::sched {

ClusterState::ClusterState(const Cluster& c, int max_tasks_cap) : cluster(c) {
  auto slots = [&](const Gpu& g) {
    return max_tasks_cap > 0 ? std::min(g.max_tasks, max_tasks_cap) : g.max_tasks;
  };
  gpus.reserve(c.gpus.size());
  for (const Gpu& g : c.gpus) {
    GpuState s;
    s.id = g.id;
    s.type = g.type;
    s.memory_mib = g.memory_mib;
    s.max_tasks = slots(g);
    gpus.push_back(std::move(s));
  }
  finish_ms.assign(gpus.size(), 0.0);
  for (const GpuState& s : gpus) finish_index_.insert({0.0, s.id});
  class_of_.assign(gpus.size(), -1);
  filed_.assign(gpus.size(), Filed{});
  std::map<std::tuple<int, double, int>, int> by_key;
  for (const Gpu& g : c.gpus) {
    const auto key = std::make_tuple(g.type, g.memory_mib, slots(g));
    auto [it, added] = by_key.emplace(key, static_cast<int>(classes_.size()));
    if (added) {
      GpuClass k;
      k.type = g.type;
      k.memory_mib = g.memory_mib;
      k.max_tasks = slots(g);
      classes_.push_back(std::move(k));
    }
    class_of_[g.id] = it->second;
    classes_[it->second].gpus.push_back(g.id);
  }
  for (const GpuState& s : gpus) Reindex(s.id);
}

void ClusterState::Reindex(int gpu) {
  GpuClass& k = classes_[class_of_[gpu]];
  const GpuState& g = gpus[gpu];
  // Where the GPU belongs now.
  Filed n;
  const bool has_slot = g.queued.empty() && static_cast<int>(g.running.size()) < g.max_tasks &&
                        g.memory_mib > 0;
  n.counted_open = has_slot;
  if (g.memory_mib != k.memory_mib || g.max_tasks != k.max_tasks ||
      g.background.EffectiveSmActive() != 0) {
    n.irregular = true;
  } else {
    n.open = has_slot;
    if (g.Idle()) {
      n.idle = true;
    } else {
      n.finish = true;
      n.finish_key = finish_ms[gpu];
      if (has_slot && g.claims.empty()) {
        n.share = true;
        n.share_key = g.TotalDemand();
      }
    }
  }
  // Move it, touching only the sets whose membership or key changed.
  Filed& f = filed_[gpu];
  if (f.irregular != n.irregular) {
    if (n.irregular) irregular_.insert(gpu); else irregular_.erase(gpu);
  }
  if (f.idle != n.idle) {
    if (n.idle) k.idle.insert(gpu); else k.idle.erase(gpu);
  }
  if (f.open != n.open) {
    if (n.open) k.open.insert(gpu); else k.open.erase(gpu);
  }
  if (f.counted_open != n.counted_open) open_count_ += n.counted_open ? 1 : -1;
  if (f.finish != n.finish || (n.finish && f.finish_key != n.finish_key)) {
    if (f.finish) k.by_finish.erase({f.finish_key, gpu});
    if (n.finish) k.by_finish.insert({n.finish_key, gpu});
  }
  if (f.share != n.share || (n.share && f.share_key != n.share_key)) {
    if (f.share) k.shareable.erase({f.share_key, gpu});
    if (n.share) k.shareable.insert({n.share_key, gpu});
  }
  f = n;
}

void ClusterState::SetProjectedFinish(int gpu, double finish) {
  if (finish_ms[gpu] == finish) return;
  finish_index_.erase({finish_ms[gpu], gpu});
  finish_ms[gpu] = finish;
  finish_index_.insert({finish, gpu});
}

double ClusterState::MaxProjectedFinishExcluding(int gpu) const {
  for (auto it = finish_index_.rbegin(); it != finish_index_.rend(); ++it) {
    if (it->second != gpu) return it->first;
  }
  return now_ms;
}

double ClusterState::MaxProjectedFinish() const {
  return finish_index_.empty() ? now_ms : finish_index_.rbegin()->first;
}

void ClusterState::AddClaim(int gpu, const QueuedTask& claim) {
  if (gpus[gpu].claims.empty()) claimed_gpus_.push_back(gpu);
  gpus[gpu].claims.push_back(claim);
}

std::vector<int> ClusterState::ClearClaims() {
  std::vector<int> out;
  out.swap(claimed_gpus_);
  for (int g : out) gpus[g].claims.clear();
  return out;
}

int ClusterState::ReservedGpuOf(int task_id) const {
  auto it = reservation_of_task.find(task_id);
  return it == reservation_of_task.end() ? -1 : it->second;
}

}  // namespace hase::sched
