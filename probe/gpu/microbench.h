// Microbenchmarks of one GPU → the figures of a microbenchmark profile
// (docs/microbenchmark-profile.md):
//  dram_copy   b[i] = a[i] over 2 arrays of max(1 GiB, 4 × L2): bytes read + written / time
//  dram_triad  a[i] = b[i] + s·c[i], 3 arrays: bytes = 3 × array / time (raw only)
//  l2_read     reads of a working set of L2/2, many passes, ld.global.cg: bytes read / time
//  sgemm       cuBLAS FP32 GEMM, no TF32, M = N = K = 8192: 2·M·N·K / time
//  tf32_gemm   cuBLAS FP32 in/out with TF32 tensor cores (raw only)
//  hgemm_tensor cuBLAS GemmEx FP16 in/out, FP32 accumulate, tensor cores
//  fp32_fma / half2_fma  FMA chains on CUDA cores (peak arithmetic; fp16_tflops = half2_fma)
//  launch      empty kernels back to back: (time of 2000 launches) / 2000, µs
//  launch_sync one empty kernel + cudaStreamSynchronize, host wall clock, µs (raw only)
//  h2d/d2h     cudaMemcpyAsync of 256 MiB, pinned and pageable host memory, GB/s
// Each figure is the median over repetitions after one warm-up. GB = 1e9 bytes.
#pragma once

#include <vector>

#include "gpu_context.h"
#include "hase/base/status.h"
#include "profile_yaml.h"

namespace hase::probe::gpu {

struct MicroOptions {
  bool quick = false;  // 1/8 of the sizes and 3 repetitions (smoke test)
};

// Runs every microbenchmark. Fills `profile` (gpu and source are left to the caller) and
// appends each raw figure to `raw`. Errors: Internal on a CUDA/cuBLAS failure.
Status RunMicrobenchmarks(GpuContext& ctx, const MicroOptions& options, MeasuredProfile* profile,
                          std::vector<MicroResult>* raw);

}  // namespace hase::probe::gpu
