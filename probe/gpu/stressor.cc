#include "stressor.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <cublas_v2.h>

#include "cuda_status.h"
#include "device_kernels.h"

namespace hase::probe::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// Runs `launch` + synchronise repeatedly for busy_ms of every period_ms until stop.
Status DutyLoop(cudaStream_t s, double busy_ms, double period_ms, const std::atomic<bool>& stop,
                const std::function<Status()>& launch, std::atomic<int>* ready) {
  bool first = true;
  while (!stop.load()) {
    const auto start = Clock::now();
    const auto busy_end = start + std::chrono::duration<double, std::milli>(busy_ms);
    do {
      HASE_RETURN_IF_ERROR(launch());
      HASE_CUDA(cudaStreamSynchronize(s));
      if (first) {
        first = false;
        ready->fetch_add(1);
      }
    } while (Clock::now() < busy_end && !stop.load());
    const auto period_end = start + std::chrono::duration<double, std::milli>(period_ms);
    while (Clock::now() < period_end && !stop.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return Status::OK();
}

}  // namespace

Status RunStressor(int device, const StressLevel& level, double duration_s,
                   const std::atomic<bool>& stop_signal) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || device >= count) {
    return Status::NotFound("no CUDA device " + std::to_string(device), "stressor");
  }
  HASE_CUDA(cudaSetDevice(device));
  cudaDeviceProp props{};
  HASE_CUDA(cudaGetDeviceProperties(&props, device));

  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};
  int pressures = 0;
  std::mutex mu;
  Status first_error;
  std::vector<std::thread> threads;
  auto run = [&](std::function<Status()> body) {
    ++pressures;
    threads.emplace_back([&, body] {
      Status st = body();
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = st;
        stop = true;
      }
    });
  };

  if (level.sm > 0) {
    auto grid = PersistentGridFor(level, props.multiProcessorCount,
                                  props.maxThreadsPerMultiProcessor, props.maxThreadsPerBlock);
    if (!grid.ok()) return grid.status();
    // More than half the SM's shared memory per block: at most one block per SM.
    const size_t smem = std::min<size_t>(props.sharedMemPerMultiprocessor / 2 + 1024,
                                         props.sharedMemPerBlockOptin);
    HASE_CUDA(AllowSpinSharedMemory(smem));
    const PersistentGrid g = *grid;
    std::fprintf(stderr, "stressor: %d spinning blocks x %d threads (sm %.3f, occupancy %.3f)\n",
                 g.blocks, g.threads_per_block, g.achieved_sm, g.achieved_occupancy);
    run([&, g, smem]() -> Status {
      HASE_CUDA(cudaSetDevice(device));
      cudaStream_t s;
      HASE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      const int64_t spin_ns = static_cast<int64_t>(level.period_ms * 1e6);
      Status st = DutyLoop(s, level.period_ms, level.period_ms, stop, [&] {
        return CudaStatus(LaunchSpin(g.blocks, g.threads_per_block, smem, spin_ns, s), "spin");
      }, &ready);
      cudaStreamDestroy(s);
      return st;
    });
  }
  if (level.dram > 0) {
    run([&]() -> Status {
      HASE_CUDA(cudaSetDevice(device));
      cudaStream_t s;
      HASE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      const int64_t n = (256ll << 20) / 4;
      void *a = nullptr, *b = nullptr;
      HASE_CUDA(cudaMalloc(&a, n * 4));
      HASE_CUDA(cudaMalloc(&b, n * 4));
      Status st = CudaStatus(LaunchFill(a, n, MathType::kFloat, s), "fill");
      if (st.ok()) {
        st = DutyLoop(s, BusyMs(level.dram, level.period_ms), level.period_ms, stop, [&] {
          return CudaStatus(LaunchStreamCopy(static_cast<float*>(a), static_cast<float*>(b), n,
                                             s), "stream copy");
        }, &ready);
      }
      cudaFree(a);
      cudaFree(b);
      cudaStreamDestroy(s);
      return st;
    });
  }
  if (level.tensor > 0) {
    run([&]() -> Status {
      HASE_CUDA(cudaSetDevice(device));
      cudaStream_t s;
      HASE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      cublasHandle_t h;
      HASE_CUBLAS(cublasCreate(&h));
      HASE_CUBLAS(cublasSetStream(h, s));
      const int m = 4096;  // 137 GFLOP per GEMM: ~0.2 ms on H100, ~2 ms on T4
      void *a = nullptr, *b = nullptr, *c = nullptr;
      HASE_CUDA(cudaMalloc(&a, int64_t{m} * m * 2));
      HASE_CUDA(cudaMalloc(&b, int64_t{m} * m * 2));
      HASE_CUDA(cudaMalloc(&c, int64_t{m} * m * 2));
      HASE_CUDA(LaunchFill(a, int64_t{m} * m, MathType::kHalf, s));
      HASE_CUDA(LaunchFill(b, int64_t{m} * m, MathType::kHalf, s));
      Status st = DutyLoop(s, BusyMs(level.tensor, level.period_ms), level.period_ms, stop,
                           [&]() -> Status {
                             const float one = 1.f, zero = 0.f;
                             HASE_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one,
                                                      a, CUDA_R_16F, m, b, CUDA_R_16F, m, &zero,
                                                      c, CUDA_R_16F, m, CUBLAS_COMPUTE_32F,
                                                      CUBLAS_GEMM_DEFAULT));
                             return Status::OK();
                           }, &ready);
      cudaFree(a);
      cudaFree(b);
      cudaFree(c);
      cublasDestroy(h);
      cudaStreamDestroy(s);
      return st;
    });
  }

  const auto start = Clock::now();
  bool announced = false;
  while (!stop.load()) {
    if (!announced && ready.load() >= pressures) {
      std::printf("ready\n");
      std::fflush(stdout);
      announced = true;
    }
    if (stop_signal.load()) break;
    if (duration_s > 0 &&
        std::chrono::duration<double>(Clock::now() - start).count() >= duration_s) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  for (auto& t : threads) t.join();
  return first_error;
}

}  // namespace hase::probe::gpu
