// End-to-end: `hase simulate` with teams (docs/teams.md) on examples/teams_cluster.yaml and
// examples/teams_workload.yaml, where team batch floods the queue with 120 long tasks at t = 0
// and teams vision and nlp submit short tasks every 10 / 20 s.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "testing.h"

namespace hase {
namespace {

using testing::HaseBin;
using testing::RunCommand;
using testing::SourceDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempDir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "hase_teams_" + name;
  RunCommand("rm -rf " + d + " && mkdir -p " + d);
  return d;
}

nlohmann::json Team(const nlohmann::json& report, const std::string& team) {
  for (const auto& p : report["policies"]) {
    for (const auto& t : p["teams"]) {
      if (t["team"] == team) return t;
    }
  }
  return nullptr;
}

// The longest wait (first start - arrival) of the tasks whose name starts with `prefix`, from
// a tasks_<policy>.csv (columns task, ..., arrival_s, start_s at 6 and 7).
double MaxWaitS(const std::string& csv, char prefix) {
  std::istringstream lines(csv);
  std::string row;
  std::getline(lines, row);
  double worst = -1;
  while (std::getline(lines, row)) {
    if (row.empty() || row[0] != prefix) continue;
    std::istringstream cells(row);
    std::string cell;
    double arrival = 0, start = 0;
    for (int i = 0; std::getline(cells, cell, ','); ++i) {
      if (i == 6) arrival = std::stod(cell);
      if (i == 7) start = std::stod(cell);
    }
    worst = std::max(worst, start - arrival);
  }
  return worst;
}

TEST(TeamsCliTest, FloodingTeamCannotKeepTheOthersFromTheirGuaranteedShare) {
  const std::string cluster = SourceDir() + "/examples/teams_cluster.yaml";
  const std::string workload = SourceDir() + "/examples/teams_workload.yaml";
  const std::string d = TempDir("flood");
  // The same cluster without teams: one anonymous queue, the flood first.
  RunCommand("sed '/^teams:/,$d' " + cluster + " > " + d + "/one_queue.yaml");
  auto base = RunCommand(HaseBin() + " simulate --policy hase --no-gantt --cluster " + d +
                         "/one_queue.yaml --workload " + workload + " --out " + d + "/one");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  EXPECT_EQ(base.out.find("teams ("), std::string::npos);
  EXPECT_NE(base.err.find("names team 'batch', but the cluster file has no teams: the team keys are ignored"),
            std::string::npos) << base.err;
  const std::string one_csv = Slurp(d + "/one/tasks_hase.csv");
  // Measured (default objective, balanced): vision waits up to 97.2 s, nlp up to 64.4 s behind
  // the flood (234.6 s and 255.8 s under --objective makespan, which runs the long flood first).
  EXPECT_GT(MaxWaitS(one_csv, 'v'), 60);
  EXPECT_GT(MaxWaitS(one_csv, 'n'), 50);

  auto r = RunCommand(HaseBin() + " simulate --policy hase --no-gantt --cluster " + cluster + " --workload " +
                      workload + " --out " + d + "/teams");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("teams (hase):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A100-eq s"), std::string::npos) << r.out;
  const nlohmann::json report = nlohmann::json::parse(Slurp(d + "/teams/report.json"));
  const nlohmann::json batch = Team(report, "batch"), vision = Team(report, "vision"), nlp = Team(report, "nlp");
  ASSERT_FALSE(batch.is_null() || vision.is_null() || nlp.is_null()) << report.dump();
  EXPECT_EQ(batch["tasks"], 120);
  EXPECT_EQ(vision["completed"], 24);
  EXPECT_EQ(nlp["completed"], 12);
  // Bounded wait: a task of a team below its guarantee waits at most until a borrowed GPU's
  // task has run min_run_s (30 s) and finishes its batch. Measured: vision 11.1 s, nlp 11.9 s.
  EXPECT_LE(vision["wait_s"]["max"].get<double>(), 31.0);
  EXPECT_LE(nlp["wait_s"]["max"].get<double>(), 31.0);
  EXPECT_LT(vision["wait_s"]["max"].get<double>(), MaxWaitS(one_csv, 'v') / 5);
  EXPECT_LT(nlp["slowdown"]["p95"].get<double>(), 10.0);  // measured 6.61
  // Borrowing: the flood ran on more than its 8 guaranteed GPUs' worth over the makespan.
  const double makespan_s = report["policies"][0]["makespan_s"].get<double>();
  EXPECT_GT(batch["usage"]["gpu_s"].get<double>(), 8 * makespan_s);
  // A100-equivalents: most of the fleet is slower than an A100, so less than plain GPU-s.
  for (const auto* t : {&batch, &vision, &nlp}) {
    EXPECT_GT((*t)["usage"]["raw_equivalent_s"].get<double>(), 0);
    EXPECT_LT((*t)["usage"]["raw_equivalent_s"].get<double>(), (*t)["usage"]["gpu_s"].get<double>());
  }
  // Fair share: the flood is over-served, the others under-served.
  EXPECT_LT(batch["usage"]["fair_share"].get<double>(), 0.5);
  EXPECT_GT(vision["usage"]["fair_share"].get<double>(), 0.5);
  // Preemption: only the flood's borrowed GPUs, at most one per waiting task (24 + 12), at
  // most max_per_task (2) per task, never before min_run_s (30 s) since its start.
  const int preemptions = batch["preemptions"].get<int>();
  EXPECT_GT(preemptions, 0);
  EXPECT_LE(preemptions, 36);
  EXPECT_EQ(vision["preemptions"], 0);
  EXPECT_EQ(nlp["preemptions"], 0);
  const nlohmann::json plan = nlohmann::json::parse(Slurp(d + "/teams/plan_hase.json"));
  int seen = 0;
  for (const auto& t : plan["tasks"]) {
    if (!t.contains("preempted")) continue;
    ASSERT_LE(t["preempted"].size(), 2u) << t.dump();
    seen += static_cast<int>(t["preempted"].size());
    const std::string first = t["preempted"][0];
    EXPECT_NE(first.find("below its guarantee"), std::string::npos) << first;
    double at_s = 0;
    ASSERT_EQ(std::sscanf(first.c_str() + first.find(" at ") + 4, "%lf", &at_s), 1) << first;
    EXPECT_GE(at_s - t["start_s"].get<double>(), 30.0) << t.dump();
    EXPECT_NE(first.find("after batch"), std::string::npos) << first;
  }
  EXPECT_EQ(seen, preemptions);
  // Deterministic.
  auto again = RunCommand(HaseBin() + " simulate --policy hase --no-gantt --cluster " + cluster + " --workload " +
                          workload + " --out " + d + "/again");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Slurp(d + "/teams/report.json"), Slurp(d + "/again/report.json"));
}

TEST(TeamsCliTest, TaskOfAnUnlistedTeamIsOneClearError) {
  const std::string d = TempDir("bad");
  std::ofstream(d + "/w.yaml") << "tasks:\n  - {name: a, team: nobody, model: resnet18, batch_size: 8, num_batches: 10}\n";
  auto r = RunCommand(HaseBin() + " simulate --policy hase --cluster " + SourceDir() +
                      "/examples/teams_cluster.yaml --workload " + d + "/w.yaml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nobody"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("w.yaml"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hase
