// Scoring the learned kernel model: held-out splits and per-group error tables (`hase eval`).
//
// Splits (../shared/data/PITFALLS.md 1: random splits leak shapes across GPUs):
//   none            score a trained model on all rows
//   random          one 80/20 split of rows (seeded)
//   by-shape        20 % of ShapeKeys held out: a test shape is unseen on every GPU
//   leave-gpu-out   one model per GPU type, trained on all other GPUs, tested on it
//   leave-source-out one model per source, trained on the other sources
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/predict/analytic_estimator.h"
#include "hase/predict/learned_model.h"
#include "hase/predict/metrics.h"
#include "hase/predict/roofline_baseline.h"

namespace hase::predict {

enum class SplitKind { kNone, kRandom, kByShape, kLeaveGpuOut, kLeaveSourceOut };
// "none", "random", "by-shape", "leave-gpu-out", "leave-source-out". Errors: InvalidArgument.
Result<SplitKind> ParseSplitKind(const std::string& name);
const char* SplitKindName(SplitKind k);

struct EvalOptions {
  SplitKind split = SplitKind::kRandom;
  double test_fraction = 0.2;  // random / by-shape
  uint64_t seed = 42;          // split seed (the model seed is in `train`)
  LearnedTrainOptions train;
  // leave-gpu-out only. calibrate_rows > 0: emulate the probe on the held-out GPU's own rows
  // (EmulateProbe, that many rows per probe; needs train.profile_source "probe"), predict with
  // its figures and exclude the rows it read from scoring. 0 = zero-shot.
  size_t calibrate_rows = 0;
  // leave-gpu-out only. few_shot > 0: per (source, family) of the held-out GPU, `few_shot`
  // seeded-random rows (not calibration rows) fit one scale = exp(median ln(measured /
  // predicted)), applied to that group's other rows; those rows are excluded from scoring.
  size_t few_shot = 0;
};

// Rows CrossValidate kept out of scoring because calibration used them.
struct EvalStats {
  size_t calibration_rows = 0;  // read by the emulated probe (calibrate_rows)
  size_t few_shot_rows = 0;     // used to fit few-shot scales
};

// One scored row: the sample, its GPU, the prediction (NaN when no model covers its family) and
// the fold that produced it (the held-out GPU or source, "test" for random / by-shape).
struct EvalRow {
  KernelSample sample;
  const GpuSpec* gpu = nullptr;
  double predicted_ms = 0;
  std::string fold;
  double floor_ms = 0;  // dispatch floor the model used
  // The two-parameter roofline baseline (roofline_baseline.h) fitted on the same training rows
  // as the model (in-sample for ScoreModel); NaN when its family had no training row.
  double baseline_ms = 0;
};

// Trains on each fold's training part and predicts its test part. `progress` (may be empty) is
// told each fold's name before it trains. Errors: InvalidArgument (split kNone, empty fold set),
// as LearnedKernelModel::Train.
Result<std::vector<EvalRow>> CrossValidate(const std::vector<KernelSample>& rows,
                                           const std::vector<const GpuSpec*>& gpus,
                                           const EvalOptions& options,
                                           const std::function<void(const std::string&)>& progress,
                                           EvalStats* stats = nullptr);

// Scores `model` on every row (split none); the baseline is fitted on the same rows (in-sample).
Result<std::vector<EvalRow>> ScoreModel(const LearnedKernelModel& model,
                                        const std::vector<KernelSample>& rows,
                                        const std::vector<const GpuSpec*>& gpus);

// Scores the analytic estimator (no training; `params`, DerivedProfile of each row's GPU, the
// row's recorded load) on every row. A row becomes a Kernel with the same shape, FLOPs and bytes;
// its precision is kFp32 for float rows, kTensor for float16 conv/gemm on a GPU with tensor cores
// (DeepBench fp16_mixed), else kFp16. The baseline beside it is fitted leave-one-GPU-out (each
// GPU's rows are predicted by a baseline fitted on every other GPU), fold = that GPU.
// Errors: InvalidArgument (size mismatch, no rows), as AnalyticEstimator::Estimate.
Result<std::vector<EvalRow>> ScoreAnalytic(const std::vector<KernelSample>& rows,
                                           const std::vector<const GpuSpec*>& gpus,
                                           const AnalyticParams& params);

struct GroupMetrics {
  std::string group;
  ErrorMetrics metrics;
  size_t unscored = 0;  // rows without a prediction (family without a model)
  // The baseline on the same rows (those the model scored and the baseline covers).
  ErrorMetrics baseline;
};
// Metrics per value of key(row), sorted by group name; rows with NaN predictions count as
// unscored. The baseline is scored on the rows where both predictions are finite.
std::vector<GroupMetrics> Summarize(const std::vector<EvalRow>& rows,
                                    const std::function<std::string(const EvalRow&)>& key);

// Load level of a row for the load-aware table: "no load recorded", or a bin of SM_ACTIVE
// ("sm_active 0.0-0.1", "0.1-0.3", "0.3-0.5", "0.5-0.7", "0.7-1.0").
std::string LoadLevel(const KernelSample& s);

// The text report `hase eval` prints: overall, per family, per GPU, per (family, FLOP decade),
// per source, per load level,
// and split by regime (near the dispatch floor: measured < 1.5 × floor; kernel-bound otherwise);
// every line gives the learned model's MAPE / median / p90 / R² and, beside them, the
// two-parameter baseline's MAPE / median / R² on the same rows.
std::string FormatEvalReport(const std::vector<EvalRow>& rows, const std::string& title);

}  // namespace hase::predict
