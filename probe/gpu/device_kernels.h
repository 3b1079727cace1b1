// Launchers of the probe's own CUDA kernels (device_kernels.cu). A plain C++ header: callers
// compiled by g++ see only these functions. Every launcher enqueues on `stream` and returns the
// launch error (cudaGetLastError), never synchronising. Element counts are elements, not bytes.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace hase::probe::gpu {

// Element type of the math kernels: 0 = float, 1 = half (IEEE binary16).
enum class MathType : int { kFloat = 0, kHalf = 1 };

// Fills `n` elements with small finite values (no NaN/denormal slow paths).
cudaError_t LaunchFill(void* p, int64_t n, MathType t, cudaStream_t stream);

// out[i] = ops applied left to right to operand 0, a binary op taking the next operand;
// operand j is read at index i mod sizes[j] (broadcast approximated by modulo).
struct EltArgs {
  static constexpr int kMaxOperands = 4;
  static constexpr int kMaxOps = 8;
  const void* in[kMaxOperands] = {};
  int64_t in_n[kMaxOperands] = {};
  int n_in = 0;
  int32_t ops[kMaxOps] = {};  // EltOp values (kernel_plan.h)
  int n_ops = 0;
  void* out = nullptr;
  int64_t n_out = 0;
};
cudaError_t LaunchElementwise(const EltArgs& a, MathType t, cudaStream_t stream);

// BatchNormalization (inference): y = (x − mean[c]) · scale[c] / sqrt(var[c] + 1e-5) + b[c],
// c = (i / inner) mod channels. params = {scale, b, mean, var}, each `channels` long.
cudaError_t LaunchBatchNorm(const void* x, const void* const params[4], void* y, int64_t n,
                            int64_t channels, int64_t inner, MathType t, cudaStream_t stream);

// Row reductions over `rows` × `inner` contiguous elements: kind 0 softmax, 1 layer norm
// (normalise, then × gamma + beta when given, each `inner` long).
cudaError_t LaunchRowNorm(const void* x, void* y, const void* gamma, const void* beta,
                          int64_t rows, int64_t inner, int kind, MathType t,
                          cudaStream_t stream);

// Concat along an axis: out is [outer, sum(inner)], input j is [outer, inner[j]].
// elem_bytes is 1, 2, 4 or 8; at most 16 inputs.
cudaError_t LaunchConcat(const void* const* in, const int64_t* inner, int n_in, void* out,
                         int64_t outer, int elem_bytes, cudaStream_t stream);

// Split along an axis: in is [outer, sum(inner)], output j is [outer, inner[j]]. Same limits.
cudaError_t LaunchSplit(const void* in, void* const* out, const int64_t* inner, int n_out,
                        int64_t outer, int elem_bytes, cudaStream_t stream);

// Transpose of a rank ≤ 6 tensor: out dim d = in dim perm[d].
cudaError_t LaunchTranspose(const void* in, void* out, const int64_t* in_shape,
                            const int64_t* perm, int rank, int elem_bytes, cudaStream_t stream);

// out[i] = in[i mod n_in] converted between element sizes (1, 2, 4, 8 bytes) as integers:
// the traffic of a generic gather/cast/copy.
cudaError_t LaunchCopy(const void* in, int64_t n_in, int in_bytes, void* out, int64_t n_out,
                       int out_bytes, cudaStream_t stream);

// ---- microbenchmarks ----
// b[i] = a[i] over n floats (n a multiple of 4).
cudaError_t LaunchStreamCopy(const float* a, float* b, int64_t n, cudaStream_t stream);
// a[i] = b[i] + s · c[i] over n floats (n a multiple of 4).
cudaError_t LaunchTriad(float* a, const float* b, const float* c, float s, int64_t n,
                        cudaStream_t stream);
// Reads n floats (n a multiple of 4) `passes` times with `blocks` × 512 threads.
cudaError_t LaunchL2Read(const float* a, int64_t n, int passes, int blocks, float* sink,
                         cudaStream_t stream);
// An empty kernel <<<1, 32>>>.
cudaError_t LaunchEmpty(cudaStream_t stream);
// `blocks` × 256 threads each doing `iters` × 8 independent FMAs: 2 · 8 · iters FLOP per thread
// (float), or 8 · iters half2 FMAs: 4 · 8 · iters FLOP per thread (half).
cudaError_t LaunchFmaPeak(int blocks, int iters, bool half2, float* sink, cudaStream_t stream);

// ---- stressor ----
// `blocks` blocks of `threads` threads spin until the GPU's global timer has advanced by
// `spin_ns`; dynamic_smem bytes keep at most one block per SM.
cudaError_t LaunchSpin(int blocks, int threads, size_t dynamic_smem, int64_t spin_ns,
                       cudaStream_t stream);
// Sets the spin kernel's max dynamic shared memory (call once before LaunchSpin).
cudaError_t AllowSpinSharedMemory(size_t bytes);

}  // namespace hase::probe::gpu
