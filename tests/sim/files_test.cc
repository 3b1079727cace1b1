#include <gtest/gtest.h>

#include "hase/sched/cluster_file.h"
#include "hase/sched/workload_file.h"
#include "hase/sim/defaults.h"
#include "hase/sim/table_truth.h"
#include "hase/hw/gpu_catalog.h"

namespace hase::sched {
namespace {

const GpuCatalog& Catalog() {
  static const GpuCatalog c = *GpuCatalog::Builtin();
  return c;
}

TEST(ClusterFileTest, DefaultClusterHasFourTypesAnd24Gpus) {
  auto c = ParseClusterYaml(sim::DefaultClusterYaml(), "default", Catalog());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->types.size(), 4u);
  EXPECT_EQ(c->gpus.size(), 24u);
  EXPECT_EQ(c->types[0].name, "A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(c->types[0].memory_mib, 40 * 1024);
  EXPECT_EQ(c->GpuLabel(8), "rtx3090-0/0");
  EXPECT_EQ(c->gpus[8].max_tasks, 4);
}

TEST(ClusterFileTest, UnknownGpuTypeIsNotFoundWithLine) {
  const char* text = "nodes:\n  - name: n\n    gpus:\n      - {type: Z9000, count: 2}\n";
  auto c = ParseClusterYaml(text, "c.yaml", Catalog());
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsNotFound());
  EXPECT_NE(c.status().where().find("c.yaml:4"), std::string::npos) << c.status().ToString();
}

TEST(ClusterFileTest, MisspeltKeysAndDuplicateNodesAreErrorsWithLine) {
  struct Case {
    const char* text;
    const char* what;
    const char* line;
  };
  const Case cases[] = {
      {"max_task_per_gpu: 2\nnodes:\n  - name: n\n    gpus:\n      - {type: T4, count: 2}\n",
       "unknown cluster key 'max_task_per_gpu'", "c.yaml:1"},
      {"nodes:\n  - name: n\n    gpus:\n      - {type: T4, count: 2, memroy_mib: 8000}\n", "unknown gpu key 'memroy_mib'",
       "c.yaml:4"},
      {"nodes:\n  - name: n\n    gpu:\n      - {type: T4}\n", "unknown node key 'gpu'", "c.yaml:3"},
      {"nodes:\n  - name: n\n    gpus:\n      - {type: A100-SXM4-40GB, mig: [{profile: 3g.20gb, gid: 1}]}\n",
       "unknown mig item key 'gid'", "c.yaml:4"},
      {"nodes:\n  - name: n\n    gpus: [{type: T4}]\n  - name: n\n    gpus: [{type: T4}]\n", "node 'n' twice",
       "c.yaml:4"},
  };
  for (const Case& k : cases) {
    auto c = ParseClusterYaml(k.text, "c.yaml", Catalog());
    ASSERT_FALSE(c.ok()) << k.text;
    EXPECT_TRUE(c.status().IsInvalidArgument()) << c.status().ToString();
    EXPECT_NE(c.status().ToString().find(k.what), std::string::npos) << c.status().ToString();
    EXPECT_NE(c.status().where().find(k.line), std::string::npos) << c.status().ToString();
  }
}

TEST(ClusterFileTest, MalformedYamlGivesLineNumber) {
  const char* text = "name: x\nnodes:\n  - name: n\n    gpus: [ {type: T4\n  - oops: ]\n";
  auto c = ParseClusterYaml(text, "bad.yaml", Catalog());
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsParse());
  EXPECT_NE(c.status().where().find("bad.yaml:"), std::string::npos);
  EXPECT_NE(c.status().where(), "bad.yaml");
}

