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
// Returns the number of rows flagged.
size_t FlagLowThroughput(std::vector<KernelSample>& rows, const std::vector<const GpuSpec*>& gpus);

}  // namespace hase::predict
