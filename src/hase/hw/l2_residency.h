// L2 residency: how much of a memory-bound kernel's traffic the L2 cache serves instead of DRAM.
//
// A kernel's input activations were written by the kernel before it; when the working set fits
// in L2 they are still there, so on GPUs with a large L2 (A100 40 MB, H100 50 MB, AD10x 48-96 MB,
// GB20x 96-128 MB) small and medium activations are read at L2 rather than DRAM bandwidth.
// Weights (read once per inference) and written outputs (write-back) still cost DRAM traffic.
// Pure functions; thread-safe.
#pragma once

#include "hase/hw/microbenchmark_profile.h"

namespace hase {

// Share of the L2 a kernel's working set can use, 0–1. 0.5: the A100 (GA100) and H100 (GH100)
// L2 is two partitions, each caching for the SMs of its half of the GPU, so data every SM reads
// can be held twice (NVIDIA A100 Tensor Core GPU Architecture whitepaper, "L2 cache"; H100
// whitepaper, same); on other GPUs the same half leaves room for the output being written back
// and for the weights streamed through the cache.
constexpr double kL2UsableFraction = 0.5;

// Fraction of activation bytes served from L2, 0–1:
//   hit = clamp(kL2UsableFraction × l2_mib × 2^20 / working_set_bytes, 0, 1)
// working_set_bytes = activation bytes + weight bytes the kernel touches. 0 when l2_mib <= 0;
// 1 when the working set is empty.
double L2HitFraction(double l2_mib, double working_set_bytes);

// Time to move a kernel's bytes, ms:
//   reread_bytes × (hit / l2_bw + (1 − hit) / dram_bw) + dram_bytes / dram_bw
// reread_bytes: activations the kernel reads that the kernel before it wrote (candidates for an
// L2 hit); dram_bytes: weights (read once per inference) and outputs (the L2 is write-back, so
// written lines reach DRAM in the end). dram_bw = profile.dram_bandwidth_gbps × efficiency,
// l2_bw = profile.l2_bandwidth_gbps × efficiency (GB/s = 1e6 B/ms), hit =
// L2HitFraction(l2_mib, reread_bytes + dram_bytes). `efficiency` (> 0) folds the caller's
// per-family bandwidth share and contention. Where the profile has no L2 figure (<= 0) or L2 is
// slower than DRAM, every byte moves at dram_bw. Bytes in B; returns 0 for no bytes and for
// dram_bandwidth_gbps × efficiency <= 0.
double MemoryTimeMs(const MicrobenchmarkProfile& profile, double l2_mib, double reread_bytes,
                    double dram_bytes, double efficiency);

}  // namespace hase
