// Emulated microbenchmark probe: a small, fixed set of one GPU's own measured rows that play the
// role of hase-probe's microbenchmarks (docs/microbenchmark-profile.md), turned into the
// achieved figures that normalise the learned model (docs/predictor-learned.md, "Per-GPU
// calibration"). Used for every training GPU of a model trained with profile source "probe",
// and by `hase eval --split leave-gpu-out --calibrate N` for the held-out GPU, whose
// calibration rows are then excluded from scoring.
//
// Rules (each over rows of that GPU that are pure kernel time, includes_transfer = 0):
//   fp32 compute: per GEMM op ("linear", "bmm", "gemm", …), the N fp32 gemm rows with the most
//     FLOPs among those that run at most kProbeMaxKernelMs; fp32_tflops = max over all of
//     them of flops / latency. Convolutions are never read (cuDNN picks Winograd/FFT, which
//     beat the FP32 GEMM peak in FLOP terms; a conv probe kind was measured and rejected,
//     docs/predictor-learned.md); a GPU without gemm rows gets no compute figure.
//   fp16 compute: the same on float16 rows; written to tensor_fp16_tflops on GPUs with tensor
//     cores, else to fp16_tflops (the figure FiguresRoofline uses for float16 conv/gemm).
//   DRAM bandwidth: the N elementwise fp32/fp16 rows with the most bytes;
//     dram_gbps = max of bytes / latency (a large-copy probe).
//   Dispatch floor, per source: the N elementwise rows with the fewest bytes;
//     floor_ms[source] = their median latency (an empty-kernel launch probe, as the framework
//     of that source dispatches it).
// A figure without candidate rows stays 0 (the model then uses its fallback). N = rows_per_probe.
#pragma once

#include <cstddef>
#include <vector>

#include "hase/hw/gpu_spec.h"
#include "hase/predict/features.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

// Longest kernel a compute probe reads, ms. Longer GEMMs lose throughput to power and thermal
// limits (../shared/data/PITFALLS.md 6: T4 / P4 reach 20–25 % more FLOP/s in their largest
// GEMMs under 10 ms than in their largest ones, 0.2–0.9 s; big GPUs 2–13 %), which most of
// the kernels being predicted never reach; hase-probe's --quick sgemm (2048^3) runs 1–6 ms on
// these GPUs. The only value measured (docs/predictor-learned.md).
inline constexpr double kProbeMaxKernelMs = 10.0;

struct ProbeEmulation {
  NormFigures figures;             // achieved TFLOP/s and GB/s; 0 = not probed
  std::vector<size_t> rows_used;   // indices (into `rows`) of the rows the probes read, sorted
};

// `idx`: the indices of rows that belong to the GPU `gpu` (the caller selects them).
// Deterministic: ties are broken by row index.
ProbeEmulation EmulateProbe(const std::vector<KernelSample>& rows, const std::vector<size_t>& idx,
                            const GpuSpec& gpu, size_t rows_per_probe);

}  // namespace hase::predict