TEST(ClusterFileTest, MemoryAndSharingLimitsPerGpu) {
  const char* text =
      "max_tasks_per_gpu: 2\nnodes:\n  - name: n\n    count: 2\n    gpus:\n"
      "      - {type: a100, count: 1, memory_mib: 20000, max_tasks: 1}\n      - {type: Tesla T4}\n";
  auto c = ParseClusterYaml(text, "c.yaml", Catalog());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->gpus.size(), 4u);
  EXPECT_EQ(c->gpus[0].node, "n-0");
  EXPECT_DOUBLE_EQ(c->gpus[0].memory_mib, 20000);
  EXPECT_EQ(c->gpus[0].max_tasks, 1);
  EXPECT_EQ(c->types[c->gpus[1].type].name, "T4");
  EXPECT_EQ(c->gpus[1].max_tasks, 2);
  EXPECT_EQ(c->gpus[3].index, 1);
}

TEST(WorkloadFileTest, DefaultWorkloadHas200TasksOverFiveFamilies) {
  auto w = ParseWorkloadYaml(sim::DefaultWorkloadYaml(), "default");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->size(), 200u);
  std::set<std::string> families;
  for (const Task& t : *w) families.insert(t.family);
  EXPECT_EQ(families, (std::set<std::string>{"densenet", "mobilenet", "resnet", "vgg", "yolo"}));
  for (size_t i = 0; i < w->size(); ++i) EXPECT_EQ((*w)[i].id, static_cast<int>(i));
}

TEST(WorkloadFileTest, YamlFieldsAndSamples) {
  const char* text =
      "tasks:\n  - {model: yolov8n, batch_size: 8, samples: 100, arrival_s: 2}\n"
      "  - {name: a, model: resnet50, arrival_s: 1, memory_mib: 3000, priority: 2}\n";
  auto w = ParseWorkloadYaml(text, "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[0].name, "a");  // sorted by arrival
  EXPECT_DOUBLE_EQ((*w)[0].arrival_ms, 1000);
  EXPECT_EQ((*w)[0].priority, 2);
  EXPECT_EQ((*w)[1].num_batches, 13);  // ceil(100 / 8)
  EXPECT_EQ((*w)[1].input_size, 640);  // YOLO default
  EXPECT_EQ((*w)[1].family, "yolo");
}

TEST(WorkloadFileTest, BadInputsNameTheLine) {
  auto a = ParseWorkloadYaml("tasks:\n  - {batch_size: 8}\n", "w.yaml");
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(a.status().IsInvalidArgument());
  EXPECT_NE(a.status().where().find("w.yaml:2"), std::string::npos);
  auto b = ParseWorkloadYaml("tasks:\n  - {model: m, batch_size: 0}\n", "w.yaml");
  EXPECT_FALSE(b.ok());
  auto c = ParseWorkloadYaml("tasks: [\n", "w.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsParse());
  auto d = ParseWorkloadCsv("model,batch_size,arrival_s\nresnet50,8,0\nvgg16,x,1\n", "w.csv");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().where(), "w.csv:3");
  auto e = ParseWorkloadCsv("model,batch_size,arrival_s\nresnet50,8,0.5\n", "w.csv");
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ((*e)[0].arrival_ms, 500);
  // A misspelt YAML key is refused (as an unknown CSV column is), not defaulted.
  auto f = ParseWorkloadYaml("tasks:\n  - {model: resnet50,\n     arival_s: 3}\n", "w.yaml");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("unknown task key 'arival_s'"), std::string::npos);
  EXPECT_EQ(f.status().where(), "w.yaml:3");
}

