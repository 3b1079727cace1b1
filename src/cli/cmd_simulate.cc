// `hase simulate [--cluster C] [--workload W] [--policy all|hase,rr,…] [--truth analytic|perfect|
// table:FILE] [--seed S] [--out DIR]`: simulates scheduling policies on a cluster and workload
// (embedded defaults when none are given) and reports makespan, JCT, waiting, utilisation,
// reservations, decision time and the distance to a makespan lower bound.
#include <cstdio>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/command.h"
#include "hase/predict/latency_calibration.h"
#include "cli/simulate_from.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/sched/team_config.h"
#include "hase/sched/registry.h"
#include "hase/sched/workload_file.h"
#include "hase/sim/defaults.h"
#include "hase/sim/experiment.h"
#include "hase/sim/predictor_oracle.h"

namespace hase::cli {
namespace {

struct SimulateFlags {
  std::string cluster;
  std::string workload;
  std::string policy = "all";
  std::string truth = "analytic";
  std::string precision;  // empty = the runtime's default
  std::string runtime = DefaultRuntime().name;
  std::string calibration;  // --calibration: "" = the saved one if any, "none", or a file
  uint64_t seed = 1;
  std::string out;
  std::string models = DefaultModelsDir();
  std::string catalog;
  double error_sigma = 0.15;
  int top_k = 4;
  int max_reservations = 1;
  double aging = sched::HaseOptions{}.aging;
  std::string objective = "balanced";
  double long_task_s = sched::HaseOptions{}.long_task_s;
  double colocation_margin = sched::HaseOptions{}.colocation_margin;
  double short_wait_share = sched::HaseOptions{}.short_wait_share;
  int max_tasks_per_gpu = 0;
  bool full_passes = false;
  bool no_gantt = false;
  bool plan = false;
  int plan_rows = 0;
  bool progress = false;
  SimulateFromFlags from;  // --from URL: a what-if against a running daemon (simulate_from.h)
};

Result<std::vector<std::string>> ParsePolicies(const std::string& spec) {
  if (spec == "all") return sched::PolicyNames();
  std::vector<std::string> out;
  std::stringstream ss(spec);
  std::string name;
  const std::vector<std::string> known = sched::PolicyNames();
  while (std::getline(ss, name, ',')) {
    if (name.empty()) {
      return Status::InvalidArgument("empty policy name in '" + spec + "'", "--policy",
                                     "separate names with single commas");
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Status::NotFound(fmt::format("unknown policy '{}'", name), "--policy",
                              fmt::format("use all or a list of: {}", fmt::join(known, ", ")));
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return Status::InvalidArgument("policy '" + name + "' is listed twice", "--policy",
                                     "name each policy once");
    }
    out.push_back(name);
  }
  if (out.empty()) return Status::InvalidArgument("no policy given", "--policy");
  return out;
}

// Every model of the workload must exist before anything runs: a typo is one error, not a run
// whose tasks are all rejected.
Status CheckModelsExist(const std::vector<sched::Task>& tasks, const sim::PredictorOracle& oracle,
                        const std::string& workload, const std::string& models_dir) {
  std::set<std::string> seen;
  for (const sched::Task& t : tasks) {
    if (!t.runtime.empty()) {
      if (auto rt = FindRuntime(t.runtime); !rt.ok()) {
        return Status::InvalidArgument(
            fmt::format("task '{}': unknown runtime '{}'", t.name, t.runtime),
            workload.empty() ? "<default workload>" : workload, rt.status().hint());
      }
    }
    if (!seen.insert(t.model).second) continue;
    const std::string path = oracle.ModelPath(t.model);
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) continue;
    const bool is_path = path == t.model;
    return Status::InvalidArgument(
        is_path ? fmt::format("task '{}': model file '{}' not found", t.name, path)
                : fmt::format("task '{}': unknown model '{}' (no {})", t.name, t.model, path),
        workload.empty() ? "<default workload>" : workload,
        is_path ? "give an existing .onnx path (relative paths are read from the current "
                  "directory)"
                : ZooNamesHint(models_dir));
  }
  return Status::OK();
}

int Run(const SimulateFlags& f) {
  if (!f.from.url.empty()) {
    // The daemon's cluster, policy and oracle answer: flags that choose another are refused.
    if (!f.cluster.empty()) {
      return Fail(Status::InvalidArgument("cannot be combined with --from", "--cluster",
                                          "the daemon's own cluster is used; add or drain GPUs with --add-gpus, --drain-node"));
    }
    if (f.policy != "all") {
      return Fail(Status::InvalidArgument("cannot be combined with --from", "--policy",
                                          "the daemon's own policy plans (hase serve --policy)"));
    }
    SimulateFromFlags from = f.from;
    from.workload = f.workload;
    return RunSimulateFrom(from);
  }
  if (!f.from.state_dir.empty()) {
    SimulateFromFlags from = f.from;
    from.workload = f.workload;
    from.cluster = f.cluster;
    from.catalog = f.catalog;
    from.models = f.models;
    from.runtime = f.runtime;
    from.precision = f.precision;
    const Result<sched::Objective> objective = sched::ParseObjective(f.objective, "--objective");
    if (!objective.ok()) return Fail(objective.status());
    from.objective = *objective;
    from.calibration = f.calibration;
    if (f.policy != "all") {
      if (f.policy.find(',') != std::string::npos) {
        return Fail(Status::InvalidArgument("--from-state plans with one policy, not '" + f.policy + "'", "--policy",
                                            "give the daemon's (hase serve --policy; default hase)"));
      }
      from.policy = f.policy;
    }
    return RunSimulateFromState(from);
  }
  if (f.from.format != "table" || !f.from.token_file.empty()) {
    return Fail(Status::InvalidArgument("--format and --token-file need --from URL or --from-state DIR",
                                        "hase simulate", "without them, --out DIR writes report.json"));
  }
  if (!f.from.add_gpus.empty() || !f.from.drain_nodes.empty() || !f.from.drain_gpus.empty()) {
    return Fail(Status::InvalidArgument("--add-gpus, --drain-node and --drain-gpu need --from URL or --from-state DIR",
                                        "hase simulate", "pass --from http://HOST:PORT of a running hase serve"));
  }
  auto catalog = GpuCatalog::Load(f.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  auto cluster = f.cluster.empty()
                     ? sched::ParseClusterYaml(sim::DefaultClusterYaml(), "<default cluster>",
                                               *catalog)
                     : sched::LoadClusterFile(f.cluster, *catalog);
  if (!cluster.ok()) return Fail(cluster.status());
  auto tasks = f.workload.empty()
                   ? sched::ParseWorkloadYaml(sim::DefaultWorkloadYaml(), "<default workload>")
                   : sched::LoadWorkloadFile(f.workload);
  if (!tasks.ok()) return Fail(tasks.status());
  // Teams: the cluster file's teams / fair_share / preemption keys (docs/teams.md).
  auto teams = f.cluster.empty() ? sched::ParseTeamConfig(sim::DefaultClusterYaml(), "<default cluster>")
                                 : sched::LoadTeamConfig(f.cluster);
  if (!teams.ok()) return Fail(teams.status());
  if (teams->enabled()) {
    if (Status s = teams->CheckAgainst(*cluster); !s.ok()) return Fail(s.WithContext(f.cluster));
    if (Status s = teams->CheckTasks(*tasks); !s.ok()) return Fail(s.WithContext(f.workload));
  } else if (auto named = std::find_if(tasks->begin(), tasks->end(), [](const sched::Task& t) { return !t.team.empty(); });
             named != tasks->end()) {
    // Allowed (the same workload against the cluster without teams, as docs/teams.md compares),
    // but never silent.
    std::fprintf(stderr, "hase: warning: %s: task %s names team '%s', but the cluster file has no teams: the "
                         "team keys are ignored (docs/teams.md)\n",
                 f.workload.c_str(), named->name.c_str(), named->team.c_str());
  }
  auto policies = ParsePolicies(f.policy);
  if (!policies.ok()) return Fail(policies.status());
  if (f.top_k < 1) return Fail(Status::InvalidArgument("--top-k must be >= 1", "--top-k"));
  if (f.max_reservations < 0) {
    return Fail(Status::InvalidArgument("--max-reservations must be >= 0", "--max-reservations"));
  }

  if (!(f.colocation_margin >= 0) || !std::isfinite(f.colocation_margin)) {
    return Fail(Status::InvalidArgument("must be a finite number >= 0", "--colocation-margin"));
  }
  if (!(f.aging >= 0) || !std::isfinite(f.aging)) {
    return Fail(Status::InvalidArgument("must be a finite number >= 0", "--aging"));
  }
  const Result<sched::Objective> objective = sched::ParseObjective(f.objective, "--objective");
  if (!objective.ok()) return Fail(objective.status());
  if (!(f.long_task_s >= 0) || !std::isfinite(f.long_task_s)) {
    return Fail(Status::InvalidArgument("must be a finite number >= 0", "--long-task-s"));
  }
  if (!(f.error_sigma >= 0) || !(f.error_sigma <= 3)) {  // lognormal sigma 3: a 20x spread at 1 sd
    return Fail(Status::InvalidArgument("must be a number in [0, 3] (lognormal sigma of the runtime error)",
                                        "--error-sigma", "e.g. 0.15, about 12 % mean absolute error (docs/scheduler.md)"));
  }
  if (f.plan_rows < 0) return Fail(Status::InvalidArgument("must be >= 0", "--plan-rows"));
  if (!(f.short_wait_share >= 0) || !std::isfinite(f.short_wait_share)) {
    return Fail(Status::InvalidArgument("must be a finite number >= 0", "--short-wait-share"));
  }
  if (f.max_tasks_per_gpu < 0 || f.max_tasks_per_gpu > sched::kMaxTasksPerGpu) {
    return Fail(Status::InvalidArgument(fmt::format("must be in 0..{}", sched::kMaxTasksPerGpu), "--max-tasks-per-gpu",
                                        "0 keeps the cluster file's limits"));
  }
  if (f.max_tasks_per_gpu > 0) {  // what the cluster file would say with max_tasks: N everywhere
    for (sched::Gpu& g : cluster->gpus) g.max_tasks = f.max_tasks_per_gpu;
  }

  sim::PredictorOracleOptions po;
  po.models_dir = f.models;
  if (Status s = sim::SetRuntimeAndPrecision(f.runtime, f.precision, po); !s.ok()) return Fail(s);
  {
    auto cal = LoadCalibrationFlag(f.calibration);
    if (!cal.ok()) return Fail(cal.status());
    po.calibration = std::make_shared<const LatencyCalibration>(std::move(*cal));
  }
  auto oracle = std::make_shared<sim::PredictorOracle>(*catalog, po);
  if (Status s = CheckModelsExist(*tasks, *oracle, f.workload, f.models); !s.ok()) return Fail(s);
  if (!f.out.empty()) {  // fail on an unusable --out now, not after a long run
    std::error_code ec;
    std::filesystem::create_directories(f.out, ec);
    if (ec || !std::filesystem::is_directory(f.out, ec)) {
      return Fail(Status::IO(fmt::format("cannot create output directory '{}': {}", f.out,
                                         ec ? ec.message() : "a file of that name exists"),
                             "--out", "give a writable directory path"));
    }
  }

  sim::ExperimentOptions eo;
  eo.policies = *policies;
  eo.truth = f.truth;
  eo.predictions = fmt::format("runtime {}, precision {}{}", po.runtime.name,
                               po.precision ? PrecisionName(*po.precision)
                                            : PrecisionName(po.runtime.default_precision),
                               po.calibration->empty() ? "" : ", calibrated by " + po.calibration->source);
  eo.seed = f.seed;
  eo.error_sigma = f.error_sigma;
  eo.hase.top_k = f.top_k;
  eo.hase.aging = f.aging;
  eo.hase.objective = *objective;
  eo.hase.long_task_s = f.long_task_s;
  eo.hase.colocation_margin = f.colocation_margin;
  eo.hase.short_wait_share = f.short_wait_share;
  eo.hase.incremental = !f.full_passes;
  eo.max_reservations = f.max_reservations;
  eo.teams = &*teams;
  eo.show_progress = f.progress || tasks->size() >= 5000;
  eo.workload_name = f.workload.empty() ? "default-200" : f.workload;
  auto result = sim::RunExperiment(*cluster, *tasks, oracle, *catalog, eo);
  if (!result.ok()) return Fail(result.status());
  std::printf("%s", sim::FormatTable(result->report, true).c_str());
  if (f.plan) {
    for (const sim::SimResult& r : result->runs) {
      std::printf("\n%s", sim::PlanTable(*cluster, *tasks, r, static_cast<size_t>(f.plan_rows)).c_str());
    }
  }
  int rejected_by_all = 0;
  for (const auto& p : result->report.policies) rejected_by_all = std::max(rejected_by_all, p.rejected);
  if (rejected_by_all > 0) {
    // Say why, once per distinct reason (first policy's run).
    std::map<std::string, int> reasons;
    for (const auto& o : result->runs.front().tasks) {
      if (o.rejected) ++reasons[o.reason];
    }
    std::fprintf(stderr, "hase: %d task(s) rejected:\n", rejected_by_all);
    for (const auto& [why, n] : reasons) std::fprintf(stderr, "  %d× %s\n", n, why.c_str());
  }
  if (!f.out.empty()) {
    const bool gantt = !f.no_gantt && tasks->size() <= 5000;
    Status s = sim::WriteExperiment(f.out, *cluster, *tasks, *result, gantt);
    if (!s.ok()) return Fail(s);
    std::printf("\nwrote %s/report.json, report.csv, timing.csv, tasks_<policy>.csv, "
                "plan_<policy>.json%s\n",
                f.out.c_str(), gantt ? ", gantt_<policy>.svg" : "");
  }
  return 0;
}

}  // namespace

Command AddSimulateCommand(CLI::App& parent) {
  auto flags = std::make_shared<SimulateFlags>();
  Command c;
  c.app = parent.add_subcommand(
      "simulate",
      "Simulate scheduling policies on a GPU cluster and task queue (embedded default: 24 GPUs "
      "of 4 types, 200 tasks)");
  c.app->add_option("--cluster,--config", flags->cluster, "cluster YAML (default: embedded, see examples/cluster.yaml)");
  c.app->add_option("--workload", flags->workload, "workload YAML or CSV (default: embedded, see examples/workload.yaml); what-if: tasks submitted in it");
  c.app->add_option("--policy", flags->policy, "all, or a comma-separated list of rr, random, least-loaded, fastest-gpu, gavel-like, eft, eft-share, min-min, max-min, hase")
      ->capture_default_str();
  c.app->add_option("--truth", flags->truth, "truth model: analytic (prediction x seeded error), perfect (no error), table:FILE")
      ->capture_default_str();
  c.app->add_option("--precision", flags->precision, "arithmetic: tf32, tf32-conv, fp32, fp16, tensor (default: the runtime's)");
  c.app->add_option("--calibration", flags->calibration,
                    "calibration file (hase calibrate), or 'none' (default: the saved one when it exists)");
  c.app->add_option("--runtime", flags->runtime, "inference runtime of tasks that name none: ort-cuda, ort-cuda-graph, pytorch-eager, tensorrt")->capture_default_str();
  c.app->add_option("--seed", flags->seed, "seed of the truth model's errors and of `random`")->capture_default_str()->check(NonNegativeInteger());
  c.app->add_option("--out", flags->out, "directory for report.json/csv, timing.csv, per-policy task CSVs and Gantt SVGs");
  c.app->add_option("--models", flags->models, "directory of zoo models (NAME.onnx)")->capture_default_str();
  c.app->add_option("--catalog", flags->catalog, "GPU catalog YAML (default: embedded data/gpus.yaml)");
  c.app->add_option("--error-sigma", flags->error_sigma, "analytic truth: lognormal sigma of the runtime error")->capture_default_str();
  c.app->add_option("--top-k", flags->top_k, "hase: stage-2 candidates")->capture_default_str();
  c.app->add_option("--max-reservations", flags->max_reservations, "hase: reservations held at once (1 = EASY)")->capture_default_str();
  c.app->add_option("--colocation-margin", flags->colocation_margin, "hase: sharing must drain the GPU earlier by this x the task's isolated time")->capture_default_str();
  c.app->add_option("--aging", flags->aging, "hase: queue order credit, ms of task length per ms waited (0 = longest first)")->capture_default_str();
  c.app->add_option("--objective", flags->objective, "hase: what it trades, makespan (longest first), jct (shortest first) or balanced (long tasks first, the rest shortest first)")->capture_default_str();
  c.app->add_option("--long-task-s", flags->long_task_s, "hase --objective balanced: tasks at least this long (s, fastest predicted isolated time) go longest first ahead of the others")->capture_default_str();
  c.app->add_option("--short-wait-share", flags->short_wait_share, "hase: also co-locate when it delays the GPU's drain by at most this x the wait it saves (trades makespan for JCT; 0 = only on a predicted gain)")->capture_default_str();
  c.app->add_flag("--full-passes", flags->full_passes, "hase: decide every waiting task on every pass (the reference for the incremental passes)");
  c.app->add_option("--max-tasks-per-gpu", flags->max_tasks_per_gpu, "override every GPU's co-location limit (1 = one task at a time; 0 = the cluster file's)")->capture_default_str();
  c.app->add_flag("--plan", flags->plan, "print each policy's plan: per task its GPU, predicted and actual start/end, and why (runner-up, waits, reservation, backfill, co-location)");
  c.app->add_option("--plan-rows", flags->plan_rows, "with --plan: print only the first N tasks by start (0 = all)")->capture_default_str();
  c.app->add_flag("--no-gantt", flags->no_gantt, "do not write Gantt SVGs");
  c.app->add_flag("--progress", flags->progress, "progress bar on stderr (automatic from 5000 tasks)");
  c.app->add_option("--from", flags->from.url,
                    "what-if against a running `hase serve` (http://HOST:PORT): plan its live queue and GPUs with "
                    "--add-gpus/--drain-node/--drain-gpu/--workload applied (nothing changes there)");
  c.app->add_option("--from-state", flags->from.state_dir,
                    "what-if offline from a stopped `hase serve`'s --state DIR (its hase.db, only read), with "
                    "--config (its cluster file), --models, --runtime, --policy as it ran")
      ->excludes("--from");
  c.app->add_option("--token-file", flags->from.token_file, "with --from: bearer token file (as `hase serve --token-file`)");
  c.app->add_option("--add-gpus", flags->from.add_gpus, "what-if (--from, --from-state): add GPUs, TYPE:COUNT[@NODE] (repeatable)");
  c.app->add_option("--drain-node", flags->from.drain_nodes, "what-if: drain a node (repeatable)");
  c.app->add_option("--drain-gpu", flags->from.drain_gpus, "what-if: drain a GPU, ID or NODE/INDEX (repeatable)");
  c.app->add_option("--format", flags->from.format, "what-if: table or json")->capture_default_str();
  c.run = [flags] { return Run(*flags); };
  return c;
}

}  // namespace hase::cli
