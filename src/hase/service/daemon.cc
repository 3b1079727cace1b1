// The daemon's core: queue, policy passes, launches, the journal. What backends report (ends,
// node health) and GPU/node failures are in daemon_reconcile.cc; what it reports (views,
// /metrics, why) in daemon_report.cc; placements asked from outside the queue (the extender's
// filter/bind, /v1/advise) in daemon_external.cc.
#include "hase/service/daemon.h"

#include "hase/sched/gang.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "hase/sched/basic_plugins.h"
#include "hase/sched/quota.h"
#include "hase/sched/team_queue.h"
#include "hase/sched/team_reclaim.h"
#include "hase/sched/registry.h"
#include "hase/sched/timeline.h"
#include "hase/service/cluster_record.h"
#include "hase/service/daemon_internal.h"
#include "hase/service/local_backend.h"
#include "hase/service/task_json.h"

namespace hase::service {
namespace {

using internal::kInf;
using internal::UnpredictableModel;

// RefreshGpusLocked: an overrunning task is assumed to need this × its overrun more.
constexpr double kOverrunRemainingFraction = 0.5;

DaemonOptions WithDefaults(DaemonOptions o) {
  if (!o.now_s) o.now_s = telemetry::WallClockSeconds;
  if (!o.logger) {
    o.logger = std::make_shared<spdlog::logger>("hase", std::make_shared<spdlog::sinks::null_sink_mt>());
    o.logger->set_level(spdlog::level::off);  // nothing formatted for nobody
  }
  return o;
}

// The background a policy should see: DCGM's reading minus what hase's own running tasks
// explain (DCGM measures them too). Activity fields only; memory and clock are kept.
LoadSnapshot SubtractOwn(LoadSnapshot s, double own_demand) {
  auto sub = [&](std::optional<double>& f) {
    if (f) f = std::max(0.0, *f - own_demand);
  };
  const double before = s.EffectiveSmActive();
  sub(s.sm_active);
  sub(s.gr_engine_active);
  sub(s.gpu_util);
  if (s.sm_occupancy && before > 0) *s.sm_occupancy *= s.EffectiveSmActive() / before;
  return s;
}

}  // namespace

Result<std::unique_ptr<Daemon>> Daemon::Create(sched::Cluster cluster,
                                               std::shared_ptr<const sched::LatencyOracle> oracle,
                                               DaemonOptions options,
                                               const telemetry::LoadSource* scraper,
                                               std::unique_ptr<Backend> backend) {
  HASE_RETURN_IF_ERROR(cluster.Validate());
  if (!oracle) return Status::InvalidArgument("no latency oracle");
  options = WithDefaults(std::move(options));
  {  // a policy that runs one task at a time per GPU (eft, min-min, max-min) caps the slots
    sched::PolicyConfig probe;
    probe.oracle = oracle;
    probe.cluster = &cluster;
    probe.hase.objective = options.objective;
    HASE_ASSIGN_OR_RETURN(std::unique_ptr<sched::Policy> p, sched::MakePolicy(options.policy, probe));
    if (const int cap = p->options().max_tasks_per_gpu; cap > 0) {
      for (sched::Gpu& g : cluster.gpus) g.max_tasks = std::min(g.max_tasks, cap);
    }
  }
  HASE_ASSIGN_OR_RETURN(std::unique_ptr<TaskStore> store, TaskStore::Open(options.state_dir, options.store));
  if (!backend && options.executor) {
    backend = std::make_unique<LocalBackend>(LocalBackendOptions{
        (std::filesystem::path(options.state_dir) / "exec").string(), options.executor_node, 0.05});
  }
  std::unique_ptr<Daemon> d(new Daemon(std::move(cluster), std::move(oracle), std::move(options), scraper,
                                       std::move(store), std::move(backend)));
  sched::PolicyConfig pc;
  pc.oracle = d->oracle_;
  pc.cluster = &d->cluster_;
  pc.hase.objective = d->options_.objective;
  HASE_ASSIGN_OR_RETURN(d->policy_, sched::MakePolicy(d->options_.policy, pc));
  return d;
}

Daemon::Daemon(sched::Cluster cluster, std::shared_ptr<const sched::LatencyOracle> oracle,
               DaemonOptions options, const telemetry::LoadSource* scraper,
               std::unique_ptr<TaskStore> store, std::unique_ptr<Backend> backend)
    : cluster_(std::move(cluster)),
      mig_decls_(DeclaredMigInstances(cluster_)),
      oracle_(std::make_shared<CalibratedOracle>(std::move(oracle))),
      calibration_(std::const_pointer_cast<CalibratedOracle>(
          std::static_pointer_cast<const CalibratedOracle>(oracle_))),
      options_(std::move(options)),
      load_(scraper),
      store_(std::move(store)),
      backend_(std::move(backend)),
      epoch_s_(options_.now_s()),
      state_(cluster_),
      live_(cluster_.gpus.size()) {}

Daemon::~Daemon() { Stop(); }

const std::string& Daemon::policy_name() const { return options_.policy; }

bool Daemon::ExecutesOn(int gpu) const { return backend_ && backend_->RunsOn(cluster_.gpus[gpu]); }

bool Daemon::LaunchableLocked(const TaskRecord& r) const {
  if (r.gpu < 0 || !ExecutesOn(r.gpu) || binding_.count(r.id)) return false;
  // A pod is started by binding it (only a pod backend can); a command by running it (a pod
  // backend refuses it with an error that fails the task, rather than leave it running).
  return r.spec.pod.empty() ? !r.spec.command.empty() : backend_->RunsPods();
}

Result<sched::TaskProfile> Daemon::ProfileOnLocked(const TaskRecord& r, int gpu) const {
  const sched::GpuType& type = cluster_.types[cluster_.gpus[gpu].type];
  return oracle_->Profile(r.ToSchedTask(), type);
}

sched::CycleState Daemon::CycleForLocked(const sched::Task& t) const {
  sched::CycleState c;
  c.now_ms = state_.now_ms;
  c.best_isolated_ms = kInf;
  for (const sched::GpuType& type : cluster_.types) {
    c.profile.push_back(oracle_->Profile(t, type));
    if (c.profile.back().ok()) c.best_isolated_ms = std::min(c.best_isolated_ms, c.profile.back()->isolated_ms);
  }
  return c;
}

Status Daemon::Start() {
  HASE_ASSIGN_OR_RETURN(std::vector<TaskRecord> all, store_->LoadAll());
  std::unique_lock<std::mutex> lock(mu_);
  quarantined_ = store_->quarantined_total();
  if (const auto q = store_->quarantined(); !q.empty()) {
    first_quarantine_ = "task " + std::to_string(q.front().id) + ": " + q.front().reason;
    std::fprintf(stderr, "hase serve: %zu journal row(s) quarantined; first %s\n", q.size(),
                 first_quarantine_.c_str());
  }
  const double now = Now();
  state_.now_ms = ToMs(now);
  std::vector<int64_t> changed;
  std::vector<TaskRecord*> bound;
  // The GPU each row names, in the cluster file now (cluster_record.h): ids renumber when GPUs
  // are removed or reordered, and a GPU declared another type is not the one that ran the task.
  HASE_ASSIGN_OR_RETURN(const std::optional<ClusterRecord> before, ClusterRecord::Load(options_.state_dir));
  std::set<int64_t> elsewhere;  // ended on a GPU the file lacks now: no calibration from them
  std::vector<std::string> stranded;
  for (TaskRecord& r : all) {
    if (r.gpu < 0) continue;
    int g = ResolveGpu(cluster_, before ? &*before : nullptr, r.gpu, r.node, r.gpu_index);
    // A k-GPU task: every GPU of its gang, or none.
    std::vector<std::pair<int, int>> gang;  // (new id, index on the node)
    for (size_t i = 0; g >= 0 && i < r.gang.size() && i < r.gang_indices.size(); ++i) {
      const int m = ResolveGpu(cluster_, before ? &*before : nullptr, r.gang[i], r.node, r.gang_indices[i]);
      if (m < 0) g = -1;
      gang.push_back({m, r.gang_indices[i]});
    }
    bool moved = g != r.gpu;
    for (size_t i = 0; g >= 0 && i < gang.size(); ++i) moved = moved || gang[i].first != r.gang[i];
    if (!moved) continue;
    if (g >= 0) {
      r.gpu = g;
      if (!gang.empty()) {  // ascending ids, indices alongside; gpu is the first
        std::sort(gang.begin(), gang.end());
        r.gang.clear();
        r.gang_indices.clear();
        for (const auto& [id, index] : gang) {
          r.gang.push_back(id);
          r.gang_indices.push_back(index);
        }
        r.gpu = r.gang.front();
        r.gpu_index = r.gang_indices.front();
      }
      if (!IsTerminal(r.state)) changed.push_back(r.id);
    } else if (IsTerminal(r.state)) {
      elsewhere.insert(r.id);
    } else if (r.state == TaskState::kRunning) {
      stranded.push_back(fmt::format("task {} on {} GPU {}", r.id, r.node, r.gpu_index));
    } else {
      r.gpu = -1;  // bound, not started: re-queued below
      r.gang.clear();
      r.gang_indices.clear();
    }
  }
  if (!stranded.empty()) {
    return Status::InvalidArgument(
        fmt::format("the journal has {} running task(s) on GPUs this cluster file lacks or declares another type "
                    "({}{}); re-queueing them would run them twice",
                    stranded.size(), stranded.front(), stranded.size() > 1 ? ", ..." : ""),
        "--config", "restart with the cluster file they started under and let them end (or cancel them), then change it");
  }
  for (TaskRecord& r : all) tasks_[r.id] = r;
  {  // calibration (calibration.h) from what ran before, in end order, before anything is priced
    std::vector<const TaskRecord*> done;
    for (const auto& [id, r] : tasks_) {
      if (r.state == TaskState::kSucceeded && !elsewhere.count(id)) done.push_back(&r);
    }
    std::sort(done.begin(), done.end(), [](const TaskRecord* a, const TaskRecord* b) {
      return std::tie(a->ended_s, a->id) < std::tie(b->ended_s, b->id);
    });
    for (const TaskRecord* r : done) CalibrateLocked(*r, /*log=*/false);
    for (const CalibratedOracle::Entry& e : calibration_->Entries()) {
      options_.logger->info("calibrate model={} type={} factor={:.4f} samples={} applied={} (from the journal)",
                            e.model, e.type, e.factor, e.samples, e.applied());
    }
  }
  for (auto& [id, r] : tasks_) {
    if (IsTerminal(r.state)) continue;
    const bool placed = r.state == TaskState::kBound || r.state == TaskState::kRunning;
    if (placed && (r.gpu < 0 || r.gpu >= static_cast<int>(cluster_.gpus.size()) ||
                   !ProfileOnLocked(r, r.gpu).ok())) {
      r.state = TaskState::kQueued;  // its GPU is gone from the cluster file
      r.gpu = r.gpu_index = -1;
      r.gang.clear();
      r.gang_indices.clear();
      r.node.clear();
      r.reason = "re-queued at restart: its GPU is no longer in the cluster";
      changed.push_back(id);
    }
    if (r.state == TaskState::kQueued) {
      queue_.insert(KeyOf(r));
    } else if (r.state == TaskState::kBound) {
      bound.push_back(&r);
    } else if (!r.gang.empty()) {  // a running k-GPU task holds all its GPUs alone (sched/gang.h)
      const sched::TaskProfile p = *ProfileOnLocked(r, r.gpu);
      for (int g : r.gang) {
        if (g < 0 || g >= static_cast<int>(cluster_.gpus.size())) continue;
        sched::RunningTask rt;
        rt.task_id = static_cast<int>(id);
        rt.memory_mib = state_.gpus[g].memory_mib;
        rt.demand = p.demand;
        rt.started_ms = ToMs(r.started_s);
        rt.remaining_ms = sched::GangIsolatedMs(r.ToSchedTask(), p.isolated_ms);
        rt.as_of_ms = state_.now_ms;
        rt.gang = static_cast<int>(r.gang.size());
        state_.gpus[g].running.push_back(rt);
      }
    } else {  // running
      const sched::TaskProfile p = *ProfileOnLocked(r, r.gpu);
      sched::RunningTask rt;
      rt.task_id = static_cast<int>(id);
      rt.memory_mib = r.spec.memory_mib > 0 ? r.spec.memory_mib : p.memory_mib;
      rt.demand = p.demand;
      rt.started_ms = ToMs(r.started_s);
      rt.remaining_ms = p.isolated_ms;
      rt.as_of_ms = state_.now_ms;
      state_.gpus[r.gpu].running.push_back(rt);
    }
  }
  std::sort(bound.begin(), bound.end(), [](const TaskRecord* a, const TaskRecord* b) {
    return std::tie(a->placed_s, a->id) < std::tie(b->placed_s, b->id);
  });
  for (TaskRecord* r : bound) {
    const sched::TaskProfile p = *ProfileOnLocked(*r, r->gpu);
    if (!r->gang.empty()) {  // queued on all its GPUs; starts when it heads all their queues
      for (int g : r->gang) {
        sched::QueuedTask q{static_cast<int>(r->id), state_.gpus[g].memory_mib, p.demand,
                            sched::GangIsolatedMs(r->ToSchedTask(), p.isolated_ms)};
        q.gang = static_cast<int>(r->gang.size());
        state_.gpus[g].queued.push_back(q);
      }
      state_.gang_of_task[static_cast<int>(r->id)] = r->gang;
      continue;
    }
    state_.gpus[r->gpu].queued.push_back({static_cast<int>(r->id),
                                          r->spec.memory_mib > 0 ? r->spec.memory_mib : p.memory_mib, p.demand,
                                          p.isolated_ms});
  }
  RecoverLaunchesLocked(lock, now, changed);  // launches that outlived the previous daemon
  for (size_t g = 0; g < cluster_.gpus.size(); ++g) policy_->OnGpuChanged(state_, static_cast<int>(g));
  HASE_RETURN_IF_ERROR(PersistLocked(changed));
  if (Status saved = ClusterRecord::Of(cluster_).Save(options_.state_dir); !saved.ok()) {
    options_.logger->warn("{}", saved.ToString());
  }
  LaunchLocked(changed);
  LaunchPendingLocked(lock);
  stop_ = false;
  dirty_ = true;
  if (backend_) {
    backend_->SetStartCallback([this](int64_t id, int attempt, const TaskStart& s) { OnStart(id, attempt, s); });
    HASE_RETURN_IF_ERROR(backend_->Start(
        [this](int64_t id, int attempt, const TaskEnd& end) { OnEnd(id, attempt, end); },
        [this](const std::string& node, NodeCondition c, const std::string& reason) { OnNode(node, c, reason); }));
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::OK();
}

void Daemon::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (backend_) backend_->Stop();
}

void Daemon::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::duration<double>(options_.tick_s),
                 [this] { return stop_ || dirty_ || !pending_launches_.empty(); });
    if (stop_) break;
    dirty_ = false;
    PassLocked(Now());
    LaunchPendingLocked(lock);
    PlanLocked(lock);  // daemon_plan.cc
    // Let submitters and readers in between passes.
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
}