// Workload files share the REST API's field ranges (task_limits.h): an overflowing sample count
// is an error at its line, not a wrapped batch count.
TEST(WorkloadFile, FieldRangesMatchTheRestApi) {
  auto w = ParseWorkloadYaml(
      "tasks:\n  - {model: resnet18, batch_size: 2, samples: 9223372036854775807}\n", "w.yaml");
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(w.status().IsInvalidArgument()) << w.status().ToString();
  EXPECT_NE(w.status().ToString().find("samples must be between"), std::string::npos)
      << w.status().ToString();
  EXPECT_EQ(w.status().where(), "w.yaml:2");
  auto ok = ParseWorkloadYaml("tasks:\n  - {model: resnet18, batch_size: 1048576}\n", "w.yaml");
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

// Issue #15 (5): clusters of 10^9 nodes or GPUs, 10^5 × 10^4, and nested YAML aliases hung
// for minutes; each is now one error at its line, at once (documented limits, cluster_file.h).
TEST(ClusterFile, LimitsAreErrorsNotHangs) {
  const std::string cases[] = {
      "nodes:\n  - name: n\n    count: 1000000000\n    gpus:\n      - {type: T4}\n",
      "nodes:\n  - name: n\n    gpus:\n      - {type: T4, count: 1000000000}\n",
      "nodes:\n  - name: n\n    count: 100000\n    gpus:\n      - {type: T4, count: 10000}\n",
      "max_tasks_per_gpu: 100000\nnodes:\n  - name: n\n    gpus:\n      - {type: T4}\n",
  };
  for (const std::string& text : cases) {
    auto c = ParseClusterYaml(text, "c.yaml", Catalog());
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_TRUE(c.status().IsInvalidArgument()) << c.status().ToString();
    EXPECT_EQ(c.status().where().rfind("c.yaml:", 0), 0u) << c.status().ToString();
  }
  std::string aliases = "a0: &a0 [x]\n";
  for (int i = 1; i < 200; ++i) {
    aliases += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" +
               std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  }
  auto a = ParseClusterYaml(aliases + "nodes: []\n", "c.yaml", Catalog());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().ToString().find("YAML anchors"), std::string::npos) << a.status().ToString();
  // 10 000 GPUs over 1 250 nodes (the largest the decision bench measures) load.
  auto big = ParseClusterYaml(
      "nodes:\n  - name: n\n    count: 1250\n    gpus:\n      - {type: T4, count: 8}\n", "c.yaml",
      Catalog());
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->gpus.size(), 10000u);
}

}  // namespace
}  // namespace hase::sched

// Issue #11: the truth table reads what `hase simulate --out` writes (profiles.csv: memory_mib
// informative, runtime optional) and matches a task's runtime before rows without one.
namespace hase::sim {
namespace {

TEST(TableTruthTest, ReadsProfilesCsvWithRuntimeColumn) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  const std::string text =
      "model,batch_size,input_size,gpu_type,latency_ms,demand,memory_mib,runtime\n"
      "resnet50,1,224,A100-SXM4-40GB,0.844,0.88,640,\n"
      "resnet50,1,224,A100-SXM4-40GB,4.721,0.26,640,pytorch-eager\n";
  auto t = TableTruth::Parse(text, "profiles.csv", *cat);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  sched::Task task;
  task.model = "resnet50";
  task.num_batches = 10;
  const sched::GpuType a100{"A100-SXM4-40GB"};
  EXPECT_NEAR(t->Profile(task, a100)->isolated_ms, 8.44, 1e-9);
  task.runtime = "pytorch-eager";
  EXPECT_NEAR(t->Profile(task, a100)->isolated_ms, 47.21, 1e-9);
  EXPECT_NEAR(t->Profile(task, a100)->demand, 0.26, 1e-12);
  task.runtime = "tensorrt";  // no row of its own: the row without a runtime
  EXPECT_NEAR(t->Profile(task, a100)->isolated_ms, 8.44, 1e-9);

  // The old five/six-cell form still reads; an unknown column or a short row is a Parse error.
  EXPECT_TRUE(TableTruth::Parse("model,batch_size,input_size,gpu_type,latency_ms\n"
                                "resnet50,1,224,T4,5,0.5\n", "old.csv", *cat).ok());
  auto bad = TableTruth::Parse("model,batch_size,input_size,gpu_type,latency_ms,speed\n", "b.csv", *cat);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("speed"), std::string::npos);
  auto short_row = TableTruth::Parse(
      "model,batch_size,input_size,gpu_type,latency_ms,demand,memory_mib,runtime\nresnet50,1,224,T4,5\n",
      "s.csv", *cat);
  ASSERT_FALSE(short_row.ok());
  EXPECT_TRUE(short_row.status().IsParse());
}

}  // namespace
}  // namespace hase::sim
