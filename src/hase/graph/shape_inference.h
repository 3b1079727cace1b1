// ONNX shape inference (libonnx's onnx::shape_inference::InferShapes) that no model can turn into
// a crash of the process that asked for it.
//
// Two guards, around every call hase makes (loader and its ORT shape view, RefreshOrtShapes,
// function inlining):
// 1. A schema registry (NullSafeSchemaRegistry) hands libonnx the schemas of OpSchemaRegistry,
//    except that each data-propagation function first checks that the node's present inputs
//    have a type. ONNX 1.12's Shape-15 propagator reads input 0's type without that check: a
//    Shape node (opset >= 15) whose input was left untyped — an earlier node's inference failed
//    and error_mode 1 went on, or the name is produced by nothing — was SIGSEGV inside
//    ShapeInferenceImplBase::process (torchvision ssdlite320_mobilenet_v3_large and
//    fasterrcnn_mobilenet_v3_large_320_fpn at opset 17 and batch 2: their Split, traced at
//    batch 1, fails at 2, and a Shape downstream read the untyped result). Data propagation is
//    an optional refinement; an untyped input has no data to propagate, so skipping loses
//    nothing.
// 2. The call runs in a child process (base/isolated_call.h): any other crash or hang inside
//    libonnx becomes one Status (Internal), and the caller — `hase kernels` or the daemon's
//    submit path — lives on.
#pragma once

#include <string>
#include <unordered_map>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "hase/base/status.h"

namespace hase::graph {

// Wall-clock limit of one inference call, in seconds. ONNX 1.12 infers ViT-B/16 (1 500 nodes)
// in about 30 ms; the limit is only there to stop a library loop.
constexpr double kShapeInferenceTimeoutS = 120;

// Infers `*model` in place (value_info, output types; subgraphs too), as
// InferShapes(*model, &NullSafeSchemaRegistry(), options) would, in a child process.
// Errors: InvalidArgument with libonnx's message as thrown (with error_mode 1: one line per
// failing node); Internal when libonnx crashed ("ONNX shape inference (libonnx) crashed
// (SIGSEGV)") or ran past kShapeInferenceTimeoutS — *model is then unchanged; IO when the child
// cannot be started. The GraphProto object of *model keeps its address; its contents are
// replaced by the inferred ones (pointers to nodes, value infos or subgraphs are invalidated).
Status InferModelShapes(onnx::ModelProto* model, const onnx::ShapeInferenceOptions& options);

// Guard 1 only, in this process: for code that already runs inside RunIsolated (the loader runs
// its whole inference phase in one child: one fork per model, not one per inference round).
// Errors: InvalidArgument with libonnx's message. A crash in libonnx kills the caller.
Status InferModelShapesUnisolated(onnx::ModelProto* model,
                                  const onnx::ShapeInferenceOptions& options);

// Same as InferModelShapes for a bare graph with the given opset imports (domain → version; "" = ai.onnx).
Status InferGraphShapes(onnx::GraphProto* graph,
                        const std::unordered_map<std::string, int>& opset_imports,
                        const onnx::ShapeInferenceOptions& options);

// The ai.onnx ops whose schemas carry a data-propagation function in ONNX 1.12 (every version
// of them is wrapped). shape_inference_test checks the list against libonnx's own.
inline constexpr const char* kOpsWithDataPropagation[] = {
    "Add", "Cast", "Concat", "Gather", "Mul", "Shape", "Size", "Slice", "Squeeze", "Sub",
    "Unsqueeze"};

// The registry of guard 1: OpSchemaRegistry's schemas, data propagation made null-safe. Built
// once (thread-safe); immutable and valid for the life of the process.
const onnx::ISchemaRegistry& NullSafeSchemaRegistry();

}  // namespace hase::graph
