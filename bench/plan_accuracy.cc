// How far the live plan's word is from what happens (issue #23 item 3, first part): the
// embedded default cluster and workload (`hase simulate`'s), every task submitted at t = 0 as one
// queue, planned by sched::PlanQueue (the daemon's live plan, `hase` policy) and then run in the
// simulator under a truth that differs from the prediction (`--truth analytic --seed N`: each
// isolated runtime × a seeded lognormal error, σ = 0.15, pairwise interference noise σ = 0.185;
// or `--truth table:FILE`, measured latencies as `hase simulate --truth table:` reads them).
//
//   build/bench/plan_accuracy [--seeds 1-5] [--arrivals queue|workload] [--models DIR]
//       [--truth analytic|table:FILE] [--cluster FILE] [--workload FILE] [--precision P]
//       [--calibrate]
//
// --calibrate: the plans use the daemon's calibration from what ran (service/calibration.h):
// each task that ended teaches a CalibratedOracle its real run time against its isolated
// prediction (hase co-locates nothing on the timm cluster, so that is the run time it was
// placed with), and the plans made after it price waiting tasks with the corrected oracle. The
// simulated policy's own decisions stay on the uncorrected oracle (a daemon would correct them
// too), so this measures the plan's ETA, not calibrated scheduling.
//
// --cluster / --workload replace the embedded defaults; "{seed}" in the workload's path is the
// seed (tools/timm_experiment.py writes workload_1.yaml … workload_5.yaml). With a table truth
// the seed picks the workload only, and there is no "perfect" row.
//
// Prints, per seed: the queue ETA at t = 0 against the simulated makespan, and the relative
// error of every task's predicted finish (|predicted − real| / real, times from t = 0) as median
// and p90; then the median over seeds. Seed 0 is the check "truth = prediction" (perfect): the
// plan and the simulation must then agree exactly.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/sched/queue_plan.h"
#include "hase/sched/registry.h"
#include "hase/sched/workload_file.h"
#include "hase/sim/analytic_truth.h"
#include "hase/sim/defaults.h"
#include "hase/sim/predictor_oracle.h"
#include "hase/sim/simulator.h"
#include "hase/sim/table_truth.h"
#include "hase/service/calibration.h"

namespace {

using namespace hase;

// The predictor priced once per (profile key, GPU type), as RunExperiment's latency table.
class CachedOracle final : public sched::LatencyOracle {
 public:
  explicit CachedOracle(std::shared_ptr<const sched::LatencyOracle> inner) : inner_(std::move(inner)) {}
  Result<sched::TaskProfile> Profile(const sched::Task& task, const sched::GpuType& type) const override {
    const std::string key = sched::ProfileKey(task) + "|" + type.name;
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, inner_->Profile(task, type)).first;
    return it->second;
  }
  const sched::ContentionModel& contention() const override { return inner_->contention(); }

 private:
  std::shared_ptr<const sched::LatencyOracle> inner_;
  mutable std::map<std::string, Result<sched::TaskProfile>> cache_;
};

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

struct Row {
  uint64_t seed = 0;
  double eta_s = 0, makespan_s = 0, eta_err = 0, finish_median = 0, finish_p90 = 0;
  double eta_err_at[3] = {NAN, NAN, NAN};  // ETA error of the plan made at 25 / 50 / 75 % of the run
  // The simple baseline, same state at t = 0: every queued task list-scheduled in queue order on
  // the GPU of its earliest predicted completion (earliest-finish placement with the same
  // predictions; PlanQueue with max_decisions = 0, its extrapolation), no policy run forward.
  double eft_eta_s = 0, eft_eta_err = 0;
};