void Daemon::RunPassForTest() {
  std::unique_lock<std::mutex> lock(mu_);
  PassLocked(Now());
  LaunchPendingLocked(lock);
  PlanLocked(lock, /*wait=*/true);
}

void Daemon::RefreshGpusLocked(double now) {
  const double now_ms = ToMs(now);
  // Calibration (calibration.h): running tasks are stretched while any factor applies (O(running
  // tasks) per pass); bound tasks are re-priced only when a factor changed (rr binds thousands).
  const uint64_t generation = calibration_->generation();
  const bool calibrated = generation != 0;
  const bool recalibrated = generation != calibration_seen_;
  calibration_seen_ = generation;
  for (size_t g = 0; g < state_.gpus.size(); ++g) {
    sched::GpuState& gs = state_.gpus[g];
    double own = 0, own_mib = 0;
    for (sched::RunningTask& rt : gs.running) {
      own += rt.demand;
      own_mib += rt.memory_mib;
      const TaskRecord& r = tasks_.at(rt.task_id);
      // Calibration (calibration.h) learned since the placement stretches the whole run: its
      // isolated time is the oracle's now, its run time the placement's × the same ratio.
      double isolated = r.predicted_isolated_ms > 0 ? r.predicted_isolated_ms : rt.remaining_ms;
      double stretch = 1.0;
      if (calibrated && r.predicted_isolated_ms > 0) {
        if (const Result<sched::TaskProfile> p = ProfileOnLocked(r, static_cast<int>(g)); p.ok() && p->isolated_ms > 0) {
          stretch = p->isolated_ms / r.predicted_isolated_ms;
          isolated = p->isolated_ms;
        }
      }
      const double predicted_ms = (r.predicted_end_s - r.predicted_start_s) * 1000.0 * stretch;
      const double elapsed_ms = now_ms - ToMs(r.started_s);
      double done = predicted_ms > 0 ? elapsed_ms / predicted_ms : 0.0;
      done = std::clamp(done, 0.0, 0.99);  // at least 1 % of the work is left while it runs
      rt.remaining_ms = isolated * (1.0 - done);
      if (predicted_ms > 0 && elapsed_ms > predicted_ms) {
        // Overrunning, with no progress signal: expected to need half its overrun again (a
        // growing estimate, so a GPU running an overdue task is not taken as about to free
        // on every pass while other GPUs idle). A heuristic, not a fit.
        rt.remaining_ms = std::max(rt.remaining_ms, kOverrunRemainingFraction *
                                                        (elapsed_ms - predicted_ms) * isolated /
                                                        predicted_ms);
      }
      rt.as_of_ms = now_ms;
      rt.progress_rate = 0;
    }
    for (sched::QueuedTask& q : gs.queued) {  // bound, not started: priced as the oracle does now
      if (!recalibrated) break;
      if (const Result<sched::TaskProfile> p = ProfileOnLocked(tasks_.at(q.task_id), static_cast<int>(g)); p.ok()) {
        q.isolated_ms = p->isolated_ms;
      }
    }
    gs.background = LoadSnapshot::Idle();
    LiveGpu& live = live_[g];
    std::vector<int> ids;
    for (const sched::RunningTask& rt : gs.running) ids.push_back(rt.task_id);
    std::sort(ids.begin(), ids.end());
    if (ids != live.own) {
      // hase's own load changed: when the newest task started or the last one left ended
      // (readings older than that + load_settle_s mix the old own load in).
      for (int id : ids) {
        if (!std::binary_search(live.own.begin(), live.own.end(), id)) {
          live.own_changed_s = std::max(live.own_changed_s, tasks_.at(id).started_s);
        }
      }
      for (int id : live.own) {
        if (std::binary_search(ids.begin(), ids.end(), id)) continue;
        auto it = tasks_.find(id);
        const double ended = it != tasks_.end() && it->second.ended_s > 0 ? it->second.ended_s : now;
        live.own_changed_s = std::max(live.own_changed_s, ended);
      }
      live.own = std::move(ids);
    }
    const sched::Gpu& gpu = cluster_.gpus[g];
    std::optional<telemetry::GpuObservation> obs;
    if (load_) obs = LiveObservation(load_->table(), cluster_, mig_decls_, static_cast<int>(g), now);
    if (!obs || obs->fields == 0 || obs->load.age_s > options_.load_max_age_s) {
      live.load_used = live.settling = false;  // none, or too old: analytic-only
      live.foreign_mib = 0;
      live.dcgm_used_mib = -1;
    } else if (obs->sample_time_s < live.own_changed_s + options_.load_settle_s) {
      // The reading overlaps a start or end of hase's own tasks here (the exporter's collect
      // interval, a Prometheus window): it would count an ended task as foreign load and
      // memory. The foreign part derived from the last reading before stands in (if any).
      live.settling = live.load_used;
    } else {
      live.load_used = true;
      live.settling = false;
      live.background = SubtractOwn(obs->load, own);
      // Memory DCGM sees in use beyond hase's own running tasks is foreign (see daemon.h). Both
      // readings, when present, bound what is in use; the larger bound wins (memory the
      // driver reserves shows as neither used nor free).
      std::optional<double> used = obs->load.fb_used_mib;
      if (obs->load.fb_free_mib) used = std::max(used.value_or(0.0), gpu.memory_mib - *obs->load.fb_free_mib);
      live.dcgm_used_mib = used.value_or(-1.0);
      live.foreign_mib = used ? std::max(0.0, *used - own_mib) : 0.0;
    }
    if (live.load_used) gs.background = live.background;
    if (!failed_gpus_.count(static_cast<int>(g))) gs.memory_mib = gpu.memory_mib - live.foreign_mib;
    policy_->OnGpuChanged(state_, static_cast<int>(g));
  }
}

