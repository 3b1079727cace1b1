// ModelProto reader that skips weight bytes: parses an .onnx file into an onnx::ModelProto whose
// large initializers keep name, dims, dtype and external-data references but no data.
//
// The file is memory-mapped and walked at the protobuf wire level. Every GraphProto.initializer
// whose data fields (raw_data, float_data, …) exceed kMaxInlineDataBytes is re-encoded without
// them, so its bytes are never copied and — being skipped, not read — their pages are never even
// faulted in: a 550 MB VGG-16 costs the same as its 100 kB of graph structure. Everything else is
// handed to protobuf's generated parser. Initializers stored as external data are kept as
// references: a large one's file is never opened, a small one's (at most kMaxInlineDataBytes,
// e.g. a Reshape shape saved with size_threshold=0) is read in as if embedded, since shape
// inference and fusion rules read its values. External data that is absent, whose entry gives a
// length other than the tensor's byte size (dims × dtype; ONNX Runtime refuses it: "external
// data size mismatch"), or that runs past the end of its file is not an error here: kernels and
// latencies need no weight bytes. Each such tensor is listed in
// ModelReadStats::external_data_issues; the loader turns them into one warning
// (ExternalDataWarning) and an error only where a value is needed.
//
// Limits: protobuf messages are limited to 2 GB (INT_MAX bytes); larger files are rejected with
// Unsupported (store weights as ONNX external data instead).
// Thread-safety: the function is reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hase/base/status.h"

namespace hase::graph {

// Initializers whose data fields total at most this many bytes keep their data (Reshape shapes,
// Clip bounds, Resize scales); larger ones are stripped. 4 KiB = 512 int64 / 1024 float values.
constexpr int64_t kMaxInlineDataBytes = 4096;

// One external-data reference whose bytes cannot be read.
struct ExternalDataIssue {
  enum Kind { kMissingFile, kWrongLength, kPastTheEnd };
  Kind kind = kMissingFile;
  std::string tensor;    // initializer name
  std::string location;  // the entry's file, relative to the model's folder
  std::string detail;    // what is wrong, for a person
};

struct ModelReadStats {
  int64_t file_bytes = 0;            // size of the .onnx file
  int64_t skipped_data_bytes = 0;    // embedded weight bytes not copied
  int stripped_initializers = 0;     // embedded initializers whose data was skipped
  int external_initializers = 0;     // initializers stored as external data
  int missing_external_files = 0;    // distinct external data files that do not exist (fine)
  int read_external_initializers = 0;  // small external initializers read in (now embedded)
  std::vector<ExternalDataIssue> external_data_issues;  // file order
};

// Summary of stats.external_data_issues for a person: one line per data file with issues,
// naming the file, the first tensor and the count, e.g. "external data 'm.onnx.data' is missing:
// 161 initializers have no weight bytes (first 'fc.weight'); kernels and latencies do not need
// them, running the model does". Empty when there are none.
std::vector<std::string> ExternalDataWarnings(const ModelReadStats& stats, const std::string& model_path);

// Reads `path`. On success returns the model (initializers > kMaxInlineDataBytes carry no data)
// and fills *stats if non-null. Errors: NotFound (no such file), IO (cannot open/map),
// Parse (empty, truncated, corrupt, or not an ONNX ModelProto: no graph; an external-data
// offset/length that is not a non-negative integer), Unsupported (> 2 GB). Unreadable external
// data is no error (stats->external_data_issues).
Result<onnx::ModelProto> ReadModelProto(const std::string& path, ModelReadStats* stats = nullptr);

}  // namespace hase::graph