// Runs the workload in the simulator under the analytic truth (seed 0: perfect) and, after
// every instant, makes the live plan from the simulator's state (the policy's view, with the
// progress it observed) as the daemon would: the ETA then, and each task's predicted finish at
// the instant it was submitted.
Result<Row> RunSeed(const sched::Cluster& cluster, const std::vector<sched::Task>& tasks,
                    std::shared_ptr<const sched::LatencyOracle> oracle, uint64_t seed,
                    const sim::TruthModel* table_truth, bool calibrate) {
  sched::PolicyConfig pc;
  pc.oracle = oracle;
  pc.cluster = &cluster;
  // The figures in docs/scheduler.md ("Plan accuracy") were measured with hase's longest-first
  // order, now --objective makespan (the balanced default came later, issue 28).
  pc.hase.objective = sched::Objective::kMakespan;
  sched::PolicyConfig plan_pc = pc;
  std::shared_ptr<service::CalibratedOracle> cal;
  if (calibrate) plan_pc.oracle = cal = std::make_shared<service::CalibratedOracle>(oracle);
  std::map<int, std::pair<double, int>> was_running;  // task → (started, GPU) at the last instant
  std::vector<double> predicted_end(tasks.size(), NAN);
  std::vector<std::pair<double, double>> etas;  // (plan time, ETA), ms
  double eft_eta_ms = NAN;                      // the baseline's ETA at the first instant, ms
  Status hook_error = Status::OK();
  sim::SimOptions so;
  so.measure_decisions = false;
  so.after_instant = [&](const sched::ClusterState& state, const std::vector<int>& waiting) {
    if (!hook_error.ok()) return;
    if (cal) {  // what ended since the last instant ended now
      std::map<int, std::pair<double, int>> running;
      for (size_t g = 0; g < state.gpus.size(); ++g) {
        for (const sched::RunningTask& rt : state.gpus[g].running) running[rt.task_id] = {rt.started_ms, static_cast<int>(g)};
      }
      for (const auto& [id, at] : was_running) {
        if (running.count(id)) continue;
        const sched::GpuType& type = cluster.types[cluster.gpus[at.second].type];
        Result<sched::TaskProfile> p = oracle->Profile(tasks[id], type);
        if (p.ok()) cal->Observe(tasks[id], type, (state.now_ms - at.first) / 1000.0, p->isolated_ms / 1000.0, 0);
      }
      was_running = std::move(running);
    }
    // With calibration, placed tasks are corrected as the daemon's pass does (RefreshGpusLocked):
    // running ones' remaining work and bound ones' isolated time × the factor.
    std::optional<sched::ClusterState> corrected;
    if (cal) {
      corrected.emplace(state);
      for (sched::GpuState& g : corrected->gpus) {
        const std::string& type = cluster.types[g.type].name;
        for (sched::RunningTask& rt : g.running) {
          rt.remaining_ms = rt.RemainingAt(state.now_ms) * cal->Factor(tasks[rt.task_id].model, type);
          rt.as_of_ms = state.now_ms;
        }
        for (sched::QueuedTask& q : g.queued) q.isolated_ms *= cal->Factor(tasks[q.task_id].model, type);
        if (g.reservation && g.reservation->task_id >= 0) {
          g.reservation->isolated_ms *= cal->Factor(tasks[g.reservation->task_id].model, type);
        }
      }
    }
    const sched::ClusterState& view = cal ? *corrected : state;
    std::vector<sched::Task> queue;
    for (int id : waiting) queue.push_back(tasks[id]);
    Result<std::unique_ptr<sched::Policy>> policy = sched::MakePolicy("hase", plan_pc);
    if (!policy.ok()) return void(hook_error = policy.status());
    sched::QueuePlanOptions po;
    po.budget_ms = 1e12;  // exact: the accuracy of the plan, not of the budget's extrapolation
    if (cal) {
      for (size_t g = 0; g < view.gpus.size(); ++g) (*policy)->OnGpuChanged(*corrected, static_cast<int>(g));
    }
    if (etas.empty()) {  // t = 0: the earliest-finish baseline on the same state
      sched::QueuePlanOptions eft = po;
      eft.max_decisions = 0;
      Result<std::unique_ptr<sched::Policy>> own = sched::MakePolicy("hase", plan_pc);  // no shared plugin state
      if (!own.ok()) return void(hook_error = own.status());
      if (cal) {
        for (size_t g = 0; g < view.gpus.size(); ++g) (*own)->OnGpuChanged(*corrected, static_cast<int>(g));
      }
      Result<sched::QueuePlan> b = sched::PlanQueue(view, **own, queue, eft);
      if (!b.ok()) return void(hook_error = b.status());
      eft_eta_ms = b->eta_ms;
    }
    Result<sched::QueuePlan> plan = sched::PlanQueue(view, **policy, queue, po);
    if (!plan.ok()) return void(hook_error = plan.status());
    etas.emplace_back(state.now_ms, plan->eta_ms);
    auto record = [&](int id, double end_ms) {
      if (std::isnan(predicted_end[id]) && tasks[id].arrival_ms <= state.now_ms + 1e-6) predicted_end[id] = end_ms;
    };
    for (const sched::PlannedTask& p : plan->tasks) record(p.task_id, p.end_ms);
    for (const sched::PlannedPlaced& p : plan->placed) record(p.task_id, p.end_ms);
  };
  HASE_ASSIGN_OR_RETURN(std::unique_ptr<sched::Policy> policy, sched::MakePolicy("hase", pc));
  sim::AnalyticTruthOptions ao;
  ao.seed = seed;
  if (seed == 0) ao.sigma = ao.pair_sigma = 0;  // perfect: truth = prediction
  sim::AnalyticTruth analytic(oracle, ao);
  const sim::TruthModel& truth = table_truth ? *table_truth : analytic;
  HASE_ASSIGN_OR_RETURN(sim::SimResult real, sim::Simulate(cluster, tasks, *policy, truth, so));
  HASE_RETURN_IF_ERROR(hook_error);
  Row row;
  row.seed = seed;
  row.makespan_s = real.makespan_ms / 1000.0;
  row.eta_s = etas.empty() ? NAN : etas.front().second / 1000.0;
  row.eta_err = std::abs(row.eta_s - row.makespan_s) / row.makespan_s;
  row.eft_eta_s = eft_eta_ms / 1000.0;
  row.eft_eta_err = std::abs(row.eft_eta_s - row.makespan_s) / row.makespan_s;
  for (int k = 0; k < 3; ++k) {
    const double at = (k + 1) * 0.25 * real.makespan_ms;
    for (const auto& [t, eta] : etas) {
      if (t >= at) {
        row.eta_err_at[k] = std::abs(eta - real.makespan_ms) / real.makespan_ms;
        break;
      }
    }
  }
  std::vector<double> finish_err;
  for (const sched::Task& t : tasks) {
    const sim::TaskOutcome& o = real.tasks[t.id];
    if (o.rejected || !std::isfinite(predicted_end[t.id]) || o.end_ms <= t.arrival_ms) continue;
    // Relative to the time from submission to the real finish (the wait + run a user sees).
    finish_err.push_back(std::abs(predicted_end[t.id] - o.end_ms) / (o.end_ms - t.arrival_ms));
  }
  row.finish_median = Quantile(finish_err, 0.5);
  row.finish_p90 = Quantile(finish_err, 0.9);
  return row;
}