void Daemon::PassLocked(double now) {
  state_.now_ms = ToMs(now);
  FollowPodDevicesLocked(now);  // pods on the GPU they really got (daemon_external.cc)
  RefreshGpusLocked(now);
  // A journal that cannot take the last changes takes no placement either.
  if (!FlushUnsyncedLocked().ok()) return;
  // A failed write with nothing left to write (a refused submit): /healthz recovers by itself
  // once a write works again.
  if (!journal_error_.empty() && unsynced_.empty()) {
    if (Status st = store_->Probe(); st.ok()) {
      options_.logger->info("journal writable again: {}", store_->path());
      journal_error_.clear();
    } else {
      journal_error_ = st.ToString();
      return;
    }
  }
  ExpireLeasesLocked(now);
  policy_->BeginPass(state_);  // the previous pass's claims plan nothing any more
  std::vector<int64_t> changed;
  std::map<int64_t, TaskRecord> before;  // as journalled, for RevertLocked
  const int max_offers = std::max(1, options_.max_cycles_per_pass);
  int offered = 0;
  // Teams (docs/teams.md): the pass offers tasks in the order of sched::TeamQueue, as
  // `hase simulate` and the live plan do: a team below its guarantee first, then the higher
  // head priority, then the higher fair-share factor, each team's tasks in queue order; a team
  // at its max_gpus is not offered (its tasks wait with the quota's reason), and borrowers'
  // reservations yield to a reclaiming team (sched/team_reclaim.h). The ledger counts what is
  // bound or running now and this pass's binds. Without teams the first max_offers queued
  // tasks are offered in queue order.
  std::optional<sched::QuotaLedger> quota;
  std::optional<sched::TeamQueue> team_order;
  quota_held_.clear();
  std::vector<QueueKey> order;
  if (options_.teams.enabled()) {
    quota.emplace(options_.teams);
    for (const auto& [tid, tr] : tasks_) {
      if (tr.state == TaskState::kBound || tr.state == TaskState::kRunning) quota->Hold(options_.teams.Find(tr.spec.team));
    }
    // A pass offers at most max_offers tasks: of each team only its first max_offers can be
    // offered (plus any reservation holder, for the reservation rule).
    std::vector<sched::TeamQueue::Item> items, yield_items;
    std::vector<int> ids, yield_ids;
    std::vector<int> per_team(options_.teams.teams.size() + 1, 0);
    for (const QueueKey& k : queue_) {
      const TaskRecord& tr = tasks_.at(std::get<3>(k));
      const int team = options_.teams.Find(tr.spec.team);
      int& n = per_team[static_cast<size_t>(team + 1)];
      const bool holder = state_.reservation_of_task.count(static_cast<int>(tr.id)) > 0;
      if (n < max_offers) {
        ++n;
        order.push_back(k);
        items.push_back({team, tr.spec.priority});
        ids.push_back(static_cast<int>(tr.id));
      } else if (holder) {
        yield_items.push_back({team, tr.spec.priority});
        yield_ids.push_back(static_cast<int>(tr.id));
      }
    }
    yield_items.insert(yield_items.begin(), items.begin(), items.end());
    yield_ids.insert(yield_ids.begin(), ids.begin(), ids.end());
    std::vector<double> factors;
    for (const TeamUsageView& u : UsageLocked(now)) factors.push_back(u.fair_share);
    sched::YieldReservationsToTeamOrder(state_, *policy_, *quota, factors, yield_items, yield_ids);
    team_order.emplace(*quota, std::move(factors), items);
  } else {
    for (auto q = queue_.begin(); q != queue_.end() && static_cast<int>(order.size()) < max_offers; ++q) order.push_back(*q);
  }
  size_t in_order = 0;
  auto next = [&]() -> int {
    if (team_order) return team_order->Next();
    return in_order < order.size() ? static_cast<int>(in_order++) : -1;
  };
  for (int k; offered < max_offers && (k = next()) >= 0; ++offered) {
    const int64_t id = std::get<3>(order[k]);
    TaskRecord& r = tasks_.at(id);
    const sched::Task t = r.ToSchedTask();
    sched::CycleState cycle;
    const auto t0 = std::chrono::steady_clock::now();
    Result<sched::Decision> d = policy_->Schedule(t, state_, cycle);
    if (!d.ok()) {
      before.emplace(id, r);
      metrics_.ObserveDecision("reject", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      r.reason = d.status().ToString();
      options_.logger->info("reject task={} model={} reason=\"{}\"", id, r.spec.model, r.reason);
      FinishLocked(r, TaskState::kRejected, 0, now);
      changed.push_back(id);
      queue_.erase(order[k]);
      continue;
    }
    sched::Decision dec = *d;
    if (dec.kind == sched::Decision::Kind::kReject && !failed_gpus_.empty()) {
      dec.kind = sched::Decision::Kind::kWait;  // a failed GPU may come back
      dec.reserve = false;
      dec.reason = "no healthy GPU can host it now: it waits for a failed GPU to recover";
    } else if (dec.kind == sched::Decision::Kind::kReject && FitsSomeCatalogGpuLocked(cycle, t)) {
      dec.kind = sched::Decision::Kind::kWait;  // memory in use by others (DCGM) may be freed
      dec.reserve = false;
      dec.reason = MemoryWaitReasonLocked(t, cycle);
    }
    if (dec.kind == sched::Decision::Kind::kBind) RecordWhyLocked(r, t, cycle, dec, now);
    policy_->Commit(t, dec, cycle, state_);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    switch (dec.kind) {
      case sched::Decision::Kind::kBind: {
        before.emplace(id, r);
        metrics_.ObserveDecision("bind", secs);
        const sched::Gpu& gpu = cluster_.gpus[dec.gpu];
        r.gpu = dec.gpu;
        r.node = gpu.node;
        r.gpu_index = gpu.index;
        r.placed_s = now;
        r.predicted_start_s = ToS(dec.start_ms);
        r.predicted_end_s = ToS(dec.end_ms);
        const auto& p = cycle.profile[gpu.type];
        r.predicted_isolated_ms = p.ok() ? sched::GangIsolatedMs(t, p->isolated_ms) : 0;
        r.gang = dec.gpus;  // a k-GPU task: all k (sched/gang.h)
        r.gang_indices.clear();
        for (int g : r.gang) r.gang_indices.push_back(cluster_.gpus[g].index);
        ++r.attempts;
        r.reason.clear();
        const auto& running = state_.gpus[dec.gpu].running;
        const bool started = std::any_of(running.begin(), running.end(),
                                         [&](const sched::RunningTask& rt) { return rt.task_id == t.id; });
        r.state = started ? TaskState::kRunning : TaskState::kBound;
        if (started) r.started_s = now;
        r.pid = 0;
        changed.push_back(id);
        LogBindLocked(r, now);
        if (quota) quota->Hold(options_.teams.Find(r.spec.team));
        queue_.erase(order[k]);
        break;
      }
      case sched::Decision::Kind::kWait:
        metrics_.ObserveDecision("wait", secs);
        if (dec.gpu >= 0) {  // the GPU it waits for, by node name and the node's own index
          dec.reason += fmt::format(" (GPU {}/{})", cluster_.gpus[dec.gpu].node, cluster_.gpus[dec.gpu].index);
        }
        if (r.reason != dec.reason) {
          options_.logger->debug("wait task={} model={} reason=\"{}\"", id, r.spec.model, dec.reason);
        }
        r.reason = dec.reason;  // shown by GET; not journalled (it changes every pass)
        
        break;
      case sched::Decision::Kind::kReject:
        before.emplace(id, r);
        metrics_.ObserveDecision("reject", secs);
        options_.logger->info("reject task={} model={} reason=\"{}\"", id, r.spec.model, dec.reason);
        r.reason = dec.reason;
        FinishLocked(r, TaskState::kRejected, 0, now);
        changed.push_back(id);
        queue_.erase(order[k]);
        break;
    }
  }
  // The queued tasks of a team at its maximum were not offered: they wait with the quota's
  // reason (QuotaHoldOf; O(teams), not O(queue), per pass).
  if (quota) {
    for (size_t team = 0; team < options_.teams.teams.size(); ++team) {
      if (std::optional<sched::QuotaHold> hold = quota->Check(static_cast<int>(team))) quota_held_[static_cast<int>(team)] = *hold;
    }
  }
  // More queued tasks than one pass offers: continue soon (after letting others in).
  if (offered == max_offers && static_cast<int>(queue_.size()) > 0 &&
      policy_->options().dispatch_on_arrival) {
    dirty_ = true;
  }
  Status st = PersistLocked(changed);
  if (!st.ok()) {
    // The journal is the source of truth; a failed write must not let a process start.
    std::fprintf(stderr, "hase serve: journal write failed, placements undone: %s\n", st.ToString().c_str());
    RevertLocked(before);
    return;
  }
  LaunchLocked(changed);
}

void Daemon::RevertLocked(const std::map<int64_t, TaskRecord>& before) {
  for (const auto& [id, old] : before) {
    TaskRecord& r = tasks_.at(id);
    if (r.state == TaskState::kBound || r.state == TaskState::kRunning) RemoveFromGpuLocked(r);
    r = old;
    if (r.state == TaskState::kQueued) queue_.insert(KeyOf(r));
    unsynced_.erase(id);
  }
}

Status Daemon::FlushUnsyncedLocked() {
  if (unsynced_.empty()) return Status::OK();
  const std::vector<int64_t> ids(unsynced_.begin(), unsynced_.end());
  unsynced_.clear();
  HASE_RETURN_IF_ERROR(PersistLocked(ids));  // failed: back in unsynced_
  LaunchLocked(ids);
  return Status::OK();
}

LaunchRequest Daemon::LaunchRequestLocked(const TaskRecord& r) const {
  LaunchRequest q;
  q.task_id = r.id;
  q.attempt = r.attempts;
  q.command = r.spec.command;
  if (const int team = options_.teams.Find(r.spec.team); options_.teams.enabled() && team >= 0) {
    q.account = options_.teams.teams[team].slurm_account;
  }
  q.node = r.node;
  q.gpu_index = r.gpu_index;
  q.visible_devices = std::to_string(r.gpu_index);
  if (!r.gang.empty()) {  // a k-GPU task: sbatch --gres=gpu:TYPE:k, CUDA_VISIBLE_DEVICES=i,j,...
    q.gpus = static_cast<int>(r.gang.size());
    q.visible_devices.clear();
    for (size_t i = 0; i < r.gang_indices.size(); ++i) q.visible_devices += (i ? "," : "") + std::to_string(r.gang_indices[i]);
  }
  if (r.gpu >= 0) {
    q.gpu_type = cluster_.types[cluster_.gpus[r.gpu].type].name;
    if (cluster_.gpus[r.gpu].is_mig()) {
      // A MIG instance: only its own MIG-… UUID names it to CUDA (the GPU index shows the
      // GPU's first instance). "" when telemetry does not report one (LaunchRequest).
      q.visible_devices.clear();
      if (load_) {
        const std::optional<telemetry::GpuObservation> obs =
            LiveObservation(load_->table(), cluster_, mig_decls_, r.gpu, Now());
        if (obs && !obs->mig_uuid.empty()) q.visible_devices = obs->mig_uuid;
      }
    }
  }
  q.pod = r.spec.pod;
  q.pod_uid = PodUidOfKey(r.spec.key);
  return q;
}

void Daemon::LaunchLocked(const std::vector<int64_t>& ids) {
  bool queued = false;
  for (int64_t id : ids) {
    const TaskRecord& r = tasks_.at(id);
    if (r.state != TaskState::kRunning || r.pid != 0 || !LaunchableLocked(r)) continue;
    pending_launches_[id] = LaunchRequestLocked(r);
    queued = true;
  }
  if (queued) cv_.notify_all();  // the scheduler thread launches them (LaunchPendingLocked)
}

namespace {
// Executor::Spawn's errors before fork (executor.h): no process exists, retrying is safe.
bool NothingStarted(const Status& st) {
  return st.IsIO() && (st.message().rfind("cannot write the pid file", 0) == 0 || st.message().rfind("fork failed", 0) == 0);
}
}  // namespace

void Daemon::LaunchPendingLocked(std::unique_lock<std::mutex>& lock) {
  while (backend_ && !pending_launches_.empty()) {
    std::map<int64_t, LaunchRequest> batch;
    batch.swap(pending_launches_);
    std::vector<Result<int64_t>> handles;
    if (backend_->ReportsStarts()) {
      for (const auto& [id, q] : batch) awaiting_start_.insert(id);  // before a start can be reported
    }
    lock.unlock();  // a launch may take a Slurm round trip; submitters and readers go on
    for (const auto& [id, q] : batch) handles.push_back(backend_->Launch(q));
    lock.lock();
    std::vector<int64_t> changed;
    size_t i = 0;
    for (const auto& [id, q] : batch) {
      Result<int64_t>& handle = handles[i++];
      auto it = tasks_.find(id);
      if (it == tasks_.end() || it->second.state != TaskState::kRunning || it->second.attempts != q.attempt ||
          it->second.pid != 0) {
        if (handle.ok()) backend_->Cancel(id, q.attempt);  // cancelled or re-queued meanwhile
        continue;
      }
      TaskRecord& r = it->second;
      if (!handle.ok() && NothingStarted(handle.status())) {
        // The local executor could not claim the task's pid file (full disk) or fork: nothing
        // ran, so it waits for the next pass (≥ tick_s later) instead of failing.
        RequeueTaskLocked(r, handle.status().ToString());
      } else if (!handle.ok()) {
        r.reason = handle.status().ToString();
        RemoveFromGpuLocked(r);
        FinishLocked(r, TaskState::kFailed, -1, Now());
        dirty_ = true;
      } else {
        r.pid = *handle;
        if (awaiting_start_.count(id)) {  // its start not reported yet (a Slurm job may pend)
          r.reason = internal::NotStartedNote(backend_->Name(), *handle);
        }
      }
      changed.push_back(id);
    }
    // The handle is a hint for people and for Recover; recovery finds launches by name too.
    (void)PersistLocked(changed);
  }
}

void Daemon::RemoveFromGpuLocked(const TaskRecord& r) {
  if (r.gpu < 0) return;
  auto pred_r = [&](const sched::RunningTask& x) { return x.task_id == r.id; };
  auto pred_q = [&](const sched::QueuedTask& x) { return x.task_id == r.id; };
  std::vector<int> gpus = r.gang.empty() ? std::vector<int>{r.gpu} : r.gang;
  for (int id : gpus) {
    if (id < 0 || id >= static_cast<int>(state_.gpus.size())) continue;
    sched::GpuState& g = state_.gpus[id];
    g.running.erase(std::remove_if(g.running.begin(), g.running.end(), pred_r), g.running.end());
    g.queued.erase(std::remove_if(g.queued.begin(), g.queued.end(), pred_q), g.queued.end());
  }
  state_.gang_of_task.erase(static_cast<int>(r.id));
  policy_->Forget(r.ToSchedTask(), state_);
  for (int id : gpus) {
    if (id < 0 || id >= static_cast<int>(state_.gpus.size())) continue;
    policy_->OnGpuChanged(state_, id);
    if (id != r.gpu) promote_also_.push_back(id);
  }
}

void Daemon::PromoteLocked(int gpu, double now, std::vector<int64_t>& changed) {
  std::vector<int> gpus{gpu};
  gpus.insert(gpus.end(), promote_also_.begin(), promote_also_.end());
  promote_also_.clear();
  for (int id : gpus) {
    sched::GpuState& g = state_.gpus[id];
    while (const std::optional<sched::QueuedTask> q = g.StartNextQueued(ToMs(now))) {
      TaskRecord& r = tasks_.at(q->task_id);
      r.state = TaskState::kRunning;
      r.started_s = now;
      r.pid = 0;
      changed.push_back(r.id);
    }
    // A k-GPU task heading the queue starts once it heads all its GPUs' queues (sched/gang.h).
    const int head = g.queued.empty() ? -1 : g.queued.front().task_id;
    const std::vector<int> started = sched::StartGangIfReady(state_, id, ToMs(now));
    if (!started.empty()) {
      TaskRecord& r = tasks_.at(head);
      r.state = TaskState::kRunning;
      r.started_s = now;
      r.pid = 0;
      changed.push_back(r.id);
      for (int s : started) policy_->OnGpuChanged(state_, s);
    }
    policy_->OnGpuChanged(state_, id);
  }
}

void Daemon::FinishLocked(TaskRecord& r, TaskState s, int exit_code, double now) {
  pending_launches_.erase(r.id);
  awaiting_start_.erase(r.id);
  r.state = s;
  r.exit_code = exit_code;
  r.ended_s = now;
  r.pid = 0;
  metrics_.CountFinished(TaskStateName(s));
  if (s == TaskState::kSucceeded) CalibrateLocked(r, /*log=*/true);
}

void Daemon::CalibrateLocked(const TaskRecord& r, bool log) {
  if (r.gpu < 0 || r.gpu >= static_cast<int>(cluster_.gpus.size()) || r.started_s <= 0 || r.ended_s <= 0) return;
  const sched::GpuType& type = cluster_.types[cluster_.gpus[r.gpu].type];
  const double before = calibration_->Factor(r.spec.model, type.name);
  const std::optional<CalibratedOracle::Entry> e =
      calibration_->Observe(r.ToSchedTask(), type, r.ended_s - r.started_s, r.predicted_end_s - r.predicted_start_s,
                            r.predicted_isolated_ms);
  if (!e || !log) return;
  const double after = calibration_->Factor(r.spec.model, type.name);
  if (after != before) {
    options_.logger->info("calibrate model={} type={} factor={:.4f} was={:.4f} samples={} task={} real_s={:.3f} "
                          "predicted_s={:.3f} ratio={:.4f}",
                          r.spec.model, type.name, after, before, e->samples, r.id, r.ended_s - r.started_s,
                          r.predicted_end_s - r.predicted_start_s, e->last_ratio);
  }
}

Status Daemon::PersistLocked(const std::vector<int64_t>& ids) {
  if (ids.empty()) return Status::OK();
  std::vector<TaskRecord> rows;
  rows.reserve(ids.size());
  for (int64_t id : ids) rows.push_back(tasks_.at(id));
  Status st = store_->Update(rows);
  if (!st.ok()) {
    ++journal_failures_;
    journal_error_ = st.ToString();
    unsynced_.insert(ids.begin(), ids.end());
  } else if (unsynced_.empty()) {
    journal_error_.clear();
  }
  return st;
}

Result<TaskStore::Inserted> Daemon::Submit(const TaskSpec& submitted) {
  HASE_ASSIGN_OR_RETURN(TaskSpec spec, WithInputShape(submitted));
  if (spec.runtime.empty()) spec.runtime = options_.default_runtime;
  HASE_RETURN_IF_ERROR(ResolveTeam(spec));
  // Refused at the door, before anything is journalled: what could never be placed.
  if (spec.gpus > 1) {  // k GPUs of one type on one node (sched/gang.h)
    if (policy_->options().gang == sched::GangRule::kRefuse) {
      return Status::Unsupported(fmt::format("gpus: {}: policy '{}' places each task on one GPU", spec.gpus,
                                             policy_->name()),
                                 "gpus", "run hase serve with --policy hase (or eft, min-min, fastest-gpu), or split "
                                         "the work into single-GPU tasks");
    }
    {
      std::map<std::pair<std::string, int>, int> per_node;
      int most = 0;
      for (const sched::Gpu& g : cluster_.gpus) {
        if (!g.is_mig()) most = std::max(most, ++per_node[{g.node, g.type}]);
      }
      if (spec.gpus > most) {
        return Status::Unsupported(fmt::format("gpus: {}: no node has that many GPUs of one type (at most {})",
                                               spec.gpus, most),
                                   "gpus", "ask for at most " + std::to_string(most) + " GPUs; GET /v1/gpus lists them");
      }
    }
  }
  {
    TaskRecord probe;
    probe.spec = spec;
    if (Status s = CheckPredictable(probe.ToSchedTask()); !s.ok()) return UnpredictableModel(spec, s, DeclaredShapeText(spec.model));
  }
  Result<TaskStore::Inserted> inserted = store_->Insert(spec, Now());
  std::lock_guard<std::mutex> lock(mu_);
  if (!inserted.ok()) {
    ++journal_failures_;
    journal_error_ = inserted.status().ToString();
    return inserted.status();
  }
  if (unsynced_.empty()) journal_error_.clear();
  TaskStore::Inserted ins = std::move(*inserted);
  if (!ins.created) {
    // A retry must be the same task: a key reused for another body would silently return a
    // task the client did not ask for.
    if (const std::string diff = TaskSpecDifference(ins.record.spec, spec); !diff.empty()) {
      return Status::Conflict(fmt::format("idempotency key '{}' was first used for task {} with another body ({})",
                                          spec.key, ins.record.id, diff),
                              "task field 'key'",
                              "a key names one task: resend the first body to retry it, or use a new key");
    }
    metrics_.CountDuplicate();
    auto it = tasks_.find(ins.record.id);
    if (it != tasks_.end()) ins.record = it->second;
    return ins;
  }
  metrics_.CountSubmitted();
  tasks_[ins.record.id] = ins.record;
  queue_.insert(KeyOf(ins.record));
  dirty_ = true;
  cv_.notify_all();
  return ins;
}

std::optional<TaskRecord> Daemon::FindByKey(const std::string& key) const {
  if (key.empty()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, r] : tasks_) {
    if (r.spec.key == key) return r;
  }
  return std::nullopt;
}

