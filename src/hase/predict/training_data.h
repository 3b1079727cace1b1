// Loading kernel training data for `hase train` / `hase eval`: canonical CSV files and raw
// dataset folders (converted on the fly), GPU names resolved through the catalog, suspect rows
// flagged and (by default) removed.
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

struct TrainingData {
  std::vector<KernelSample> rows;
  std::vector<const GpuSpec*> gpus;  // gpus[i] is rows[i]'s catalog entry
  std::vector<std::string> notes;    // what was converted, flagged and dropped (for the user)
};

struct LoadDataOptions {
  bool keep_suspect = false;  // keep rows flagged suspect_* (default: drop them)
};

// Each path is a canonical CSV (.csv / .csv.gz, docs/training-data.md) or a dataset folder
// (neusight, deepbench, tophub, bencyq_hase; DetectSource). After loading: GPU names are
// resolved (unknown → NotFound with the nearest names), FlagLowThroughput() runs, and suspect
// rows are dropped unless keep_suspect. Errors: as the readers / converters, NotFound.
Result<TrainingData> LoadTrainingData(const std::vector<std::string>& paths,
                                      const GpuCatalog& catalog, const LoadDataOptions& options);

// PITFALLS 6: flags conv/gemm rows "suspect_low_flops" whose achieved fraction of the GPU's
// FP32/FP16 peak is below 1/4 of the median fraction the *same shape from the same source*
// reaches on the other GPUs (needs >= 2 other GPUs). REQUIRES gpus[i] is rows[i]'s spec.
// Rows with includes_transfer or a recorded background load > 0 (ThroughputComparable false)
// are neither flagged nor compared. Returns the number of rows flagged.
size_t FlagLowThroughput(std::vector<KernelSample>& rows, const std::vector<const GpuSpec*>& gpus);

// PITFALLS 6, second rule: NeuSight `linear` on Tesla P4 gets ever slower relative to `bmm` of
// the same FLOP on the same GPU (median linear / bmm FLOP/s: 1.48 at 10^8.5 FLOP, 0.96 at 10^9.5,
// 0.42 at 10^10.5, 0.29 at 10^11.5), while on A100, T4 and V100 linear stays 1.1–1.5× faster
// than bmm (docs/predictor-learned.md, "Data handling"). The rule, per source and quarter decade
// of FLOP (bin floor(4 log10 FLOP), gemm rows >= 1e9 FLOP, ThroughputComparable only): for each
// (op, GPU) with >= 10 rows in the bin, rel = median FLOP/ms of the op / median FLOP/ms of
// another op on the same GPU; when rel < 3/4 of the median rel of the other GPUs (>= 2 of them),
// every row of that (op, GPU, bin) is flagged "suspect_slow_op". Rows of an (op, GPU) in bins
// above the highest bin where it could be compared (no other op that large, or < 10 rows) take
// that bin's verdict. Per-row FLOP/s ratios on one
// GPU cancel its peak, so no datasheet figure enters. Returns the number of rows flagged.
size_t FlagSlowOp(std::vector<KernelSample>& rows);

// False for rows whose throughput is legitimately lower: includes_transfer, or any recorded
// background-load fraction > 0.
bool ThroughputComparable(const KernelSample& s);

}  // namespace hase::predict
