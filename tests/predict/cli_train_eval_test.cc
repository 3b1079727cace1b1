// End-to-end: `hase train`, `hase eval`, `hase dataset convert` through the built binary.
#include <cstdio>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "hase/predict/csv.h"
#include "testing.h"

namespace hase::predict {
namespace {

using hase::testing::HaseBin;
using hase::testing::RunCommand;

// 240 elementwise rows on two GPUs: latency = 0.03 ms + bytes / (0.8 × bandwidth).
std::string WriteTinyCsv(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream f(path);
  f << "# tiny test set\nsource,gpu,family,op,elements,latency_ms\n";
  std::mt19937_64 rng(3);
  for (int i = 0; i < 240; ++i) {
    const bool t4 = i % 2 == 0;
    const long long elements = 1000LL << (rng() % 16);
    const double bw = t4 ? 320e9 : 900e9;
    f << "probe," << (t4 ? "Tesla T4" : "V100-SXM2-16GB") << ",elementwise,relu," << elements << ","
      << 0.03 + 8.0 * elements / (0.8 * bw) * 1e3 << "\n";
  }
  return path;
}

TEST(CliTrainEvalTest, TrainThenEvalPrintsTables) {
  const std::string csv = WriteTinyCsv("hase_cli_tiny.csv");
  const std::string model = ::testing::TempDir() + "/hase_cli_tiny_model.json.gz";
  auto t = RunCommand(HaseBin() + " train --data " + csv + " --out " + model +
                      " --rounds 20 --max-depth 3 --seed 5");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("elementwise"), std::string::npos);
  auto e = RunCommand(HaseBin() + " eval --model " + model + " --data " + csv);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("split none"), std::string::npos);
  EXPECT_NE(e.out.find("per kernel family"), std::string::npos);
  EXPECT_NE(e.out.find("V100-SXM2-16GB"), std::string::npos);
  EXPECT_NE(e.out.find("MAPE%"), std::string::npos);
  auto cv = RunCommand(HaseBin() + " eval --data " + csv +
                       " --split leave-gpu-out --rounds 10");
  ASSERT_EQ(cv.exit_code, 0) << cv.err;
  EXPECT_NE(cv.err.find("training fold T4"), std::string::npos);
  std::remove(model.c_str());
}

TEST(CliTrainEvalTest, BadInputsGiveOneClearError) {
  const std::string bad = ::testing::TempDir() + "/hase_cli_bad.csv";
  {
    std::ofstream f(bad);
    f << "source,gpu,family,op,elements,latency_ms\nprobe,T4,elementwise,relu,100,0.1\n"
         "probe,T4,elementwise,relu,abc,0.1\n";
  }
  auto r = RunCommand(HaseBin() + " train --data " + bad + " --out /tmp/x.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("hase_cli_bad.csv:3"), std::string::npos) << r.err;

  const std::string unknown = ::testing::TempDir() + "/hase_cli_unknown.csv";
  {
    std::ofstream f(unknown);
    f << "source,gpu,family,op,elements,latency_ms\nprobe,Tesla Q9000,elementwise,relu,100,0.1\n";
  }
  r = RunCommand(HaseBin() + " train --data " + unknown + " --out /tmp/x.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Q9000"), std::string::npos) << r.err;

  const std::string old_model = ::testing::TempDir() + "/hase_cli_old_model.json";
  {
    std::ofstream f(old_model);
    f << R"({"format": "hase-learned-kernel-model", "version": 0, "families": {}})";
  }
  r = RunCommand(HaseBin() + " eval --model " + old_model + " --data " + bad);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("version 0"), std::string::npos) << r.err;

  r = RunCommand(HaseBin() + " eval --data " + bad + " --split sideways");
  EXPECT_NE(r.exit_code, 0);
}

TEST(CliTrainEvalTest, DatasetConvertWritesCanonicalCsv) {
  HASE_REQUIRE_SHARED();
  const std::string out = ::testing::TempDir() + "/hase_tophub.csv";
  auto r = RunCommand(HaseBin() + " dataset convert --in " + hase::testing::SharedDir() +
                      "/data/kernels/tophub --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kept 443"), std::string::npos) << r.out;
  auto text = ReadTextFile(out);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->rfind("# schema: hase-kernels 1", 0), 0u);
  std::remove(out.c_str());
}

}  // namespace
}  // namespace hase::predict
