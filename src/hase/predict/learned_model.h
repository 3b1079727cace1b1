// LearnedKernelModel: per-kernel-family XGBoost models of kernel latency
// (docs/predictor-learned.md).
//
// Prediction for one kernel on GPU type g with background load L:
//   latency_ms = base_ms × exp(f_family(features(kernel, g, F(g), L)))
//   base_ms    = dispatch_floor_ms + FiguresRoofline(kernel, g, F(g)).roofline_ms + TransferMs(kernel, g)
// F(g) are the normaliser figures of g (FiguresFor): with profile source "datasheet" the
// datasheet peaks; with "probe" the achieved figures of an emulated probe on each training GPU's
// own rows (probe_emulation.h), a measured profile passed by the caller, or, for a GPU with
// neither, datasheet × the median achieved/datasheet ratio of the training GPUs.
// f is trained on ln(measured / base) (target chosen by measurement: see the doc). The dispatch
// floor is a separate, explicit overhead term (../shared/data/PITFALLS.md 3): per (source, GPU,
// op) the 2nd-percentile latency of that op's training rows, capped at 1.5 × the op's fastest
// row (a 2nd percentile above that is compute, not dispatch), when the GPU is in the training set,
// else the median of that over training GPUs for (source, op) (scaled by a floor probe when one
// is given: DispatchFloorMs), else 0. It is a property of the
// measuring host and framework and is not carried to kernels predicted for a runtime
// (KernelLatencyEstimator adapters pass include_dispatch_floor = false).
//
// One booster per family for kernel times and, where such rows exist, one for timings that
// include host copies ("conv+transfer"); a sample uses the booster of its kind, else the other.
//
// File: gzip-compressed JSON {"format": "hase-learned-kernel-model", "version": 2, "features":
// [...], "train_options": {...}, "floors": {...}, "probe_figures": {gpu: {...}},
// "fallback_efficiency": {...}, "probe_floor_median": {...}, "families": {"conv": {"rows": n,
// "booster": <XGBoost JSON model>}, "conv+transfer": {...}, ...}}. A file with another format
// or version is refused.
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
#include "hase/predict/features.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

inline constexpr const char* kLearnedModelFormat = "hase-learned-kernel-model";
inline constexpr int kLearnedModelVersion = 2;

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
  // Normaliser figures of the training GPUs: "datasheet" (peaks) or "probe" (emulated probe on
  // each GPU's own rows, probe_rows rows per probe; probe_emulation.h).
  std::string profile_source = "datasheet";
  size_t probe_rows = 3;
  // false: raw datasheet columns are written as missing (ExtractFeatures).
  bool spec_features = true;
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
  // `figures` (GPU id → achieved figures, e.g. a measured profile or an emulated probe of a GPU
  // absent from training) overrides FiguresFor for those GPUs; ignored with profile source
  // "datasheet" (the model was trained on datasheet peaks).
  Result<std::vector<double>> Predict(const std::vector<KernelSample>& samples,
                                      const std::vector<const GpuSpec*>& gpus,
                                      bool include_dispatch_floor = true,
                                      const std::map<std::string, NormFigures>& figures = {}) const;

  // The normaliser figures of `gpu`: fields > 0 of `override` (profile source "probe" only),
  // else the training GPU's probe figures, else datasheet × fallback efficiency; datasheet peaks
  // with profile source "datasheet". Every field is filled (> 0 where the datasheet is).
  NormFigures FiguresFor(const GpuSpec& gpu, const NormFigures* override = nullptr) const;
  // Normaliser figures from a hase-probe profile (docs/microbenchmark-profile.md): DRAM copy
  // bandwidth and the FP16 tensor GEMM figure as measured; the profile's FP32 / FP16 figures are
  // FMA-chain peaks (the sustained clock), not GEMMs, so they are scaled by the training GPUs'
  // median GEMM efficiency (fallback efficiency): fp32 = fallback.fp32 × profile.fp32_tflops.
  NormFigures FiguresFromMeasuredProfile(const MicrobenchmarkProfile& p) const;
  // Whether the model was trained with achieved (probe) figures.
  bool UsesProbeFigures() const { return options_.profile_source == "probe"; }
  const std::map<std::string, NormFigures>& probe_figures() const { return probe_figures_; }

  // The dispatch floor used for `s` on `gpu_id`, ms (see the class comment). For a GPU absent
  // from training with a floor probe (`probe`->floor_ms[source], profile source "probe"), the
  // default floor is scaled by probe / median probe of the training GPUs for that source.
  double DispatchFloorMs(const KernelSample& s, const std::string& gpu_id,
                         const NormFigures* probe = nullptr) const;

 private:
  LearnedTrainOptions options_;
  // One booster per (family, includes_transfer): timings with host copies (bencyq_hase) are a
  // different measurement and get their own trees, so a kernel-time prediction never lands in
  // a leaf fitted on host-copy timings of a GPU with a similar datasheet.
  using BoosterKey = std::pair<KernelFamily, bool>;
  std::map<BoosterKey, std::unique_ptr<Booster>> boosters_;
  std::map<BoosterKey, size_t> rows_;
  std::map<KernelFamily, size_t> kernel_rows_;
  std::map<std::string, double> floors_;          // "source|gpu|op" → ms
  std::map<std::string, double> default_floors_;  // "source|op" → ms
  std::map<std::string, NormFigures> probe_figures_;  // training GPU id → emulated probe
  NormFigures fallback_eff_{1, 1, 1, 1, {}};  // achieved / datasheet, median over training GPUs
  std::map<std::string, double> probe_floor_median_;  // source → median floor probe, ms
  mutable std::unique_ptr<std::mutex> mu_;        // serialises XGBoost prediction
};

// Resolves every sample's GPU name through `catalog`, rewriting `gpu` to the catalog id.
// Errors: NotFound naming the row (file:line), the name and the nearest catalog entries.
Result<std::vector<const GpuSpec*>> ResolveGpus(std::vector<KernelSample>& samples,
                                                const GpuCatalog& catalog);

}  // namespace hase::predict
