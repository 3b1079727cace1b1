// TableTruth (`--truth table:FILE`): measured isolated latencies, optional pairwise slowdowns.
//
// FILE is CSV with up to two sections, each starting with its header row:
//   model,batch_size,input_size,gpu_type,latency_ms[,demand][,memory_mib][,runtime]
//   resnet50,32,224,A100-SXM4-40GB,41.2,0.9      latency per batch, ms; demand 0–1 (default 1)
// The optional columns may come in any order after latency_ms (the header names them);
// memory_mib is read and ignored (profiles.csv of `hase simulate --out` carries it); runtime
// (predict/runtime_profile.h name, empty = any) matches Task::runtime first, then rows without
// one.
//   victim,other,gpu_type,slowdown
//   resnet50,vgg16,A100-SXM4-40GB,1.7            victim's slowdown factor beside `other`
// batch_size / input_size may be empty: the row then matches any (used when no exact row).
// gpu_type is any spelling the GPU catalog resolves. Pairs absent from the table fall back to
// the ContentionModel (contention_model.h).
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "hase/hw/gpu_catalog.h"
#include "hase/sim/truth_model.h"

namespace hase::sim {

class TableTruth final : public TruthModel {
 public:
  // Errors: IO, Parse (FILE:LINE: bad header, cell count, number), NotFound (unknown GPU type,
  // FILE:LINE).
  static Result<TableTruth> Load(const std::string& path, const GpuCatalog& catalog,
                                 sched::ContentionModel contention = {});
  static Result<TableTruth> Parse(const std::string& text, const std::string& where,
                                  const GpuCatalog& catalog,
                                  sched::ContentionModel contention = {});

  std::string Name() const override { return "table:" + where_; }
  Result<TrueProfile> Profile(const sched::Task& task, const sched::GpuType& type) const override;
  // The measured pairwise slowdowns, added up (1 + Σ_j (s_ij − 1) + the background's share)
  // when every co-runner has a row; otherwise the contention model.
  double Slowdown(const sched::Task& victim, double victim_demand, const CoRunners& others,
                  double background, const sched::GpuType& type) const override;
  const sched::ContentionModel& contention() const override { return contention_; }

 private:
  std::string where_;
  sched::ContentionModel contention_;
  // (model, batch or -1, input or -1, type id, runtime or "") → per-batch latency and demand.
  std::map<std::tuple<std::string, int64_t, int64_t, std::string, std::string>, TrueProfile>
      latency_;
  std::map<std::tuple<std::string, std::string, std::string>, double> slowdown_;
};

}  // namespace hase::sim
