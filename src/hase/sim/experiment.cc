#include "hase/sim/experiment.h"

#include <algorithm>

#include <filesystem>
#include <map>
#include <optional>
#include <fstream>

#include <fmt/format.h>

#include "hase/sched/basic_plugins.h"
#include "hase/sched/registry.h"
#include "hase/sim/analytic_truth.h"
#include "hase/sim/best_known.h"
#include "hase/sim/lower_bound.h"
#include "hase/sim/queue_eta.h"
#include "hase/sched/fair_share.h"
#include "hase/sim/table_truth.h"
#include "hase/sim/team_report.h"

namespace hase::sim {
namespace {

Status WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) return Status::IO("cannot write file", p.string(), "check --out");
  return Status::OK();
}

}  // namespace

Result<ExperimentResult> RunExperiment(const sched::Cluster& cluster,
                                       const std::vector<sched::Task>& tasks,
                                       std::shared_ptr<const sched::LatencyOracle> oracle,
                                       const GpuCatalog& catalog,
                                       const ExperimentOptions& options) {
  // Truth model.
  std::unique_ptr<TruthModel> truth;
  if (options.truth == "analytic" || options.truth == "perfect") {
    AnalyticTruthOptions ao;
    ao.seed = options.seed;
    ao.sigma = options.truth == "perfect" ? 0 : options.error_sigma;
    ao.pair_sigma = options.truth == "perfect" ? 0 : options.pair_sigma;
    truth = std::make_unique<AnalyticTruth>(oracle, ao);
  } else if (options.truth.rfind("table:", 0) == 0) {
    HASE_ASSIGN_OR_RETURN(TableTruth t, TableTruth::Load(options.truth.substr(6), catalog,
                                                          oracle->contention()));
    truth = std::make_unique<TableTruth>(std::move(t));
  } else {
    return Status::InvalidArgument(fmt::format("unknown truth model '{}'", options.truth),
                                   "--truth", "use analytic, perfect or table:FILE");
  }
  // The latency table: every (task, type) profile once, before any decision is timed. The
  // memory need per task (for the lower bound) is the first profile's.
  std::vector<double> memory(tasks.size(), 0);
  std::map<std::string, std::string> rows;  // sorted, one per (profile key, type)
  for (const sched::Task& t : tasks) {
    for (const sched::GpuType& type : cluster.types) {
      Result<sched::TaskProfile> p = oracle->Profile(t, type);
      if (!p.ok()) continue;
      if (memory[t.id] == 0) memory[t.id] = sched::MemoryNeedMib(t, *p);
      const std::string key = fmt::format("{},{},{},{}", t.model, t.batch_size, t.input_size,
                                          type.name);
      const std::string row_key = key + "," + t.runtime;
      if (!rows.count(row_key)) {
        // The model's own memory need, not this task's override (Task::memory_mib, which the
        // oracle's profile carries): the row describes every task of the profile.
        double model_memory = p->memory_mib;
        if (t.memory_mib > 0) {
          sched::Task plain = t;
          plain.memory_mib = 0;
          const Result<sched::TaskProfile> own = oracle->Profile(plain, type);
          if (own.ok()) model_memory = own->memory_mib;
        }
        rows[row_key] = fmt::format("{},{:.6g},{:.4g},{:.0f},{}\n", key,
                                    p->isolated_ms / static_cast<double>(t.num_batches), p->demand,
                                    model_memory, t.runtime);
      }
    }
  }
  ExperimentResult out;
  out.profiles_csv = "model,batch_size,input_size,gpu_type,latency_ms,demand,memory_mib,runtime\n";
  for (const auto& [key, row] : rows) out.profiles_csv += row;
  Report& report = out.report;
  report.cluster = cluster.name;
  report.workload = options.workload_name;
  report.predictions = options.predictions;
  report.truth = truth->Name() == "analytic" && options.truth == "perfect" ? "perfect"
                                                                            : truth->Name();
  report.seed = options.seed;
  for (const sched::GpuType& t : cluster.types) report.gpu_types.push_back(t.name);
  report.gpus_per_type = cluster.CountByType();
  report.tasks = static_cast<int>(tasks.size());
  HASE_ASSIGN_OR_RETURN(report.lower_bound, MakespanLowerBound(cluster, tasks, memory, *truth));
  const std::vector<double> fastest_ms = FastestIsolatedMs(cluster, tasks, memory, *truth);
  // The offline search places one task per GPU: it has no move for a k-GPU task (gang.h), so
  // a workload with one gets no best-known schedule (its ratio reads "-").
  const bool gang =
      std::any_of(tasks.begin(), tasks.end(), [](const sched::Task& t) { return t.gpus > 1 || t.split; });
  if (options.best_known && !gang) {
    HASE_ASSIGN_OR_RETURN(BestKnown bk,
                          BestKnownSchedule(cluster, tasks, memory, *truth, oracle.get()));
    report.best_known_ms = bk.makespan_ms;
    report.best_known_method =
        fmt::format("{} + {} local-search moves, {} useful kicks{}", bk.construction, bk.moves,
                    bk.kicks, bk.budget_exhausted ? ", budget spent" : "");
  }

  // Fair share's reference type (an A100 by default): from the catalog, so the oracle prices it.
  sched::GpuType reference;
  if (options.teams != nullptr) {
    reference.name = options.teams->fair_share.reference;
    reference.peak_fp32_tflops = sched::kA100Fp32Tflops;
    if (Result<const GpuSpec*> spec = catalog.Find(reference.name); spec.ok()) {
      reference.name = (*spec)->id;
      reference.memory_mib = (*spec)->memory_gib * 1024.0;
      reference.peak_fp32_tflops = (*spec)->fp32_tflops;
    } else {
      return spec.status().WithContext("fair_share.reference");
    }
  }
  const std::vector<std::string> names =
      options.policies.empty() ? sched::PolicyNames() : options.policies;
  for (const std::string& name : names) {
    sched::PolicyConfig pc;
    pc.oracle = oracle;
    pc.cluster = &cluster;
    pc.seed = options.seed;
    pc.hase = options.hase;
    pc.max_reservations = options.max_reservations;
    HASE_ASSIGN_OR_RETURN(std::unique_ptr<sched::Policy> policy, sched::MakePolicy(name, pc));
    SimOptions so;
    so.show_progress = options.show_progress;
    so.measure_decisions = options.measure_decisions;
    const bool teams = options.teams != nullptr && options.teams->enabled();
    if (teams) {
      so.teams = options.teams;
      so.equivalent_speed = [&](const sched::Task& t, int type) {
        return sched::EquivalentSpeed(*oracle, t, cluster.types[type], reference);
      };
    }
    std::optional<QueueEtaProbe> probe;
    if (options.queue_eta && !teams) {
      probe.emplace([&] { return sched::MakePolicy(name, pc); }, tasks);
      so.after_instant = [&](const sched::ClusterState& s, const std::vector<int>& w) { probe->AfterInstant(s, w); };
    }
    HASE_ASSIGN_OR_RETURN(SimResult r, Simulate(cluster, tasks, *policy, *truth, so));
    report.policies.push_back(
        Summarise(cluster, tasks, r, report.lower_bound, report.best_known_ms, fastest_ms));
    if (teams) {
      report.policies.back().teams = SummariseTeams(*options.teams, tasks, r);
      report.policies.back().preemptions = r.preemptions;
    }
    if (probe) {
      HASE_ASSIGN_OR_RETURN(report.policies.back().queue_eta, probe->Finish(r.makespan_ms));
    }
    out.runs.push_back(std::move(r));
  }
  CompareToRoundRobin(report);
  return out;
}

