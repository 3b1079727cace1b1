// Bounded, deterministic mutation fuzzing of every input parser (issue #15): real seed inputs
// (zoo models, dcgm-exporter pages, cluster/workload files, REST bodies) mutated by a seeded
// mt19937_64 for HASE_FUZZ_ITERATIONS inputs per target (default 1 000; tools/ci/sanitize.sh
// runs 10 000 under ASan + UBSan). Each input must end in OK or a clean Status (a message, not
// Internal), within 10 s, without throwing. A failing input is written next to the test's
// temp dir and named in the failure, to become a reproducer test.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../telemetry/fixture.h"
#include "fuzz_targets.h"
#include "testing.h"

namespace hase::fuzz {
namespace {

int Iterations() {
  const char* env = std::getenv("HASE_FUZZ_ITERATIONS");
  return env ? std::max(1, std::atoi(env)) : 1000;
}

std::string Read(const std::string& rel) {
  return hase::testing::ReadFileForTest(hase::testing::SourceDir() + "/" + rel);
}

// Values that break parsers: boundaries of int32/int64/double, NaN, invalid UTF-8, YAML and
// JSON structure, Prometheus syntax.
const std::vector<std::string> kTokens = {
    "0", "-1", "2147483648", "4294967296", "9223372036854775807", "-9223372036854775808",
    "18446744073709551616", "1e308", "-1e308", "NaN", "+Inf", "1e-320", "\xff\xfe", "\xc3\x28",
    "\"", "\\", "{", "}", "[", "]", ":", ",", "\n", "  ", "*a", "&a ", "!!binary ", "- ", "#",
    "=\"", "{gpu=\"0\"}", "count: 1000000000", "\x00", "\t"};

class Mutator {
 public:
  Mutator(uint64_t seed, const std::vector<std::string>& seeds) : rng_(seed), seeds_(seeds) {}

  std::string Next() {
    std::string s = seeds_[Pick(seeds_.size())];
    const int ops = 1 + static_cast<int>(Pick(4));
    for (int i = 0; i < ops; ++i) Mutate(s);
    return s;
  }

 private:
  size_t Pick(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }

  void Mutate(std::string& s) {
    switch (Pick(8)) {
      case 0:  // flip one bit
        if (!s.empty()) s[Pick(s.size())] ^= static_cast<char>(1u << Pick(8));
        break;
      case 1: {  // an interesting byte
        static const char kBytes[] = {0, '\xff', '\x7f', '\x80', '\x01'};
        if (!s.empty()) s[Pick(s.size())] = kBytes[Pick(sizeof kBytes)];
        break;
      }
      case 2:  // delete a range
        if (!s.empty()) {
          const size_t at = Pick(s.size());
          s.erase(at, 1 + Pick(16));
        }
        break;
      case 3:  // duplicate a range
        if (!s.empty() && s.size() < (1u << 20)) {
          const size_t at = Pick(s.size()), len = 1 + Pick(std::min<size_t>(64, s.size() - at));
          s.insert(Pick(s.size() + 1), s.substr(at, len));
        }
        break;
      case 4:  // insert a token
      case 5: {
        const std::string& t = kTokens[Pick(kTokens.size())];
        s.insert(Pick(s.size() + 1), t);
        break;
      }
      case 6:  // truncate
        s.resize(Pick(s.size() + 1));
        break;
      case 7: {  // splice with another seed
        const std::string& o = seeds_[Pick(seeds_.size())];
        if (!o.empty()) s = s.substr(0, Pick(s.size() + 1)) + o.substr(Pick(o.size()));
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>& seeds_;
};

void RunTarget(const std::string& name, uint64_t seed, const std::vector<std::string>& seeds,
         const std::function<Status(std::string_view)>& target) {
  ASSERT_FALSE(seeds.empty());
  for (const std::string& s : seeds) ASSERT_FALSE(s.empty()) << name << ": a seed file is missing";
  // The seeds themselves must pass: mutations start from valid input.
  for (const std::string& s : seeds) {
    Status st = target(s);
    ASSERT_TRUE(st.ok()) << name << " seed: " << st.ToString();
  }
  Mutator m(seed, seeds);
  const int n = Iterations();
  int clean_errors = 0;
  for (int i = 0; i < n; ++i) {
    const std::string input = m.Next();
    const auto t0 = std::chrono::steady_clock::now();
    std::string problem;
    try {
      Status st = target(input);
      if (!st.ok()) {
        ++clean_errors;
        if (st.IsInternal()) problem = "Internal status: " + st.ToString();
        if (st.message().empty()) problem = "error without a message";
      }
    } catch (const std::exception& e) {
      problem = std::string("exception: ") + e.what();
    } catch (...) {
      problem = "unknown exception";
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (secs > 10) problem = "took " + std::to_string(secs) + " s";
    if (!problem.empty()) {
      const std::string path = (std::filesystem::temp_directory_path() /
                                ("hase-fuzz-" + name + "-" + std::to_string(i) + ".bin")).string();
      std::ofstream(path, std::ios::binary) << input;
      FAIL() << name << " input " << i << " (seed " << seed << "): " << problem << "; input saved to " << path;
    }
  }
  std::printf("%s: %d inputs, %d clean errors\n", name.c_str(), n, clean_errors);
}

TEST(Fuzz, OnnxLoader) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("hase-fuzz-onnx-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  RunTarget("onnx", 1, {Read("models/vgg11.onnx"), Read("models/resnet18.onnx")},
      [&](std::string_view b) { return FuzzOnnxModel(b, dir); });
  std::filesystem::remove_all(dir);
}

TEST(Fuzz, PrometheusText) {
  RunTarget("prom", 2,
      {Read("tests/data/telemetry/dcgm_node1_a100_default.prom"),
       Read("tests/data/telemetry/dcgm_node2_h100_t4_k8s.prom")},
      FuzzPromText);
}

TEST(Fuzz, ClusterFile) {
  RunTarget("cluster", 3,
      {Read("tests/data/sim/light_cluster.yaml"), Read("tests/data/sim/mixed8_cluster.yaml"),
       Read("examples/cluster.yaml")},
      FuzzClusterYaml);
}

TEST(Fuzz, WorkloadFile) {
  RunTarget("workload", 4,
      {Read("tests/data/sim/light_workload.yaml"), Read("tests/data/sim/mixed8_workload.yaml"),
       Read("examples/workload.yaml")},
      FuzzWorkload);
}

TEST(Fuzz, RestTaskJson) {
  RunTarget("task_json", 5,
      {R"({"key":"c-1","model":"resnet50","batch_size":8,"samples":800})",
       R"({"model":"resnet18","batch_size":2,"num_batches":10,"priority":3,"memory_mib":2000,)"
       R"("command":"python infer.py --n 10","runtime":"ort-cuda","input_size":224})",
       R"({"model":"vgg16","gpus":2,"name":"job-7","pod":"ml/job-7"})"},
      FuzzTaskJson);
}

}  // namespace
}  // namespace hase::fuzz
