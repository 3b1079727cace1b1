// LatencyOracle: what a policy believes a task costs on a GPU type.
//
// The one question `sched` asks about performance: "how long does task T take alone on a GPU
// of type g, how much of that GPU does it keep busy, and how much memory does it need?". The
// effect of co-located tasks follows from those answers through the ContentionModel
// (contention_model.h); PredictTimeline (timeline.h) combines both into completion times on one
// GPU. `sched` knows nothing of ONNX: implementations live outside it (sim/predictor_oracle.h
// backs it with the analytic predictor; tests use TableOracle with hand-set numbers).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/sched/contention_model.h"
#include "hase/sched/task.h"

namespace hase::sched {

// One task on one GPU type, in isolation.
struct TaskProfile {
  double isolated_ms = 0;  // whole task (all batches) alone on an idle GPU of the type, ms, > 0
  double demand = 1.0;     // fraction 0–1 of the GPU the task keeps busy alone (≈ DCGM
                           // SM_ACTIVE while it runs); drives the slowdown it inflicts
  double memory_mib = 0;   // GPU memory it needs, MiB (Task::memory_mib when that is set)
  // p10–p90 interval of isolated_ms (predict/latency_calibration.h), ms; 0 = the oracle gives
  // none (a hand-set table).
  double isolated_p10_ms = 0;
  double isolated_p90_ms = 0;
};

// Thread-safety: implementations must allow concurrent const calls.
class LatencyOracle {
 public:
  virtual ~LatencyOracle() = default;

  // The profile of `task` on `type`. Errors: NotFound when the oracle has no entry for the
  // type or model, Unsupported when the model cannot be predicted. Never throws.
  virtual Result<TaskProfile> Profile(const Task& task, const GpuType& type) const = 0;

  // The co-location model this oracle's predictions assume.
  virtual const ContentionModel& contention() const = 0;

  // The dims after the batch of `model`'s first input as the model itself declares them
  // ({3, 640, 640} for YOLOv8), what a task that states no input shape is priced at.
  // Errors: Unsupported when the oracle has no model file to read (a latency table: the
  // default), NotFound (no such model), InvalidArgument when a dim is not fixed in the model
  // (the caller must state the shape), the reader's errors otherwise.
  virtual Result<std::vector<int64_t>> DeclaredInputShape(const std::string& model) const {
    return Status::Unsupported("this latency oracle has no model file to read the input shape of '" + model +
                               "' from");
  }
};

// An oracle from a hand-set table keyed by (ProfileKey(task) or task model, type name). Lookup
// tries "model|batch|input" first, then the bare model name. isolated_ms in the table is per
// batch and is multiplied by Task::num_batches. Used by tests and as a fallback.
class TableOracle final : public LatencyOracle {
 public:
  explicit TableOracle(ContentionModel contention = {}) : contention_(contention) {}

  // Sets the entry for (key, type_name); per_batch_ms > 0, demand in (0, 1].
  void Set(const std::string& key, const std::string& type_name, double per_batch_ms,
           double demand, double memory_mib);

  Result<TaskProfile> Profile(const Task& task, const GpuType& type) const override;
  const ContentionModel& contention() const override { return contention_; }

 private:
  ContentionModel contention_;
  std::map<std::pair<std::string, std::string>, TaskProfile> table_;  // per-batch isolated_ms
};

}  // namespace hase::sched
