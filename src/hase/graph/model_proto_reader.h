// ModelProto reader that skips weight bytes: parses an .onnx file into an onnx::ModelProto whose
// large initializers keep name, dims, dtype and external-data references but no data.
//
// The file is memory-mapped and walked at the protobuf wire level. Every GraphProto.initializer
// whose data fields (raw_data, float_data, …) exceed kMaxInlineDataBytes is re-encoded without
// them, so its bytes are never copied and — being skipped, not read — their pages are never even
// faulted in: a 550 MB VGG-16 costs the same as its 100 kB of graph structure. Everything else is
// handed to protobuf's generated parser. Initializers stored as external data are kept as
// references; their files are never opened (an absent file is not an error and no warning:
// kernels and latencies need no weight bytes, and the zoo ships without them), but a present
// one is stat'ed: an entry whose offset + length (no length: the tensor's byte size) runs past
// its end is a Parse error (a truncated weights file, or one of another model). An entry whose
// length is not the tensor's byte size (dims × dtype) is a Parse error whether or not the file
// is there, as in ONNX Runtime ("external data size mismatch").
//
// Limits: protobuf messages are limited to 2 GB (INT_MAX bytes); larger files are rejected with
// Unsupported (store weights as ONNX external data instead).
// Thread-safety: the function is reentrant.
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

#include "hase/base/status.h"

namespace hase::graph {

// Initializers whose data fields total at most this many bytes keep their data (Reshape shapes,
// Clip bounds, Resize scales); larger ones are stripped. 4 KiB = 512 int64 / 1024 float values.
constexpr int64_t kMaxInlineDataBytes = 4096;

struct ModelReadStats {
  int64_t file_bytes = 0;            // size of the .onnx file
  int64_t skipped_data_bytes = 0;    // embedded weight bytes not copied
  int stripped_initializers = 0;     // embedded initializers whose data was skipped
  int external_initializers = 0;     // initializers stored as external data
  int missing_external_files = 0;    // distinct external data files that do not exist (fine)
};

// Reads `path`. On success returns the model (initializers > kMaxInlineDataBytes carry no data)
// and fills *stats if non-null. Errors: NotFound (no such file), IO (cannot open/map),
// Parse (empty, truncated, corrupt, or not an ONNX ModelProto: no graph; an external-data entry
// with a bad offset/length, a length other than its tensor's size, or past the end of its
// present file), Unsupported (> 2 GB).
Result<onnx::ModelProto> ReadModelProto(const std::string& path, ModelReadStats* stats = nullptr);

}  // namespace hase::graph
