// LoadOnnxGraph: .onnx file → Graph with every tensor shape bound and inferred.
//
// Steps: read the file without weight bytes (model_proto_reader.h); check the opset (ai.onnx
// 7–17, what ONNX 1.12's shape inference knows); take ONNX Runtime's view of the shapes with the
// batch still open (ort_shape_view.h: Value::ort_shape, what fusion rules decide on); bind the
// graph inputs' dynamic dims (batch,
// spatial) from LoadOptions; drop the file's own value_info (it may hold stale symbolic shapes);
// run ONNX shape inference (onnx::shape_inference::InferShapes, with data propagation so shape
// arithmetic such as Shape→Gather→Concat→Reshape resolves); convert Constant nodes to
// initializers (as ONNX Runtime does when it loads a graph); build the Graph.
//
// Ops without an ONNX schema (custom domains, typos) cannot be inferred: each one's first output
// is given its first input's shape and dtype (a conservative guess for the cost model), a
// warning is recorded, and inference re-runs so downstream shapes resolve.
//
// Exceptions from libonnx are caught here (the one adapter) and returned as Status. The whole
// inference phase (ORT view, binding, inference rounds) runs in one child process behind a
// null-safe schema registry (shape_inference.h): a crash or hang inside libonnx is an Internal
// error, never the end of the caller. A required attribute missing from a node (any subgraph) is
// refused before inference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/graph/graph.h"
#include "hase/graph/model_proto_reader.h"

namespace hase::graph {

// Lowest and highest ai.onnx opset accepted: 7 (first opset with today's Conv/BN/Gemm
// semantics) to 17 (highest ONNX 1.12 — Debian bookworm's libonnx — knows).
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 17;

struct LoadOptions {
  // Batch size for the batch dim of the graph inputs: dim 0, or the first symbolic dim whose
  // name contains "batch" (a sequence-first RNN export's [seq, batch, features]). A symbolic
  // batch dim (any input) is bound to it; a dim 0 the file fixes to another value is overridden,
  // with a warning, on the first input only. 0 = leave it as the file has it (a symbolic batch
  // then fails). Default 1.
  int64_t batch = 1;
  // Shape of the first graph input without the batch dim (in order, skipping the batch dim
  // wherever it is), e.g. {3, 640, 640} for
  // "--input-shape 3x640x640"; or with it (then it must have the input's rank and batch is taken
  // from it). Empty = keep the file's dims. Dims must be > 0.
  std::vector<int64_t> input_shape;
  // Fail (InvalidArgument) if a value read or written by a node has an unknown shape after
  // inference. Default true: costs need shapes.
  bool require_shapes = true;
  // Take ONNX Runtime's view of the shapes (Value::ort_shape, ort_shape_view.h) for fusion rules
  // to decide on. False when no rule will run (fusion profile "none"): one inference pass less.
  bool ort_view = true;
};

struct LoadedGraph {
  Graph graph;
  std::vector<std::string> warnings;  // unknown ops, overridden fixed dims, …
  std::vector<std::string> unknown_op_nodes;  // names of nodes whose op has no ONNX schema
  ModelReadStats read_stats;
};

// Loads `path`. Errors: those of ReadModelProto; Unsupported (opset outside 7–17 or missing
// ai.onnx import, or a model > 2 GB); InvalidArgument (a dynamic dim left unbound, an
// --input-shape that does not fit the input, a required attribute missing, shape inference
// failed, a shape still unknown after inference when require_shapes); Internal (libonnx crashed
// or hung: "ONNX shape inference (libonnx) crashed (SIGFPE)"); IO (no child process).
Result<LoadedGraph> LoadOnnxGraph(const std::string& path, const LoadOptions& options);

// Parses "3x640x640" (also "3,640,640") into {3, 640, 640}. Errors: InvalidArgument.
Result<std::vector<int64_t>> ParseShape(const std::string& text);

}  // namespace hase::graph
