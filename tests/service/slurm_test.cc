// Slurm backend pieces without a Slurm: parsers over text captured from a real slurmctld
// 22.05 (tests/data/service/slurm/, see its README), the inventory → cluster file, the sbatch
// argument vector, and RunArgv.
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../telemetry/fixture.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/service/run_argv.h"
#include "hase/service/slurm_backend.h"
#include "hase/service/slurm_cluster.h"
#include "hase/service/slurm_text.h"
#include "service_fixture.h"
#include "testing.h"

namespace hase::service {
namespace {

std::string Fixture(const std::string& name) {
  return hase::testing::ReadFileForTest(hase::testing::SourceDir() + "/tests/data/service/slurm/" + name);
}

GpuTypeResolver Resolver(const GpuCatalog& catalog) {
  return [&catalog](std::string_view name) -> std::optional<std::string> {
    auto g = catalog.Find(name);
    if (!g.ok()) return std::nullopt;
    return (*g)->id;
  };
}

TEST(SlurmText, RecordKeepsValuesWithSpaces) {
  auto kv = ParseSlurmRecord("NodeName=t4-0 State=IDLE+DRAIN Reason=hase test [root@2026-12-02T03:11:34] X=1");
  EXPECT_EQ(kv["NodeName"], "t4-0");
  EXPECT_EQ(kv["State"], "IDLE+DRAIN");
  EXPECT_EQ(kv["Reason"], "hase test [root@2026-12-02T03:11:34]");
  EXPECT_EQ(kv["X"], "1");
}

TEST(SlurmText, GresForms) {
  auto g = ParseGres("gpu:h100:1,gpu:l4:2(S:0-1)");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ((*g)[0].type, "h100");
  EXPECT_EQ((*g)[0].count, 1);
  EXPECT_EQ((*g)[1].type, "l4");
  EXPECT_EQ((*g)[1].count, 2);
  auto untyped = ParseGres("gpu:4");
  ASSERT_TRUE(untyped.ok());
  EXPECT_EQ((*untyped)[0].type, "");
  EXPECT_EQ((*untyped)[0].count, 4);
  EXPECT_TRUE(ParseGres("(null)")->empty());
  EXPECT_TRUE(ParseGres("gpu:a100:x").status().IsParse());
}

TEST(SlurmText, NodesFromRealScontrol) {
  auto nodes = ParseScontrolNodes(Fixture("scontrol_show_node.txt"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].name, "a100-0");
  EXPECT_EQ((*nodes)[0].state, "IDLE");
  EXPECT_EQ((*nodes)[0].gres[0].type, "a100");
  EXPECT_EQ((*nodes)[0].gres[0].count, 2);
  EXPECT_EQ((*nodes)[1].name, "mix-0");
  ASSERT_EQ((*nodes)[1].gres.size(), 2u);
  EXPECT_EQ((*nodes)[2].name, "t4-0");
  EXPECT_EQ((*nodes)[2].state, "IDLE+DRAIN");
  EXPECT_EQ((*nodes)[2].reason, "hase test [root@2026-12-02T03:11:34]");
  EXPECT_EQ((*nodes)[2].partitions, std::vector<std::string>{"gpu"});
  EXPECT_TRUE(SlurmNodeUsable((*nodes)[0].state));
  EXPECT_FALSE(SlurmNodeUsable((*nodes)[2].state));
  EXPECT_TRUE(ParseScontrolNodes("State=IDLE Gres=gpu:a100:2\n").status().IsParse());
}

TEST(SlurmText, NodeStates) {
  for (const char* ok : {"IDLE", "MIXED", "ALLOCATED", "COMPLETING", "IDLE+PLANNED", "ALLOCATED+COMPLETING"}) {
    EXPECT_TRUE(SlurmNodeUsable(ok)) << ok;
  }
  for (const char* bad : {"DOWN", "DOWN+NOT_RESPONDING", "IDLE*", "MIXED+DRAIN", "ALLOCATED+DRAIN", "DRAINED",
                          "IDLE+FAIL", "FUTURE", "IDLE+POWERED_DOWN", "IDLE+MAINTENANCE", "UNKNOWN", ""}) {
    EXPECT_FALSE(SlurmNodeUsable(bad)) << bad;
  }
}

TEST(SlurmText, SqueueAndJobEnds) {
  auto jobs = ParseSqueue(Fixture("squeue.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, 2);
  EXPECT_EQ((*jobs)[0].name, "hase-2-1");
  EXPECT_EQ((*jobs)[0].state, "CANCELLED");
  EXPECT_EQ((*jobs)[0].nodes, "a100-0");
  EXPECT_EQ((*jobs)[1].id, 1);
  EXPECT_EQ((*jobs)[1].state, "FAILED");
  EXPECT_EQ((*jobs)[1].nodes, "mix-0");
  EXPECT_TRUE(ParseSqueue("12|x|RUNNING\n").status().IsParse());
  EXPECT_TRUE(ParseSqueue("12_3|x|RUNNING|n\n")->empty());  // array task: not hase's

  // The FAILED job ran `exit 3`; the CANCELLED one was scancel'ed while it slept (signal 15).
  auto failed = ParseSlurmRecord(Fixture("scontrol_show_job_failed.txt"));
  EXPECT_EQ(failed["JobState"], "FAILED");
  EXPECT_EQ(failed["TresPerNode"], "gres:gpu:l4:1");
  auto e = SlurmJobEnd(failed["JobState"], failed["ExitCode"], failed["Reason"], 1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, TaskEnd::Kind::kExited);
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_EQ(e->reason, "Slurm job 1 FAILED (NonZeroExitCode)");
  auto cancelled = ParseSlurmRecord(Fixture("scontrol_show_job_cancelled.txt"));
  e = SlurmJobEnd(cancelled["JobState"], cancelled["ExitCode"], cancelled["Reason"], 2);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, TaskEnd::Kind::kCancelled);
  EXPECT_EQ(e->exit_code, 128 + 15);

  EXPECT_FALSE(SlurmJobEnd("PENDING", "", "", 3));
  EXPECT_FALSE(SlurmJobEnd("RUNNING", "0:0", "", 3));
  EXPECT_FALSE(SlurmJobEnd("COMPLETING", "0:0", "", 3));
  EXPECT_EQ(SlurmJobEnd("COMPLETED", "0:0", "None", 3)->exit_code, 0);
  EXPECT_EQ(SlurmJobEnd("COMPLETED", "0:0", "None", 3)->reason, "");
  auto timeout = SlurmJobEnd("TIMEOUT", "0:15", "TimeLimit", 4);
  EXPECT_EQ(timeout->kind, TaskEnd::Kind::kExited);
  EXPECT_EQ(timeout->exit_code, 143);
  EXPECT_EQ(SlurmJobEnd("OUT_OF_MEMORY", "0:0", "", 5)->exit_code, 1);  // never reads as success
  EXPECT_EQ(SlurmJobEnd("NODE_FAIL", "0:0", "", 6)->kind, TaskEnd::Kind::kLost);
  EXPECT_EQ(SlurmJobEnd("CANCELLED by 0", "0:15", "", 7)->kind, TaskEnd::Kind::kCancelled);
  EXPECT_EQ(ParseSlurmExitCode("2:0"), 2);
  EXPECT_EQ(ParseSlurmExitCode("0:9"), 137);
  EXPECT_EQ(ParseSlurmExitCode("x"), -1);
}

TEST(SlurmCluster, InventoryFromRealNodesMapsGresToCatalogTypes) {
  auto catalog = GpuCatalog::Load("");
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  auto nodes = ParseScontrolNodes(Fixture("scontrol_show_node.txt"));
  ASSERT_TRUE(nodes.ok());
  auto inv = SlurmInventoryFromNodes(*nodes, "", {}, Resolver(*catalog));
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  auto cluster = sched::ParseClusterYaml(inv->cluster_yaml, "slurm", *catalog);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString() << "\n" << inv->cluster_yaml;
  ASSERT_EQ(cluster->gpus.size(), 9u);  // a100 ×2, h100 + l4 ×2, t4 ×4
  std::map<std::string, int> by_type;
  for (const sched::Gpu& g : cluster->gpus) {
    ++by_type[g.node + "/" + cluster->types[g.type].name];
    EXPECT_EQ(g.max_tasks, 1) << "Slurm GPU GRES are exclusive";
  }
  EXPECT_EQ(by_type["a100-0/A100-SXM4-40GB"], 2);
  EXPECT_EQ(by_type["mix-0/H100-SXM5-80GB"], 1);
  EXPECT_EQ(by_type["mix-0/L4"], 2);
  EXPECT_EQ(by_type["t4-0/T4"], 4);
  EXPECT_EQ(inv->gres.at({"mix-0", "L4"}), "l4");
  auto gres = MatchClusterToSlurm(*cluster, *inv);
  ASSERT_TRUE(gres.ok());
  EXPECT_EQ(gres->size(), 4u);

  // Overrides: a100 GRES are 80 GB parts at this site.
  auto over = SlurmInventoryFromNodes(*nodes, "", {{"a100", "A100-SXM4-80GB"}}, Resolver(*catalog));
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(over->gres.at({"a100-0", "A100-SXM4-80GB"}), "a100");
  // Unknown GRES type: NotFound with the flag in the hint.
  SlurmNode odd{"x-0", "IDLE", {{"gpu", "mystery9", 2}}, {"gpu"}, ""};
  auto bad = SlurmInventoryFromNodes({odd}, "", {}, Resolver(*catalog));
  EXPECT_TRUE(bad.status().IsNotFound());
  EXPECT_NE(bad.status().hint().find("--slurm-gres-type mystery9="), std::string::npos);
  // Untyped GRES and other partitions.
  SlurmNode untyped{"u-0", "IDLE", {{"gpu", "", 2}}, {"gpu"}, ""};
  EXPECT_TRUE(SlurmInventoryFromNodes({untyped}, "", {}, Resolver(*catalog)).status().IsInvalidArgument());
  EXPECT_TRUE(SlurmInventoryFromNodes(*nodes, "cpu", {}, Resolver(*catalog)).status().IsInvalidArgument());

  // A --config cluster file must name GPUs Slurm offers.
  auto file = sched::ParseClusterYaml("nodes:\n  - name: t4-0\n    gpus:\n      - {type: A100-SXM4-40GB, count: 1}\n",
                                      "cluster.yaml", *catalog);
  ASSERT_TRUE(file.ok());
  auto mismatch = MatchClusterToSlurm(*file, *inv);
  EXPECT_TRUE(mismatch.status().IsNotFound());
  EXPECT_NE(mismatch.status().hint().find("T4 (gpu:t4)"), std::string::npos) << mismatch.status().hint();
}

// MIG GRES as Slurm names them under AutoDetect=nvml ("<gpu>_<profile>", e.g.
// --gres=gpu:a100_3g.20gb:1): each becomes a GPU of the derived catalog type; a --config file
// that declares the same instances under `mig:` matches them and keeps the physical GPU (and
// so its DCGM series).
TEST(SlurmCluster, MigGresTypesBecomeInstanceGpus) {
  auto catalog = GpuCatalog::Builtin();
  ASSERT_TRUE(catalog.ok());
  SlurmNode n{"mig-0", "IDLE", {{"gpu", "a100_3g.20gb", 1}, {"gpu", "a100_1g.5gb", 2}, {"gpu", "a100_2g.10gb", 1}},
              {"gpu"}, ""};
  auto inv = SlurmInventoryFromNodes({n}, "", {}, Resolver(*catalog));
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->gres.at({"mig-0", "A100-SXM4-40GB-MIG-1g.5gb"}), "a100_1g.5gb");
  auto discovered = sched::ParseClusterYaml(inv->cluster_yaml, "slurm", *catalog);
  ASSERT_TRUE(discovered.ok()) << discovered.status().ToString() << "\n" << inv->cluster_yaml;
  ASSERT_EQ(discovered->gpus.size(), 4u);
  EXPECT_EQ(discovered->types[discovered->gpus[1].type].name, "A100-SXM4-40GB-MIG-1g.5gb");
  EXPECT_EQ(discovered->types[discovered->gpus[1].type].mig_profile, "1g.5gb");
  EXPECT_DOUBLE_EQ(discovered->gpus[1].memory_mib, 4.75 * 1024);
  EXPECT_FALSE(discovered->gpus[1].is_mig());  // physical GPU unknown: no DCGM pairing
  auto file = sched::ParseClusterYaml(
      "nodes:\n  - name: mig-0\n    gpus:\n      - {type: a100, mig: [3g.20gb, 2g.10gb, 1g.5gb, 1g.5gb]}\n",
      "cluster.yaml", *catalog);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto gres = MatchClusterToSlurm(*file, *inv);
  ASSERT_TRUE(gres.ok()) << gres.status().ToString();
  EXPECT_EQ(gres->at({"mig-0", "A100-SXM4-40GB-MIG-2g.10gb"}), "a100_2g.10gb");
}

TEST(SlurmBackend, SbatchArgvPinsNodeAndGresAndNeverUsesAShell) {
  SlurmOptions o;
  o.partition = "gpu";
  o.output_dir = "/var/log/hase";
  SlurmBackend b(o, {{{"mix-0", "L4"}, "l4"}});
  LaunchRequest q{42, 3, "echo '$(rm -rf /)'; exit 1", "mix-0", 1, "L4"};
  auto argv = b.SbatchArgv(q);
  ASSERT_TRUE(argv.ok()) << argv.status().ToString();
  const std::vector<std::string> want = {"sbatch",
                                         "--parsable",
                                         "--job-name=hase-42-3",
                                         "--nodelist=mix-0",
                                         "--gres=gpu:l4:1",
                                         "--no-requeue",
                                         "--partition=gpu",
                                         "--output=/var/log/hase/hase-42-3-%j.out",
                                         "--wrap=" + b.JobScript("hase-42-3", q.command)};
  EXPECT_EQ(*argv, want);
  // Without an output directory the command is the job script as given.
  o.output_dir.clear();
  EXPECT_EQ(SlurmBackend(o, {{{"mix-0", "L4"}, "l4"}}).SbatchArgv(q)->back(), "--wrap=echo '$(rm -rf /)'; exit 1");
  EXPECT_EQ(SlurmBackend::SbatchEnv(q), (std::vector<std::string>{"HASE_TASK_ID=42", "HASE_ATTEMPT=3"}));
  EXPECT_EQ(b.NativeResource("mix-0", "L4"), "gpu:l4:1");
  sched::Gpu on_mix{0, "mix-0", 1, 0, 1, 1}, elsewhere{1, "zzz", 0, 0, 1, 1};
  EXPECT_TRUE(b.RunsOn(on_mix));
  EXPECT_FALSE(b.RunsOn(elsewhere));
  // A task of a team with a Slurm account (docs/teams.md) is charged to it.
  q.account = "vision";
  argv = b.SbatchArgv(q);
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ((*argv)[7], "--account=vision");
  // A k-GPU task (sched/gang.h) asks for k GPUs of the type on the node.
  q.gpus = 4;
  argv = b.SbatchArgv(q);
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ((*argv)[4], "--gres=gpu:l4:4");
  EXPECT_EQ((*argv)[3], "--nodelist=mix-0");
  q.gpu_type = "T4";
  EXPECT_TRUE(b.SbatchArgv(q).status().IsInvalidArgument());
}

// `scontrol show job -d -o` as captured from slurmctld 22.05.8 (README): the GPU index Slurm
// gave, the times (local, no zone), and nothing while pending or after the end.
TEST(SlurmText, JobDetailGivesTheGpuIndexSlurmAllocated) {
  auto running = ParseSlurmJobGpus(Fixture("scontrol_show_job_detail_running.txt"));
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].node, "t4-0");
  EXPECT_EQ((*running)[0].gpu_indices, std::vector<int>{2});
  auto three = ParseSlurmJobGpus(Fixture("scontrol_show_job_detail_three_gpus.txt"));
  ASSERT_TRUE(three.ok());
  ASSERT_EQ(three->size(), 1u);
  EXPECT_EQ((*three)[0].gpu_indices, (std::vector<int>{0, 1, 2}));
  for (const char* f : {"scontrol_show_job_detail_pending.txt", "scontrol_show_job_detail_completed.txt",
                        "scontrol_show_job_detail_node_fail.txt"}) {
    auto none = ParseSlurmJobGpus(Fixture(f));
    ASSERT_TRUE(none.ok()) << f;
    EXPECT_TRUE(none->empty()) << f;
  }
  // Forms Slurm prints for other requests: a list, two types on one node.
  auto list = ParseSlurmJobGpus("JobId=9 JOB_GRES=gpu:2 Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:a100:2(IDX:0,3) x=y");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)[0].gpu_indices, (std::vector<int>{0, 3}));
  auto two = ParseSlurmJobGpus("Nodes=mix-0 CPU_IDs=0 Mem=0 GRES=gpu:h100:1(IDX:0),gpu:l4:1(IDX:2)");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ((*two)[0].gpu_indices, (std::vector<int>{0, 2}));
  EXPECT_TRUE(ParseSlurmJobGpus("Nodes=n1 GRES=gpu:t4:1(IDX:x)").status().IsParse());
  EXPECT_TRUE(ParseSlurmJobGpus("Nodes=n1 GRES=gpu:t4:1(IDX:2").status().IsParse());

  // Times: local wall time without a zone.
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  auto rec = ParseSlurmRecord(Fixture("scontrol_show_job_detail_completed.txt"));
  EXPECT_DOUBLE_EQ(ParseSlurmTime(rec["StartTime"]).value_or(0), 1796403356.0);  // 2026-12-04T16:55:56Z
  EXPECT_DOUBLE_EQ(ParseSlurmTime(rec["EndTime"]).value_or(0) - ParseSlurmTime(rec["StartTime"]).value_or(0), 20.0);
  ::setenv("TZ", "America/New_York", 1);  // EST: UTC-5
  ::tzset();
  EXPECT_DOUBLE_EQ(ParseSlurmTime("2026-12-04T11:55:56").value_or(0), 1796403356.0);
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  for (const char* bad : {"Unknown", "None", "N/A", "", "2026-13-01T00:00:00", "2026-12-04 16:55:56"}) {
    EXPECT_FALSE(ParseSlurmTime(bad)) << bad;
  }
  auto pending = ParseSlurmRecord(Fixture("scontrol_show_job_detail_pending.txt"));
  EXPECT_FALSE(ParseSlurmTime(pending["StartTime"]));
}

