// Features of one kernel on one GPU type for the learned latency model (docs/predictor-learned.md).
//
// Everything is derived from the kernel's shape, its FLOPs and bytes, the GPU's datasheet
// (GpuSpec: peaks, bandwidth, SMs, clock, L2, compute capability — never its name, so the model
// predicts for a GPU absent from training) and the background load (LoadSnapshot). Launch
// configurations measured by profilers (grid, block, kernel name) are NOT features
// (../shared/data/PITFALLS.md 2); the tile/wave counts below are computed from the shape.
//
// The feature list is part of the model file format: changing names or order requires a new
// kLearnedModelVersion (learned_model.h).
#pragma once

#include <string>
#include <vector>

#include "hase/hw/gpu_spec.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

// The fixed roofline that normalises the learned target (kept separate from the analytic
// model so retuning that model never invalidates a trained file):
//   compute_ms = flops / peak,  peak = tensor_fp16_tflops for float16 conv/gemm on GPUs with
//                tensor cores, else fp16_tflops (float16, when > 0), else fp32_tflops;
//   memory_ms  = bytes / memory_bandwidth_gbps;
//   roofline_ms = max(compute_ms, memory_ms).
struct Roofline {
  double compute_ms = 0;
  double memory_ms = 0;
  double roofline_ms = 0;
};
Roofline FixedRoofline(const KernelSample& s, const GpuSpec& gpu);

// Host↔device copy time inside a timing with includes_transfer = 1:
// (h2d_bytes + d2h_bytes) / (0.8 × GpuSpec::pcie_peak_gbps()), ms (0.8 = ProfileEfficiency::kPcie,
// pageable copies are slower still; the learned residual absorbs the rest). 0 otherwise.
double TransferMs(const KernelSample& s, const GpuSpec& gpu);

// Numeric code of an op name (stable table in features.cc; unknown ops → 0). Never renumber.
int OpCode(const std::string& op);
// Numeric code of a source's software stack: neusight 1, deepbench 2, tophub 3, bencyq_hase 4,
// probe 5, anything else 0. Never renumber.
int SourceCode(const std::string& source);

// Feature names, in vector order.
const std::vector<std::string>& FeatureNames();
// The feature vector of `s` on `gpu` (size FeatureNames().size()). Load fields that are unset
// count as an idle GPU (0).
std::vector<float> ExtractFeatures(const KernelSample& s, const GpuSpec& gpu);

}  // namespace hase::predict
