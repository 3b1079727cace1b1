#include "hase/sched/cluster_state.h"

namespace hase::sched {

ClusterState::ClusterState(const Cluster& c) : cluster(c) {
  gpus.reserve(c.gpus.size());
  for (const Gpu& g : c.gpus) {
    GpuState s;
    s.id = g.id;
    s.type = g.type;
    s.memory_mib = g.memory_mib;
    s.max_tasks = g.max_tasks;
    gpus.push_back(std::move(s));
  }
  finish_ms.assign(gpus.size(), 0.0);
  for (const GpuState& s : gpus) finish_index_.insert({0.0, s.id});
}

void ClusterState::SetProjectedFinish(int gpu, double finish) {
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
