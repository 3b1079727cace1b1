// Fuzz targets (issue #15): each takes arbitrary bytes, runs one of hase's input parsers on
// them and returns the Status it ended with. A target never crashes, hangs or throws: bad
// input is a clean Status (never Internal). Used by the bounded mutation test in ctest
// (fuzz_test.cc) and, with -DHASE_FUZZ=ON under clang, by libFuzzer (fuzz_main.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hase/base/status.h"

namespace hase::fuzz {

// The ONNX loader (protobuf parse, opset checks, dim binding, shape inference) on a model
// file with these bytes, written under `scratch_dir`.
Status FuzzOnnxModel(std::string_view bytes, const std::string& scratch_dir);
// The Prometheus text parser, then the DCGM grouping of its samples.
Status FuzzPromText(std::string_view bytes);
// A cluster file (YAML) against the built-in GPU catalog.
Status FuzzClusterYaml(std::string_view bytes);
// A workload file, YAML and CSV: the YAML parser's Status, or the CSV parser's when that one
// is not clean (Internal or without a message).
Status FuzzWorkload(std::string_view bytes);
// A REST task body: JSON parse, TaskSpecFromJson, and back to JSON.
Status FuzzTaskJson(std::string_view bytes);

}  // namespace hase::fuzz
