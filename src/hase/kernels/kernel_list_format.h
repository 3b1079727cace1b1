// KernelList output formats: JSON (versioned schema, docs/kernels-json.md), CSV and a table for
// people. JSON is what other tools consume (predictor datasets, the CUDA probe); the schema name
// is kKernelsJsonSchema and its version kKernelsJsonVersion — bump the version on any change that
// removes or renames a field (adding fields does not).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"
#include "hase/kernels/kernel.h"

namespace hase {

constexpr const char* kKernelsJsonSchema = "hase.kernels";
constexpr int kKernelsJsonVersion = 1;

// The document described in docs/kernels-json.md.
nlohmann::json KernelListToJson(const KernelList& list);
// Parses such a document back (fields a consumer needs; derived fields such as totals and
// by_dtype are ignored). Errors: Parse (bad JSON, missing field, wrong schema or a newer
// major version).
Result<KernelList> KernelListFromJson(const std::string& text);

// One header row, then one row per kernel; shapes as "1x64x56x56", lists joined by ';'.
std::string KernelListToCsv(const KernelList& list);
// Aligned text table with a totals line, for terminals.
std::string KernelListToTable(const KernelList& list);

}  // namespace hase
