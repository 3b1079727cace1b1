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

#include <map>
#include <string>
#include <vector>

#include "hase/hw/gpu_spec.h"
#include "hase/hw/microbenchmark_profile.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

// The figures the roofline normaliser divides by: either the datasheet peaks
// (DatasheetFigures, the version-1 normaliser) or what the GPU achieves — a microbenchmark
// profile, or the emulated probe of docs/predictor-learned.md ("Per-GPU calibration").
// TFLOP/s and GB/s; 0 = unknown (then the datasheet figure is used).
struct NormFigures {
  double fp32_tflops = 0;
  double fp16_tflops = 0;         // CUDA-core FP16 (GPUs without tensor cores)
  double tensor_fp16_tflops = 0;  // FP16 tensor-core GEMM
  double dram_gbps = 0;
  // Dispatch-floor probe per source (ms): median latency of the source's smallest elementwise
  // rows on this GPU (probe_emulation.h). Scales the learned model's dispatch floor for a GPU
  // absent from training; not part of the roofline.
  std::map<std::string, double> floor_ms;
};
NormFigures DatasheetFigures(const GpuSpec& gpu);
// The profile's dram_bandwidth_gbps, fp32/fp16/tensor_fp16_tflops.
NormFigures FiguresFromProfile(const MicrobenchmarkProfile& p);

// The roofline that normalises the learned target (kept separate from the analytic model so
// retuning that model never invalidates a trained file):
//   compute_ms = flops / peak,  peak = tensor_fp16_tflops for float16 conv/gemm on GPUs with
//                tensor cores, else max(fp16_tflops, fp32_tflops) for float16 (FP16 math where
//                it is faster, FP32 math on FP16 storage where it is not: GP102/GP104 run FP16
//                at 1/64 rate), else fp32_tflops;
//   memory_ms  = bytes / dram_gbps;
//   roofline_ms = max(compute_ms, memory_ms).
// Figures that are 0 in `f` fall back to the datasheet's.
struct Roofline {
  double compute_ms = 0;
  double memory_ms = 0;
  double roofline_ms = 0;
  double peak_tflops = 0;         // the compute peak used
  double datasheet_peak_tflops = 0;  // the datasheet peak of the same precision
};
Roofline FiguresRoofline(const KernelSample& s, const GpuSpec& gpu, const NormFigures& f);
// FiguresRoofline with DatasheetFigures(gpu).
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
// count as an idle GPU (0). The roofline features use `figures`; norm_compute_eff and
// norm_bw_eff are figures / datasheet (1 with DatasheetFigures). spec_features = false writes
// the raw datasheet columns (gpu_peak_tflops … gpu_cc) as missing (NaN), so trees split only
// on normalised GPU quantities (ratios, per-SM counts, bytes / L2) that transfer to unseen GPUs.
std::vector<float> ExtractFeatures(const KernelSample& s, const GpuSpec& gpu,
                                   const NormFigures& figures, bool spec_features = true);
// ExtractFeatures with DatasheetFigures(gpu) and spec features on.
std::vector<float> ExtractFeatures(const KernelSample& s, const GpuSpec& gpu);

}  // namespace hase::predict
