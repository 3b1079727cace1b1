// BuildKernelList: the library entry point from an .onnx file to the kernels a runtime launches.
//
//   auto kl = hase::BuildKernelList("models/resnet50.onnx", {.batch = 8});
//   if (!kl.ok()) return kl.status();
//   for (const hase::Kernel& k : kl->kernels) …   // 57 kernels for ResNet-50 under ort-cuda
//
// Pipeline: LoadOnnxGraph (graph/onnx_loader.h: read without weight bytes, bind dims, ONNX
// shape inference) → the fusion profile's rules (fusion_profile.h) → one Kernel per remaining
// node, costed by cost_model.h. Thread-safety: reentrant; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/kernels/kernel.h"

namespace hase {

struct KernelListOptions {
  // Batch size bound to dim 0 of every graph input (symbolic dims are bound; a dim the model
  // fixes to another value is overridden with a warning). Must be ≥ 1. Default 1.
  int64_t batch = 1;
  // Dims of the first graph input after the batch dim, e.g. {3, 640, 640}; or all dims incl.
  // batch. Empty = the model's own (static) dims. Parse "3x640x640" with ParseInputShape.
  std::vector<int64_t> input_shape;
  // Fusion profile: "ort-cuda" (default; ORT CUDA execution provider), "ort-cpu" (ORT CPU EP at
  // level "extended"), "none" (one kernel per ONNX node). See fusion_profile.h.
  std::string profile = "ort-cuda";
  // Rule names to leave out of the profile, e.g. {"ConvActivationFusion"}.
  std::vector<std::string> disabled_rules;
  // Fail with Unsupported on an op hase does not know (no ONNX schema, no cost formula)
  // instead of estimating it conservatively with a warning. Default false.
  bool strict = false;
};

// Builds the kernel list of the model at `onnx_path`. On success kernels are in launch
// (topological) order with shapes bound, and KernelList::warnings holds unknown-op and
// dim-override notes. Errors: NotFound (no file), Parse (truncated/corrupt/not ONNX), Unsupported
// (opset outside 7–17, unknown op with strict, unknown profile), InvalidArgument (bad options,
// unbound dynamic dim, shape unknown after inference), IO.
Result<KernelList> BuildKernelList(const std::string& onnx_path,
                                   const KernelListOptions& options = {});

// Parses "3x640x640" into {3, 640, 640}. Errors: InvalidArgument.
Result<std::vector<int64_t>> ParseInputShape(const std::string& text);

}  // namespace hase
