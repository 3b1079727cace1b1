// LearnedKernelModel: per-kernel-family XGBoost models of kernel latency
// (docs/predictor-learned.md).
//
// Prediction for one kernel on GPU type g with background load L:
//   latency_ms = base_ms × exp(f_family(features(kernel, g, L)))
//   base_ms    = dispatch_floor_ms + FixedRoofline(kernel, g).roofline_ms + TransferMs(kernel, g)
// f is trained on ln(measured / base) (target chosen by measurement: see the doc). The dispatch
// floor is a separate, explicit overhead term (../shared/data/PITFALLS.md 3): per (source, GPU,
// op) the 2nd-percentile latency of that op's training rows when the GPU is in the training set,
// else the median of that over training GPUs for (source, op), else 0. It is a property of the
// measuring host and framework and is not carried to kernels predicted for a runtime
// (KernelLatencyEstimator adapters pass include_dispatch_floor = false).
//
// File: gzip-compressed JSON {"format": "hase-learned-kernel-model", "version": 1, "features":
// [...], "train_options": {...}, "floors": {...}, "families": {"conv": {"rows": n, "booster":
// <XGBoost JSON model>}, ...}}. A file with another format or version is refused.
//
// Thread-safety: const methods may be called concurrently (prediction is serialised inside).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

inline constexpr const char* kLearnedModelFormat = "hase-learned-kernel-model";
inline constexpr int kLearnedModelVersion = 1;

struct LearnedTrainOptions {
  // Affects the result.
  uint64_t seed = 42;             // XGBoost seed (subsampling); same seed + data → same model
  int rounds = 250;               // boosting rounds per family
  int max_depth = 8;
  double eta = 0.1;               // learning rate
  double subsample = 0.8;         // row subsampling per tree
  double colsample = 0.8;         // feature subsampling per tree
  double min_child_weight = 2;
  size_t min_family_rows = 30;    // families with fewer rows are left to the analytic model
  // At most this many rows per (source, GPU, family) are used (a seeded uniform subsample);
  // keeps training time bounded on 2 CPU cores. 0 = no limit.
  size_t max_rows_per_group = 4000;
  int max_bin = 128;              // XGBoost histogram bins per feature
  bool use_load = true;           // false: load features zeroed (ablation for eval)
  // Train only these families (empty = all). Not saved; eval uses it to skip families absent
  // from a fold's test rows.
  std::vector<KernelFamily> only_families;
  // Affects speed only (results are identical for a fixed value).
  int nthread = 2;
};

// Wraps one XGBoost booster handle (defined in learned_model.cc).
class Booster;

class LearnedKernelModel {
 public:
  LearnedKernelModel();
  ~LearnedKernelModel();
  LearnedKernelModel(LearnedKernelModel&&) noexcept;
  LearnedKernelModel& operator=(LearnedKernelModel&&) noexcept;
  LearnedKernelModel(const LearnedKernelModel&) = delete;
  LearnedKernelModel& operator=(const LearnedKernelModel&) = delete;

  // Trains one booster per family with >= min_family_rows rows. REQUIRES: `gpus[i]` is the spec
  // of rows[i] (ResolveGpus). Rows flagged suspect_* must already be filtered by the caller.
  // Errors: InvalidArgument (no rows, size mismatch), Internal (XGBoost failure).
  static Result<LearnedKernelModel> Train(const std::vector<KernelSample>& rows,
                                          const std::vector<const GpuSpec*>& gpus,
                                          const LearnedTrainOptions& options);

  // Reads a model file (gzip or plain JSON). Errors: NotFound/IO (file), Parse (not JSON),
  // InvalidArgument (other format or version: the message names both versions), Internal.
  static Result<LearnedKernelModel> Load(const std::string& path);
  static Result<LearnedKernelModel> FromJsonText(const std::string& text, const std::string& where);
  // Writes the model (gzip when `path` ends in .gz). Errors: IO.
  Status Save(const std::string& path) const;
  std::string ToJsonText() const;

  bool HasFamily(KernelFamily f) const;
  // Training rows of family `f` that were pure kernel time (includes_transfer = 0); 0 when none.
  size_t KernelRows(KernelFamily f) const;
  std::vector<KernelFamily> families() const;
  const LearnedTrainOptions& options() const { return options_; }

  // Predicted latency_ms of each sample on gpus[i]. include_dispatch_floor = false drops the
  // floor term (a runtime's own launch overhead is added by the caller). Samples whose family
  // has no booster get NaN. Errors: InvalidArgument (size mismatch), Internal (XGBoost).
  Result<std::vector<double>> Predict(const std::vector<KernelSample>& samples,
                                      const std::vector<const GpuSpec*>& gpus,
                                      bool include_dispatch_floor = true) const;

  // The dispatch floor used for `s` on `gpu_id`, ms (see the class comment).
  double DispatchFloorMs(const KernelSample& s, const std::string& gpu_id) const;

 private:
  LearnedTrainOptions options_;
  std::map<KernelFamily, std::unique_ptr<Booster>> boosters_;
  std::map<KernelFamily, size_t> rows_;
  std::map<KernelFamily, size_t> kernel_rows_;
  std::map<std::string, double> floors_;          // "source|gpu|op" → ms
  std::map<std::string, double> default_floors_;  // "source|op" → ms
  mutable std::unique_ptr<std::mutex> mu_;        // serialises XGBoost prediction
};

// Resolves every sample's GPU name through `catalog`, rewriting `gpu` to the catalog id.
// Errors: NotFound naming the row (file:line), the name and the nearest catalog entries.
Result<std::vector<const GpuSpec*>> ResolveGpus(std::vector<KernelSample>& samples,
                                                const GpuCatalog& catalog);

}  // namespace hase::predict