TEST(SlurmText, NodeConditionTellsDrainFromDown) {
  EXPECT_EQ(SlurmNodeCondition("IDLE"), NodeCondition::kUsable);
  EXPECT_EQ(SlurmNodeCondition("MIXED"), NodeCondition::kUsable);
  EXPECT_EQ(SlurmNodeCondition("IDLE+DRAIN"), NodeCondition::kDrained);
  EXPECT_EQ(SlurmNodeCondition("MIXED+DRAIN"), NodeCondition::kDrained);
  EXPECT_EQ(SlurmNodeCondition("ALLOCATED+MAINT"), NodeCondition::kDrained);
  EXPECT_EQ(SlurmNodeCondition("IDLE+POWERED_DOWN"), NodeCondition::kDrained);
  EXPECT_EQ(SlurmNodeCondition("DOWN"), NodeCondition::kDown);
  EXPECT_EQ(SlurmNodeCondition("DOWN+DRAIN"), NodeCondition::kDown);
  EXPECT_EQ(SlurmNodeCondition("DOWN*+NOT_RESPONDING"), NodeCondition::kDown);
  EXPECT_EQ(SlurmNodeCondition("IDLE+NOT_RESPONDING"), NodeCondition::kDown);
  EXPECT_EQ(SlurmNodeCondition("FAIL"), NodeCondition::kDown);
  // After a slurmctld restart every node is NOT_RESPONDING / UNKNOWN for a few seconds: not a
  // condition the backend reports (Slurm sets DOWN itself after SlurmdTimeout).
  for (const char* s : {"IDLE+NOT_RESPONDING", "IDLE*", "MIXED*", "UNKNOWN", "UNKNOWN*", "ALLOCATED+NOT_RESPONDING"}) {
    EXPECT_TRUE(SlurmNodeUnsettled(s)) << s;
  }
  for (const char* s : {"IDLE", "MIXED", "DOWN*+NOT_RESPONDING", "IDLE+DRAIN+NOT_RESPONDING", "FAIL", "DOWN", ""}) {
    EXPECT_FALSE(SlurmNodeUnsettled(s)) << s;
  }
  auto nodes = ParseScontrolNodes(Fixture("scontrol_show_node.txt"));
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(SlurmNodeCondition((*nodes)[2].state), NodeCondition::kDrained);  // t4-0 IDLE+DRAIN
}