int Main(int argc, char** argv) {
  std::string models = std::string(HASE_BENCH_SOURCE_DIR) + "/models";
  std::string truth_spec = "analytic", cluster_file, workload_file, precision;
  uint64_t first = 1, last = 5;
  bool queue_at_zero = true, calibrate = false;
  auto usage = [] {
    std::fprintf(stderr, "usage: plan_accuracy [--seeds A-B] [--arrivals queue|workload] [--models DIR] "
                         "[--truth analytic|table:FILE] [--cluster FILE] [--workload FILE] [--precision P] [--calibrate]\n");
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--models" && has) {
      models = argv[++i];
    } else if (a == "--arrivals" && has && (std::string(argv[i + 1]) == "queue" || std::string(argv[i + 1]) == "workload")) {
      queue_at_zero = std::string(argv[++i]) == "queue";
    } else if (a == "--truth" && has) {
      truth_spec = argv[++i];
      if (truth_spec != "analytic" && truth_spec.rfind("table:", 0) != 0) return usage();
    } else if (a == "--cluster" && has) {
      cluster_file = argv[++i];
    } else if (a == "--workload" && has) {
      workload_file = argv[++i];
    } else if (a == "--calibrate") {
      calibrate = true;
    } else if (a == "--precision" && has) {
      precision = argv[++i];
    } else if (a == "--seeds" && has) {
      const std::string v = argv[++i];
      const size_t dash = v.find('-');
      try {
        first = std::stoull(v.substr(0, dash));
        last = dash == std::string::npos ? first : std::stoull(v.substr(dash + 1));
      } catch (const std::exception&) {
        return usage();
      }
    } else {
      return usage();
    }
  }
  auto fail = [](const Status& s) { return std::fprintf(stderr, "plan_accuracy: %s\n", s.ToString().c_str()), 1; };
  auto catalog = GpuCatalog::Builtin();
  if (!catalog.ok()) return fail(catalog.status());
  auto cluster = cluster_file.empty() ? sched::ParseClusterYaml(sim::DefaultClusterYaml(), "<default cluster>", *catalog)
                                      : sched::LoadClusterFile(cluster_file, *catalog);
  if (!cluster.ok()) return fail(cluster.status());
  sim::PredictorOracleOptions po;
  po.models_dir = models;
  if (Status st = sim::SetRuntimeAndPrecision(po.runtime.name, precision, po); !st.ok()) return fail(st);
  auto oracle = std::make_shared<CachedOracle>(std::make_shared<sim::PredictorOracle>(*catalog, po));
  std::unique_ptr<sim::TableTruth> table;
  if (truth_spec != "analytic") {
    auto t = sim::TableTruth::Load(truth_spec.substr(6), *catalog, oracle->contention());
    if (!t.ok()) return fail(t.status());
    table = std::make_unique<sim::TableTruth>(std::move(*t));
  }
  auto load_tasks = [&](uint64_t seed) -> Result<std::vector<sched::Task>> {
    std::string path = workload_file;
    if (const size_t at = path.find("{seed}"); at != std::string::npos) path.replace(at, 6, std::to_string(seed));
    Result<std::vector<sched::Task>> tasks = workload_file.empty()
                                                 ? sched::ParseWorkloadYaml(sim::DefaultWorkloadYaml(), "<default workload>")
                                                 : sched::LoadWorkloadFile(path);
    if (tasks.ok() && queue_at_zero) {
      for (sched::Task& t : *tasks) t.arrival_ms = 0;  // one queue, submitted at t = 0
    }
    return tasks;
  };
  std::printf("truth: %s; arrivals: %s; plans %s\n\n", truth_spec.c_str(),
              queue_at_zero ? "every task submitted at t = 0" : "the workload's own",
              calibrate ? "calibrated from what ran" : "uncalibrated");
  std::printf("| seed | ETA at t=0 (s) | real makespan (s) | ETA error at 0 / 25 / 50 / 75 %% of the run | "
              "per-task finish error at submit: median | p90 | baseline (earliest-finish list schedule) ETA at t=0 | its "
              "error |\n|---|---|---|---|---|---|---|---|\n");
  std::vector<double> eta_errs, med, p90, eft_errs;
  for (uint64_t seed = table ? first : 0; seed <= last; ++seed) {
    if (seed != 0 && seed < first) continue;
    Result<std::vector<sched::Task>> tasks = load_tasks(seed == 0 ? first : seed);
    if (!tasks.ok()) return fail(tasks.status());
    Result<Row> r = RunSeed(*cluster, *tasks, oracle, seed, table.get(), calibrate);
    if (!r.ok()) return fail(r.status());
    std::printf("| %s | %.1f | %.1f | %.2f / %.2f / %.2f / %.2f %% | %.2f %% | %.2f %% | %.1f | %.2f %% |\n",
                seed == 0 ? "perfect" : std::to_string(seed).c_str(), r->eta_s, r->makespan_s, 100 * r->eta_err,
                100 * r->eta_err_at[0], 100 * r->eta_err_at[1], 100 * r->eta_err_at[2], 100 * r->finish_median,
                100 * r->finish_p90, r->eft_eta_s, 100 * r->eft_eta_err);
    if (seed == 0) continue;
    eft_errs.push_back(r->eft_eta_err);
    eta_errs.push_back(r->eta_err);
    med.push_back(r->finish_median);
    p90.push_back(r->finish_p90);
  }
  std::printf("| median over seeds %llu-%llu | | | %.2f %% (at 0; p90 %.2f %%) | %.2f %% | %.2f %% | | %.2f %% |\n",
              static_cast<unsigned long long>(first), static_cast<unsigned long long>(last),
              100 * Quantile(eta_errs, 0.5), 100 * Quantile(eta_errs, 0.9), 100 * Quantile(med, 0.5),
              100 * Quantile(p90, 0.5), 100 * Quantile(eft_errs, 0.5));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
