#include "microbench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include <cuda_fp16.h>
#include <fmt/format.h>

#include "cuda_status.h"
#include "device_kernels.h"
#include "event_timer.h"
#include "stats.h"

namespace hase::probe::gpu {
namespace {

// A device allocation freed on scope exit.
struct DeviceMem {
  void* p = nullptr;
  ~DeviceMem() {
    if (p) cudaFree(p);
  }
};

Result<double> MedianMs(GpuContext& ctx, int reps, const std::function<Status()>& launch) {
  HASE_ASSIGN_OR_RETURN(std::vector<double> ms, TimeOnStream(ctx.stream(), 1, reps, launch));
  return Median(ms);
}

}  // namespace

Status RunMicrobenchmarks(GpuContext& ctx, const MicroOptions& o, MeasuredProfile* prof,
                          std::vector<MicroResult>* raw) {
  const cudaDeviceProp& props = ctx.props();
  cudaStream_t s = ctx.stream();
  const int reps = o.quick ? 3 : 15;
  const int64_t scale = o.quick ? 8 : 1;
  auto add = [&](const std::string& name, const std::string& unit, double v,
                 const std::string& detail) {
    raw->push_back({name, unit, v, detail});
    return v;
  };

  // ---- DRAM ----
  {
    const int64_t l2 = props.l2CacheSize;
    const int64_t bytes = std::max<int64_t>(1ll << 30, 4 * l2) / scale;  // >= 1 GiB per array
    const int64_t n = bytes / 4 / 4 * 4;
    DeviceMem a, b, c;
    HASE_CUDA(cudaMalloc(&a.p, n * 4));
    HASE_CUDA(cudaMalloc(&b.p, n * 4));
    HASE_CUDA(cudaMalloc(&c.p, n * 4));
    for (void* p : {a.p, b.p, c.p}) HASE_CUDA(LaunchFill(p, n, MathType::kFloat, s));
    auto* fa = static_cast<float*>(a.p);
    auto* fb = static_cast<float*>(b.p);
    auto* fc = static_cast<float*>(c.p);
    HASE_ASSIGN_OR_RETURN(double copy_ms, MedianMs(ctx, reps, [&] {
      return CudaStatus(LaunchStreamCopy(fa, fb, n, s), "copy");
    }));
    prof->dram_bandwidth_gbps = add("dram_copy", "GB/s", 2.0 * n * 4 / (copy_ms * 1e-3) / 1e9,
                                    fmt::format("2 x {} MiB, read + write", n * 4 >> 20));
    HASE_ASSIGN_OR_RETURN(double triad_ms, MedianMs(ctx, reps, [&] {
      return CudaStatus(LaunchTriad(fa, fb, fc, 1.5f, n, s), "triad");
    }));
    add("dram_triad", "GB/s", 3.0 * n * 4 / (triad_ms * 1e-3) / 1e9,
        fmt::format("3 x {} MiB, 2 reads + 1 write", n * 4 >> 20));
  }

  // ---- L2 ----
  {
    const int64_t n = std::max<int64_t>(props.l2CacheSize / 2, 1 << 20) / 4 / 4 * 4;
    const int passes = o.quick ? 8 : 64;
    DeviceMem a, sink;
    HASE_CUDA(cudaMalloc(&a.p, n * 4));
    HASE_CUDA(cudaMalloc(&sink.p, 64));
    HASE_CUDA(LaunchFill(a.p, n, MathType::kFloat, s));
    const int blocks = props.multiProcessorCount * 4;
    HASE_ASSIGN_OR_RETURN(double ms, MedianMs(ctx, reps, [&] {
      return CudaStatus(LaunchL2Read(static_cast<float*>(a.p), n, passes, blocks,
                                     static_cast<float*>(sink.p), s), "l2 read");
    }));
    prof->l2_bandwidth_gbps = add("l2_read", "GB/s", 1.0 * n * 4 * passes / (ms * 1e-3) / 1e9,
                                  fmt::format("{} KiB working set x {} passes", n * 4 >> 10,
                                              passes));
  }

  // ---- GEMMs (cuBLAS) ----
  {
    const int m = o.quick ? 2048 : 8192;
    const double flop = 2.0 * m * m * m;
    DeviceMem a, b, c;
    HASE_CUDA(cudaMalloc(&a.p, int64_t{m} * m * 4));
    HASE_CUDA(cudaMalloc(&b.p, int64_t{m} * m * 4));
    HASE_CUDA(cudaMalloc(&c.p, int64_t{m} * m * 4));
    HASE_CUDA(LaunchFill(a.p, int64_t{m} * m, MathType::kFloat, s));
    HASE_CUDA(LaunchFill(b.p, int64_t{m} * m, MathType::kFloat, s));
    cublasHandle_t h = ctx.cublas();
    auto gemm = [&](cudaDataType_t t, cublasComputeType_t comp) {
      return [&, t, comp]() -> Status {
        const float one = 1.f, zero = 0.f;
        HASE_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a.p, t, m, b.p, t,
                                 m, &zero, c.p, t, m, comp, CUBLAS_GEMM_DEFAULT));
        return Status::OK();
      };
    };
    HASE_ASSIGN_OR_RETURN(double ms32, MedianMs(ctx, reps, gemm(CUDA_R_32F, CUBLAS_COMPUTE_32F)));
    add("sgemm", "TFLOP/s", flop / (ms32 * 1e-3) / 1e12,
                            fmt::format("cuBLAS FP32 {}^3, no TF32", m));
    HASE_ASSIGN_OR_RETURN(double ms_tf32, MedianMs(ctx, reps, gemm(CUDA_R_32F,
                                                                CUBLAS_COMPUTE_32F_FAST_TF32)));
    const double tf32 = add("tf32_gemm", "TFLOP/s", flop / (ms_tf32 * 1e-3) / 1e12,
                            fmt::format("cuBLAS FP32 in/out, TF32 tensor cores, {}^3", m));
    // Below compute capability 8.0 cuBLAS runs FAST_TF32 as plain SGEMM: no TF32 figure.
    prof->tensor_tf32_tflops = props.major >= 8 ? tf32 : 0.0;
    // FP16 operands reuse the same buffers (half the bytes).
    HASE_CUDA(LaunchFill(a.p, int64_t{m} * m, MathType::kHalf, s));
    HASE_CUDA(LaunchFill(b.p, int64_t{m} * m, MathType::kHalf, s));
    HASE_ASSIGN_OR_RETURN(double ms16, MedianMs(ctx, reps, gemm(CUDA_R_16F, CUBLAS_COMPUTE_32F)));
    prof->tensor_fp16_tflops = add("hgemm_tensor", "TFLOP/s", flop / (ms16 * 1e-3) / 1e12,
                                   fmt::format("cuBLAS FP16 in/out, FP32 accumulate, {}^3", m));
  }

  // ---- CUDA-core FMA peaks ----
  {
    DeviceMem sink;
    HASE_CUDA(cudaMalloc(&sink.p, 64));
    const int blocks = props.multiProcessorCount * 8;
    const int iters = o.quick ? 1024 : 8192;
    const double threads = blocks * 256.0;
    for (bool half2 : {false, true}) {
      HASE_ASSIGN_OR_RETURN(double ms, MedianMs(ctx, reps, [&] {
        return CudaStatus(LaunchFmaPeak(blocks, iters, half2, static_cast<float*>(sink.p), s),
                          "fma");
      }));
      const double flop = threads * iters * 8 * (half2 ? 4.0 : 2.0);
      const double tflops = flop / (ms * 1e-3) / 1e12;
      (half2 ? prof->fp16_tflops : prof->fp32_tflops) = tflops;
      add(half2 ? "half2_fma" : "fp32_fma", "TFLOP/s", tflops,
          fmt::format("{} blocks x 256 threads x {} x 8 {}", blocks, iters,
                      half2 ? "HFMA2" : "FFMA"));
    }
  }

  // ---- launch overhead ----
  {
    const int launches = o.quick ? 200 : 2000;
    HASE_ASSIGN_OR_RETURN(double ms, MedianMs(ctx, reps, [&]() -> Status {
      for (int i = 0; i < launches; ++i) HASE_CUDA(LaunchEmpty(s));
      return Status::OK();
    }));
    prof->launch_overhead_us = add("launch", "us", ms * 1e3 / launches,
                                   fmt::format("{} empty kernels back to back", launches));
    std::vector<double> us;
    for (int i = 0; i < (o.quick ? 20 : 200); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      HASE_CUDA(LaunchEmpty(s));
      HASE_CUDA(cudaStreamSynchronize(s));
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                       .count());
    }
    HASE_ASSIGN_OR_RETURN(double sync_us, Median(us));
    add("launch_sync", "us", sync_us, "launch + cudaStreamSynchronize, host wall clock");
  }

  // ---- host <-> device ----
  {
    const size_t bytes = (256u << 20) / scale;
    DeviceMem d;
    HASE_CUDA(cudaMalloc(&d.p, bytes));
    void* pinned = nullptr;
    HASE_CUDA(cudaMallocHost(&pinned, bytes));
    std::unique_ptr<void, decltype(&cudaFreeHost)> pinned_guard(pinned, &cudaFreeHost);
    std::unique_ptr<char[]> pageable(new char[bytes]);
    std::memset(pageable.get(), 1, bytes);
    std::memset(pinned, 1, bytes);
    struct Case {
      const char* name;
      void* host;
      bool h2d;
    };
    for (const Case& c : {Case{"h2d_pinned", pinned, true}, Case{"d2h_pinned", pinned, false},
                          Case{"h2d_pageable", pageable.get(), true},
                          Case{"d2h_pageable", pageable.get(), false}}) {
      HASE_ASSIGN_OR_RETURN(double ms, MedianMs(ctx, reps, [&] {
        return CudaStatus(c.h2d ? cudaMemcpyAsync(d.p, c.host, bytes, cudaMemcpyHostToDevice, s)
                                : cudaMemcpyAsync(c.host, d.p, bytes, cudaMemcpyDeviceToHost, s),
                          "cudaMemcpyAsync");
      }));
      const double gbps = add(c.name, "GB/s", bytes / (ms * 1e-3) / 1e9,
                              fmt::format("{} MiB cudaMemcpyAsync", bytes >> 20));
      if (std::strcmp(c.name, "h2d_pinned") == 0) prof->h2d_gbps = gbps;
      if (std::strcmp(c.name, "d2h_pinned") == 0) prof->d2h_gbps = gbps;
    }
  }
  return Status::OK();
}

}  // namespace hase::probe::gpu
