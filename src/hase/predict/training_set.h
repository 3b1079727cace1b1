// Reading and writing the canonical kernel training CSV (docs/training-data.md, schema v1).
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

// Parses canonical CSV text (`name` is used in messages). Columns are matched by name; flops and
// bytes left empty are filled by FillDerived(). Errors: Parse with where = "<name>:<line>" for a
// missing required column, a field count mismatch, a number that does not parse, an unknown
// family or dtype, or latency_ms <= 0.
Result<std::vector<KernelSample>> ParseTrainingCsv(const std::string& text,
                                                   const std::string& name);
// Reads a canonical CSV file (plain or .gz). Errors: as ParseTrainingCsv, NotFound, IO.
Result<std::vector<KernelSample>> ReadTrainingCsv(const std::string& path);

// Canonical CSV text for `samples`, with a "# schema: hase-kernels 1" line and `comment` lines.
std::string FormatTrainingCsv(const std::vector<KernelSample>& samples,
                              const std::vector<std::string>& comment = {});
// Writes FormatTrainingCsv() to `path` (gzip when it ends in .gz). Errors: IO.
Status WriteTrainingCsv(const std::string& path, const std::vector<KernelSample>& samples,
                        const std::vector<std::string>& comment = {});

}  // namespace hase::predict
