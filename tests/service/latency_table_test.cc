// `hase serve --latency-table`: the file's own rows (with or without a header) and `hase
// simulate`'s profiles.csv as written (rows as model|batch|input keys).
#include <gtest/gtest.h>

#include <fstream>

#include "hase/service/latency_table.h"

namespace hase::service {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

sched::Task TaskOf(const std::string& model, int batch, int input, int64_t batches) {
  sched::Task t;
  t.model = model;
  t.batch_size = batch;
  t.input_size = input;
  t.num_batches = batches;
  return t;
}

TEST(LatencyTable, HeaderRowAndProfilesCsvAreRead) {
  const auto identity = [](std::string_view s) { return std::optional<std::string>(std::string(s)); };
  auto own = LoadLatencyTable(Write("own.csv", "model,gpu_type,per_batch_ms,demand,memory_mib\n"
                                                "resnet50,T4,40,0.8,2000\n"),
                              identity);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  auto p = (*own)->Profile(TaskOf("resnet50", 8, 224, 10), sched::GpuType{"T4", 15360, 8.1, 320});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->isolated_ms, 400);
  // The head of a real profiles.csv (hase simulate --cluster tests/data/sim/light_cluster.yaml
  // --workload tests/data/sim/light_workload.yaml --truth perfect).
  auto prof = LoadLatencyTable(
      Write("profiles.csv", "model,batch_size,input_size,gpu_type,latency_ms,demand,memory_mib,runtime\n"
                            "densenet121,1,224,A100-SXM4-40GB,11.4367,0.1997,643,pytorch-eager\n"
                            "densenet121,4,224,A100-SXM4-40GB,12.9,0.35,700,pytorch-eager\n"),
      identity);
  ASSERT_TRUE(prof.ok()) << prof.status().ToString();
  const sched::GpuType a100{"A100-SXM4-40GB", 40960, 19.5, 1555};
  auto one = (*prof)->Profile(TaskOf("densenet121", 1, 224, 2), a100);
  auto four = (*prof)->Profile(TaskOf("densenet121", 4, 224, 2), a100);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_DOUBLE_EQ(one->isolated_ms, 2 * 11.4367);
  EXPECT_DOUBLE_EQ(four->isolated_ms, 2 * 12.9);
  EXPECT_DOUBLE_EQ(four->memory_mib, 700);
  EXPECT_FALSE((*prof)->Profile(TaskOf("densenet121", 8, 224, 2), a100).ok());  // a shape it lacks
  auto bad = LoadLatencyTable(Write("bad.csv", "model,gpu,ms\nresnet50,T4,40,0.8,2000\n"), identity);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("bad.csv:1"), std::string::npos) << bad.status().ToString();
}

}  // namespace
}  // namespace hase::service