std::optional<TaskRecord> Daemon::Get(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second;
}

std::vector<TaskRecord> Daemon::List(std::optional<TaskState> state, size_t limit,
                                     const std::optional<std::string>& team) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TaskRecord> out;
  for (auto it = tasks_.rbegin(); it != tasks_.rend() && out.size() < limit; ++it) {
    if (team && it->second.spec.team != *team) continue;
    if (!state || it->second.state == *state) out.push_back(it->second);
  }
  return out;
}

Result<TaskRecord> Daemon::Cancel(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  HASE_RETURN_IF_ERROR(FlushUnsyncedLocked());  // no change on top of unwritten ones
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return Status::NotFound("no task " + std::to_string(id));
  TaskRecord& r = it->second;
  if (IsTerminal(r.state)) {
    return Status::Conflict("task " + std::to_string(id) + " already " + TaskStateName(r.state), "",
                            "an ended task cannot be cancelled; its record shows how it ended");
  }
  const double now = Now();
  std::vector<int64_t> changed{id};
  if (r.state == TaskState::kQueued) {
    queue_.erase(KeyOf(r));
    policy_->Forget(r.ToSchedTask(), state_);
  } else {
    if (r.state == TaskState::kRunning && backend_ && ExecutesOn(r.gpu)) backend_->Cancel(id, r.attempts);
    const int gpu = r.gpu;
    RemoveFromGpuLocked(r);
    PromoteLocked(gpu, now, changed);
  }
  r.reason = "cancelled by a client";
  FinishLocked(r, TaskState::kCancelled, 0, now);
  HASE_RETURN_IF_ERROR(PersistLocked(changed));
  LaunchLocked(changed);
  dirty_ = true;
  cv_.notify_all();
  return r;
}