TEST(RunArgv, CapturesOutputExitCodeAndTimesOut) {
  auto r = RunArgv({"sh", "-c", "echo out; echo err >&2; exit 7"}, 5);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  auto env = RunArgv({"sh", "-c", "echo $HASE_X $HOME"}, 5, {"HASE_X=1", "HOME=/h"});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->out, "1 /h\n");
  auto literal = RunArgv({"echo", "$(id)", ";", "x"}, 5);  // no shell: printed as given
  ASSERT_TRUE(literal.ok());
  EXPECT_EQ(literal->out, "$(id) ; x\n");
  auto missing = RunArgv({"/nonexistent/sbatch"}, 5);
  EXPECT_TRUE(missing.status().IsIO());
  EXPECT_NE(missing.status().message().find("cannot run /nonexistent/sbatch"), std::string::npos);
  auto slow = RunArgv({"sleep", "5"}, 0.2);
  EXPECT_TRUE(slow.status().IsIO());
  EXPECT_NE(slow.status().message().find("timed out"), std::string::npos);
  EXPECT_TRUE(RunArgv({}, 1).status().IsInvalidArgument());
}

}  // namespace
}  // namespace hase::service

namespace hase::service {
namespace {

// The run-once job script (SlurmBackend::JobScript), run by /bin/sh as slurmd would: the
// first run runs the command and records its exit code; a second run of the same job (a
// slurmctld that lost its record after a kill -9 starts it again) replays that code without
// running the command; a first run that left no code exits 75. Paths with a quote survive.
TEST(SlurmBackend, JobScriptRunsTheCommandAtMostOnce) {
  const std::string dir = hase::testing::FreshDir("jobscript") + "/it's out";
  std::filesystem::create_directories(dir);
  SlurmOptions o;
  o.output_dir = dir;
  SlurmBackend b(o, {});
  const std::string log = dir + "/ran.log";
  const std::string script = b.JobScript("hase-7-1", "echo ran >> \"" + log + "\"; exit 3");
  std::ofstream(dir + "/job.sh") << script;
  auto run = [&] { return hase::testing::RunCommand("sh \"" + dir + "/job.sh\"").exit_code; };
  EXPECT_EQ(run(), 3);
  EXPECT_EQ(run(), 3);  // replayed
  EXPECT_EQ(hase::testing::ReadFileForTest(log), "ran\n");
  EXPECT_EQ(hase::testing::ReadFileForTest(dir + "/hase-7-1.exit"), "3\n");
  // Started once and killed before its end: no exit code; a second run refuses.
  std::filesystem::remove(dir + "/hase-7-1.exit");
  EXPECT_EQ(run(), 75);
  EXPECT_EQ(hase::testing::ReadFileForTest(log), "ran\n");
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

}  // namespace
}  // namespace hase::service
