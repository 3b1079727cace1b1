// A synthetic fleet shared by the scheduling benchmarks (sched_decision_bench, live_plan_bench):
// `gpus` GPUs of four types in turn (A100, V100, RTX 3090, T4; 8 per node, co-location 4) and a
// table oracle for five models whose per-batch time is (m + 1) × 5 ms × the type's relative
// speed (1.0, 1.3, 0.8, 2.5), demand 0.3 + 0.15 m, memory 1000 + 800 m MiB.
#pragma once

#include <memory>
#include <string>

#include "hase/sched/cluster.h"
#include "hase/sched/latency_oracle.h"

namespace hase::bench {

inline sched::Cluster FourTypeFleet(int gpus) {
  sched::Cluster c;
  c.name = "bench";
  c.types = {{"A100-SXM4-40GB", 40960, 19.5, 1555},
             {"V100-SXM2-16GB", 16384, 15.7, 900},
             {"RTX-3090", 24576, 35.6, 936},
             {"T4", 15360, 8.1, 320}};
  for (int i = 0; i < gpus; ++i) {
    c.gpus.push_back({i, "n" + std::to_string(i / 8), i % 8, i % 4, c.types[i % 4].memory_mib, 4});
  }
  return c;
}

// The five models of FiveModelTable.
inline constexpr const char* kFleetModels[] = {"resnet50", "vgg16", "mobilenet_v2", "yolov8s", "densenet121"};

inline std::shared_ptr<sched::TableOracle> FiveModelTable(const sched::Cluster& c) {
  auto o = std::make_shared<sched::TableOracle>();
  const double speed[] = {1.0, 1.3, 0.8, 2.5};  // per type, relative per-batch time
  for (int m = 0; m < 5; ++m) {
    for (int t = 0; t < 4; ++t) {
      o->Set(kFleetModels[m], c.types[t].name, (m + 1) * 5.0 * speed[t], 0.3 + 0.15 * m, 1000 + 800 * m);
    }
  }
  return o;
}

}  // namespace hase::bench