Result<TaskRecord> Daemon::Complete(int64_t id, int exit_code) {
  int attempt = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    HASE_RETURN_IF_ERROR(FlushUnsyncedLocked());
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return Status::NotFound("no task " + std::to_string(id));
    if (it->second.state != TaskState::kRunning) {
      return Status::Conflict("task " + std::to_string(id) + " is " + TaskStateName(it->second.state) +
                                  ", not running",
                              "", "only a running task can be completed");
    }
    if (!OutsideLocked(it->second)) {
      // Its process / job / pod is still hase's: a report from outside would free the GPU while
      // it runs and feed a false run time to calibration.
      return Status::Conflict("task " + std::to_string(id) + " is run by hase's " + backend_name() +
                                  " backend, which reports its end",
                              "", "cancel it (DELETE /v1/tasks/" + std::to_string(id) +
                                      ") to stop it; /complete is for tasks run outside hase");
    }
    attempt = it->second.attempts;
  }
  TaskEnd end;
  end.exit_code = exit_code;
  end.ended_s = Now();
  OnEnd(id, attempt, end);
  return *Get(id);
}

std::vector<double> Daemon::CompletionsLocked(const sched::Task& task, const sched::CycleState& cycle) const {
  std::vector<double> out(cluster_.gpus.size(), kInf);
  const double now_ms = ToMs(Now());
  for (const sched::Gpu& g : cluster_.gpus) {
    const auto& p = cycle.profile[g.type];
    const sched::GpuState& s = state_.gpus[g.id];
    if (!p.ok() || failed_gpus_.count(g.id)) continue;
    const double need = sched::MemoryNeedMib(task, *p);
    if (need > s.memory_mib) continue;
    sched::ExtraTask extra{task.id, need, p->demand, p->isolated_ms, now_ms};
    sched::Timeline tl = sched::PredictTimeline(s, policy_->oracle().contention(), std::max(now_ms, state_.now_ms), extra);
    if (tl.extra && std::isfinite(tl.extra->end_ms)) out[g.id] = ToS(tl.extra->end_ms);
  }
  return out;
}

bool Daemon::FitsSomeCatalogGpuLocked(const sched::CycleState& cycle, const sched::Task& t) const {
  for (const sched::Gpu& g : cluster_.gpus) {
    if (live_[g.id].foreign_mib <= 0 || g.type >= static_cast<int>(cycle.profile.size())) continue;
    const auto& p = cycle.profile[g.type];
    if (p.ok() && sched::MemoryNeedMib(t, *p) <= g.memory_mib) return true;
  }
  return false;
}

}  // namespace hase::service
