// The daemon's what-if (whatif.h): the live plan's input, copied under the lock as PlanLocked
// copies it, with GPUs added, GPUs drained and tasks submitted in the copy only. Part of Daemon
// (daemon.h).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/service/daemon.h"
#include "hase/service/daemon_internal.h"

namespace hase::service {
namespace {

std::string ListOf(const std::vector<std::string>& names, size_t most = 12) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < most; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > most) s += fmt::format(", ... ({} in all)", names.size());
  return s;
}

// The GPU type `name` stands for: the cluster's own (exact name), else the catalog's entry for
// any spelling it accepts (through a one-GPU cluster file, so it is resolved exactly as a
// cluster file's `type:` is). Errors: NotFound naming the cluster's types.
Result<sched::GpuType> ResolveType(const sched::Cluster& cluster, const GpuCatalog* catalog, const std::string& name,
                                   const std::string& where) {
  if (int t = cluster.TypeIndex(name); t >= 0) return cluster.types[t];
  std::vector<std::string> have;
  for (const sched::GpuType& t : cluster.types) have.push_back(t.name);
  std::string catalog_hint;
  if (catalog) {
    const std::string yaml = "nodes:\n  - name: x\n    gpus:\n      - {type: " + nlohmann::json(name).dump() + "}\n";
    Result<sched::Cluster> one = sched::ParseClusterYaml(yaml, where, *catalog);
    if (one.ok() && !one->types.empty()) return one->types.front();
    if (!one.ok()) catalog_hint = one.status().hint();
  }
  return Status::NotFound("unknown GPU type '" + name + "'", where,
                          "the cluster has " + ListOf(have) +
                              (catalog ? (catalog_hint.empty() ? "" : "; the catalog: " + catalog_hint)
                                       : " (the daemon has no GPU catalog for other types)"));
}

}  // namespace