Status WriteExperiment(const std::string& dir, const sched::Cluster& cluster,
                       const std::vector<sched::Task>& tasks, const ExperimentResult& result,
                       bool gantt) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IO("cannot create directory: " + ec.message(), dir, "check --out");
  const std::filesystem::path d(dir);
  HASE_RETURN_IF_ERROR(WriteFile(d / "report.json", ReportJson(result.report, false)));
  HASE_RETURN_IF_ERROR(WriteFile(d / "report.csv", ReportCsv(result.report, false)));
  std::string timing = "policy,decisions,decision_mean_us,decision_p99_us\n";
  for (const PolicyReport& p : result.report.policies) {
    timing += fmt::format("{},{},{:.3f},{:.3f}\n", p.policy, p.decisions, p.decision_mean_us,
                          p.decision_p99_us);
  }
  HASE_RETURN_IF_ERROR(WriteFile(d / "timing.csv", timing));
  HASE_RETURN_IF_ERROR(WriteFile(d / "profiles.csv", result.profiles_csv));
  for (const SimResult& r : result.runs) {
    HASE_RETURN_IF_ERROR(WriteFile(d / ("tasks_" + r.policy + ".csv"), TasksCsv(cluster, tasks, r)));
    HASE_RETURN_IF_ERROR(WriteFile(d / ("plan_" + r.policy + ".json"), PlanJson(cluster, tasks, r)));
    if (gantt) {
      HASE_RETURN_IF_ERROR(
          WriteFile(d / ("gantt_" + r.policy + ".svg"), GanttSvg(cluster, tasks, r)));
    }
  }
  return Status::OK();
}

}  // namespace hase::sim