Result<WhatIfResult> Daemon::PlanWhatIf(const WhatIf& w) const {
  WhatIfResult out;
  // 1. Resolve everything that does not need the live state.
  std::vector<std::string> node_names;
  for (const sched::Gpu& g : cluster_.gpus) {
    if (node_names.empty() || node_names.back() != g.node) node_names.push_back(g.node);
  }
  std::set<int> drain;
  for (const std::string& n : w.drain_nodes) {
    bool any = false;
    for (const sched::Gpu& g : cluster_.gpus) {
      if (g.node == n) drain.insert(g.id), any = true;
    }
    if (!any) return Status::NotFound("no node '" + n + "'", "drain_nodes", "the cluster's nodes: " + ListOf(node_names));
  }
  for (const std::string& s : w.drain_gpus) {
    int found = -1;
    for (const sched::Gpu& g : cluster_.gpus) {
      if (std::to_string(g.id) == s || cluster_.GpuLabel(g.id) == s) found = g.id;
    }
    if (found < 0) {
      return Status::NotFound("no GPU '" + s + "'", "drain_gpus",
                              fmt::format("give a GPU id 0..{} or a label such as '{}' (GET /v1/gpus)",
                                          cluster_.gpus.size() - 1, cluster_.GpuLabel(0)));
    }
    drain.insert(found);
  }
  // The cluster with the added GPUs (appended: ids after the live ones).
  auto cluster = std::make_unique<sched::Cluster>(cluster_);
  std::map<std::string, int> next_index;
  for (const sched::Gpu& g : cluster_.gpus) {
    next_index[g.node] = std::max(next_index[g.node], g.index + 1);
  }
  for (size_t k = 0; k < w.add_gpus.size(); ++k) {
    const WhatIfGpus& a = w.add_gpus[k];
    const std::string where = fmt::format("add_gpus[{}] field 'type'", k);
    HASE_ASSIGN_OR_RETURN(sched::GpuType type, ResolveType(*cluster, options_.catalog.get(), a.type, where));
    if (!type.mig_profile.empty()) {
      return Status::InvalidArgument("'" + a.type + "' is a MIG instance type", where,
                                     "add the whole GPU type; a what-if does not partition GPUs");
    }
    int t = cluster->TypeIndex(type.name);
    if (t < 0) {
      t = static_cast<int>(cluster->types.size());
      cluster->types.push_back(type);
    }
    // Co-location limit: that of the cluster's GPUs of the type, else of GPU 0.
    int max_tasks = a.max_tasks;
    for (const sched::Gpu& g : cluster_.gpus) {
      if (max_tasks <= 0 && g.type == t) max_tasks = g.max_tasks;
    }
    if (max_tasks <= 0) max_tasks = cluster_.gpus.empty() ? 4 : cluster_.gpus.front().max_tasks;
    for (int i = 0; i < a.count; ++i) {
      sched::Gpu g;
      g.id = static_cast<int>(cluster->gpus.size());
      g.node = a.node;
      g.index = next_index[a.node]++;
      g.type = t;
      g.memory_mib = type.memory_mib;
      g.max_tasks = max_tasks;
      cluster->gpus.push_back(g);
    }
  }
  if (Status s = cluster->Validate(); !s.ok()) return s.WithContext("add_gpus");
  // Submitted tasks, as Submit checks them (refused here for what Submit refuses).
  std::vector<TaskSpec> specs;
  specs.reserve(w.submit.size());
  for (size_t k = 0; k < w.submit.size(); ++k) {
    const std::string where = fmt::format("submit[{}]", k);
    Result<TaskSpec> spec = WithInputShape(w.submit[k]);
    if (!spec.ok()) return spec.status().WithContext(where);
    if (spec->runtime.empty()) spec->runtime = options_.default_runtime;
    if (spec->gpus != 1) {
      return Status::Unsupported(fmt::format("gpus: {}: hase places each task on one GPU", spec->gpus), where);
    }
    TaskRecord probe;
    probe.spec = *spec;
    if (Status s = CheckPredictable(probe.ToSchedTask()); !s.ok()) {
      return internal::UnpredictableModel(*spec, s, DeclaredShapeText(spec->model)).WithContext(where);
    }
    specs.push_back(std::move(*spec));
  }

  // 2. Copy the live state (as PlanLocked does) and change the copy.
  LivePlanInput base, in;
  {
    std::lock_guard<std::mutex> lock(mu_);
    base = PlanInputLocked();
    for (const auto& [id, st] : base.placed_state) out.placed_models[id] = tasks_.at(id).spec.model;
    in = PlanInputLocked();
    in.queue.clear();  // remade below from the changed queue
    const bool grown = cluster->gpus.size() > cluster_.gpus.size();
    if (grown) {
      in.state = std::make_unique<sched::ClusterState>(*cluster);
      sched::ClusterState& s = *in.state;
      s.now_ms = state_.now_ms;
      s.reservation_of_task = state_.reservation_of_task;
      for (size_t g = 0; g < state_.gpus.size(); ++g) {
        s.gpus[g] = state_.gpus[g];
        // Claims go through AddClaim, so that the plan's first BeginPass clears them as it
        // clears the live state's (a copied GpuState alone would keep them past it).
        s.gpus[g].claims.clear();
        for (const sched::QueuedTask& q : state_.gpus[g].claims) s.AddClaim(static_cast<int>(g), q);
        s.SetProjectedFinish(static_cast<int>(g), state_.finish_ms[g]);
        s.Reindex(static_cast<int>(g));
      }
      for (size_t g = cluster_.gpus.size(); g < cluster->gpus.size(); ++g) {
        policy_->OnGpuChanged(s, static_cast<int>(g));
        in.foreign_mib.push_back(0);
        in.catalog_mib.push_back(cluster->gpus[g].memory_mib);
        PlanGpu p{static_cast<int>(g), cluster->gpus[g].node, cluster->gpus[g].index,
                  cluster->types[cluster->gpus[g].type].name};
        out.added.push_back(p);
      }
    }
    std::set<QueueKey> queue = queue_;
    std::map<int64_t, TaskRecord> extra;  // re-queued and submitted records (copies)
    // Drains, as DrainGpuLocked without requeue: bound tasks go back to the queue.
    sched::ClusterState& s = *in.state;
    for (int g : drain) {
      sched::GpuState& gs = s.gpus[g];
      for (const sched::QueuedTask& q : gs.queued) {
        TaskRecord r = tasks_.at(q.task_id);
        r.state = TaskState::kQueued;
        r.gpu = r.gpu_index = -1;
        queue.insert(KeyOf(r));
        in.placed_state.erase(r.id);
        out.requeued.push_back(r.id);
        extra[r.id] = std::move(r);
      }
      gs.queued.clear();
      if (gs.reservation) {
        auto it = s.reservation_of_task.find(gs.reservation->task_id);
        if (it != s.reservation_of_task.end() && it->second == g) s.reservation_of_task.erase(it);
      }
      gs.memory_mib = -1;  // as HoldGpuLocked: every Filter rejects it
      sched::Reservation phantom;
      phantom.task_id = internal::kFailedGpuTaskId;
      phantom.start_ms = internal::kInf;
      gs.reservation = phantom;
      policy_->OnGpuChanged(s, g);
      in.failed_gpus.insert(g);
      const sched::Gpu& cg = cluster_.gpus[g];
      out.drained.push_back(PlanGpu{g, cg.node, cg.index, cluster_.types[cg.type].name});
    }
    // Submitted tasks: ids after the daemon's, submitted now, in the daemon's queue order.
    int64_t next = tasks_.empty() ? 1 : tasks_.rbegin()->first + 1;
    const double now = Now();
    for (TaskSpec& spec : specs) {
      TaskRecord r;
      r.id = next++;
      r.spec = std::move(spec);
      r.state = TaskState::kQueued;
      r.submitted_s = now;
      queue.insert(KeyOf(r));
      out.submitted.push_back(r.id);
      extra[r.id] = std::move(r);
    }
    in.queue.reserve(queue.size());
    for (const QueueKey& k : queue) {
      const int64_t id = std::get<3>(k);
      auto e = extra.find(id);
      in.queue.push_back(e != extra.end() ? e->second.ToSchedTask() : tasks_.at(id).ToSchedTask());
    }
  }
  // 3. Plan both outside the lock (each within the plan budget).
  HASE_ASSIGN_OR_RETURN(out.baseline, BuildLivePlan(base));
  HASE_ASSIGN_OR_RETURN(out.plan, BuildLivePlan(in));
  return out;
}

}  // namespace hase::service
