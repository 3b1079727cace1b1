// The probe's own CUDA kernels. Kept small and few: compile time in CI matters more than the
// last percent of speed, and each kernel's memory traffic (what the timing is about) is the
// same as the runtime's.
#include "device_kernels.h"

#include <cuda_fp16.h>

namespace hase::probe::gpu {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  if (b > 65535LL * 32) b = 65535LL * 32;  // grid-stride loops cover the rest
  return static_cast<int>(b < 1 ? 1 : b);
}

template <typename T> __device__ __forceinline__ float Load(const void* p, int64_t i);
template <> __device__ __forceinline__ float Load<float>(const void* p, int64_t i) {
  return static_cast<const float*>(p)[i];
}
template <> __device__ __forceinline__ float Load<__half>(const void* p, int64_t i) {
  return __half2float(static_cast<const __half*>(p)[i]);
}
template <typename T> __device__ __forceinline__ void Store(void* p, int64_t i, float v);
template <> __device__ __forceinline__ void Store<float>(void* p, int64_t i, float v) {
  static_cast<float*>(p)[i] = v;
}
template <> __device__ __forceinline__ void Store<__half>(void* p, int64_t i, float v) {
  static_cast<__half*>(p)[i] = __float2half(v);
}

template <typename T>
__global__ void FillKernel(void* p, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    Store<T>(p, i, 0.001f * static_cast<float>(i % 1021) - 0.5f);
  }
}

// EltOp values of kernel_plan.h (checked by static_asserts in kernel_runner.cc).
__device__ __forceinline__ float Binary(int op, float a, float b) {
  switch (op) {
    case 1: return a + b;
    case 2: return a - b;
    case 3: return a * b;
    case 4: return a / (b == 0.f ? 1.f : b);
    case 5: return __powf(fabsf(a), b);
    case 6: return fmaxf(a, b);
    case 7: return fminf(a, b);
  }
  return a;
}
__device__ __forceinline__ float Unary(int op, float x) {
  switch (op) {
    case 8: return fmaxf(x, 0.f);
    case 9: return 1.f / (1.f + __expf(-x));
    case 10: return tanhf(x);
    case 11: return fminf(fmaxf(x, 0.f), 6.f);
    case 12: return x > 0.f ? x : 0.01f * x;
    case 13: return fminf(fmaxf(0.2f * x + 0.5f, 0.f), 1.f);
    case 14: return x * fminf(fmaxf(x / 6.f + 0.5f, 0.f), 1.f);
    case 15: return erff(x);
    case 16: return 0.5f * x * (1.f + erff(x * 0.70710678f));
    case 17: return __expf(x);
    case 18: return __logf(fabsf(x) + 1e-6f);
    case 19: return sqrtf(fabsf(x));
    case 20: return 1.f / (x == 0.f ? 1.f : x);
    case 21: return -x;
    case 22: return fabsf(x);
    case 23: return log1pf(__expf(x));
    case 24: return x / (1.f + __expf(-x));
  }
  return x;
}

template <typename T>
__global__ void EltKernel(EltArgs a) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.n_out;
       i += (int64_t)gridDim.x * blockDim.x) {
    float acc = a.n_in > 0 ? Load<T>(a.in[0], i % a.in_n[0]) : 0.f;
    int next = 1;
    for (int o = 0; o < a.n_ops; ++o) {
      const int op = a.ops[o];
      if (op >= 1 && op <= 7) {
        float b = 1.f;
        if (next < a.n_in) {
          b = Load<T>(a.in[next], i % a.in_n[next]);
          ++next;
        }
        acc = Binary(op, acc, b);
      } else {
        acc = Unary(op, acc);
      }
    }
    Store<T>(a.out, i, acc);
  }
}

template <typename T>
__global__ void BatchNormKernel(const void* x, const void* s, const void* b, const void* m,
                                const void* v, void* y, int64_t n, int64_t channels,
                                int64_t inner) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = (i / inner) % channels;
    const float scale = Load<T>(s, c) * rsqrtf(fabsf(Load<T>(v, c)) + 1e-5f);
    Store<T>(y, i, (Load<T>(x, i) - Load<T>(m, c)) * scale + Load<T>(b, c));
  }
}

// One block per row; kind 0 softmax, 1 layer norm.
template <typename T>
__global__ void RowNormKernel(const void* x, void* y, const void* gamma, const void* beta,
                              int64_t rows, int64_t inner, int kind) {
  __shared__ float red[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * inner;
    // Pass 1: max (softmax) or sum (layer norm).
    float acc = kind == 0 ? -3.0e38f : 0.f;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const float v = Load<T>(x, base + j);
      acc = kind == 0 ? fmaxf(acc, v) : acc + v;
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        red[threadIdx.x] = kind == 0 ? fmaxf(red[threadIdx.x], red[threadIdx.x + s])
                                     : red[threadIdx.x] + red[threadIdx.x + s];
      }
      __syncthreads();
    }
    const float first = kind == 0 ? red[0] : red[0] / static_cast<float>(inner);
    __syncthreads();
    // Pass 2: sum of exp (softmax) or of squared deviations (layer norm).
    acc = 0.f;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const float v = Load<T>(x, base + j) - first;
      acc += kind == 0 ? __expf(v) : v * v;
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
      __syncthreads();
    }
    const float second = red[0];
    __syncthreads();
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const float v = Load<T>(x, base + j) - first;
      float out;
      if (kind == 0) {
        out = __expf(v) / second;
      } else {
        out = v * rsqrtf(second / static_cast<float>(inner) + 1e-5f);
        if (gamma) out *= Load<T>(gamma, j);
        if (beta) out += Load<T>(beta, j);
      }
      Store<T>(y, base + j, out);
    }
  }
}

struct ConcatArgs {
  const void* in[16];
  int64_t inner[16];
  int64_t prefix[16];
  int n_in;
  int64_t total_inner;
  int64_t outer;
};

template <typename E>
__global__ void ConcatKernel(ConcatArgs a, E* out) {
  const int64_t n = a.outer * a.total_inner;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t o = i / a.total_inner;
    const int64_t r = i - o * a.total_inner;
    int j = 0;
    while (j + 1 < a.n_in && r >= a.prefix[j + 1]) ++j;
    out[i] = static_cast<const E*>(a.in[j])[o * a.inner[j] + (r - a.prefix[j])];
  }
}

template <typename E>
__global__ void SplitKernel(ConcatArgs a, const E* in) {  // a.in[] are the outputs here
  const int64_t n = a.outer * a.total_inner;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t o = i / a.total_inner;
    const int64_t r = i - o * a.total_inner;
    int j = 0;
    while (j + 1 < a.n_in && r >= a.prefix[j + 1]) ++j;
    const_cast<E*>(static_cast<const E*>(a.in[j]))[o * a.inner[j] + (r - a.prefix[j])] = in[i];
  }
}

struct TransposeArgs {
  int64_t out_shape[6];
  int64_t in_stride_for_out_dim[6];  // stride in the input of output dim d
  int rank;
  int64_t n;
};

template <typename E>
__global__ void TransposeKernel(TransposeArgs a, const E* in, E* out) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = i, off = 0;
    for (int d = a.rank - 1; d >= 0; --d) {
      const int64_t c = rem % a.out_shape[d];
      rem /= a.out_shape[d];
      off += c * a.in_stride_for_out_dim[d];
    }
    out[i] = in[off];
  }
}

template <typename I, typename O>
__global__ void CopyKernel(const I* in, int64_t n_in, O* out, int64_t n_out) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n_out;
       i += (int64_t)gridDim.x * blockDim.x) {
    out[i] = static_cast<O>(in[i % n_in]);
  }
}

template <typename E>
cudaError_t ConcatAs(const ConcatArgs& a, void* out, cudaStream_t s) {
  ConcatKernel<E><<<Blocks(a.outer * a.total_inner), kThreads, 0, s>>>(a, static_cast<E*>(out));
  return cudaGetLastError();
}
template <typename E>
cudaError_t SplitAs(const ConcatArgs& a, const void* in, cudaStream_t s) {
  SplitKernel<E><<<Blocks(a.outer * a.total_inner), kThreads, 0, s>>>(a, static_cast<const E*>(in));
  return cudaGetLastError();
}
template <typename E>
cudaError_t TransposeAs(const TransposeArgs& a, const void* in, void* out, cudaStream_t s) {
  TransposeKernel<E><<<Blocks(a.n), kThreads, 0, s>>>(a, static_cast<const E*>(in),
                                                      static_cast<E*>(out));
  return cudaGetLastError();
}
template <typename I>
cudaError_t CopyFrom(const void* in, int64_t n_in, void* out, int64_t n_out, int out_bytes,
                     cudaStream_t s) {
  const I* src = static_cast<const I*>(in);
  switch (out_bytes) {
    case 1: CopyKernel<<<Blocks(n_out), kThreads, 0, s>>>(src, n_in, static_cast<uint8_t*>(out), n_out); break;
    case 2: CopyKernel<<<Blocks(n_out), kThreads, 0, s>>>(src, n_in, static_cast<uint16_t*>(out), n_out); break;
    case 8: CopyKernel<<<Blocks(n_out), kThreads, 0, s>>>(src, n_in, static_cast<uint64_t*>(out), n_out); break;
    default: CopyKernel<<<Blocks(n_out), kThreads, 0, s>>>(src, n_in, static_cast<uint32_t*>(out), n_out); break;
  }
  return cudaGetLastError();
}

__global__ void StreamCopyKernel(const float4* a, float4* b, int64_t n4) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
       i += (int64_t)gridDim.x * blockDim.x) {
    b[i] = a[i];
  }
}
__global__ void TriadKernel(float4* a, const float4* b, const float4* c, float s, int64_t n4) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}
__global__ void L2ReadKernel(const float4* a, int64_t n4, int passes, float* sink) {
  float acc = 0.f;
  for (int p = 0; p < passes; ++p) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x) {
      const float4 v = __ldcg(a + i);  // cache in L2 only
      acc += v.x + v.y + v.z + v.w;
    }
  }
  if (acc == 1.2345e-30f) *sink = acc;  // keeps the loads alive
}
__global__ void EmptyKernel() {}

__global__ void FmaKernel(int iters, float* sink) {
  float a[8];
  for (int k = 0; k < 8; ++k) a[k] = threadIdx.x * 1e-7f + k;
  const float m = 0.999999f, c = 1e-7f;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = fmaf(a[k], m, c);
  }
  float s = 0;
  for (int k = 0; k < 8; ++k) s += a[k];
  if (s == 1.2345e-30f) *sink = s;
}
__global__ void Half2FmaKernel(int iters, float* sink) {
  __half2 a[8];
  for (int k = 0; k < 8; ++k) a[k] = __floats2half2_rn(threadIdx.x * 1e-4f, k * 1e-3f);
  const __half2 m = __floats2half2_rn(0.999f, 0.999f), c = __floats2half2_rn(1e-3f, 1e-3f);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = __hfma2(a[k], m, c);
  }
  float s = 0;
  for (int k = 0; k < 8; ++k) s += __low2float(a[k]) + __high2float(a[k]);
  if (s == 1.2345e-30f) *sink = s;
}

__device__ __forceinline__ unsigned long long GlobalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__global__ void SpinKernel(long long spin_ns) {
  extern __shared__ float pad[];  // only reserves shared memory: one block per SM
  const unsigned long long end = GlobalTimerNs() + spin_ns;
  float x = threadIdx.x;
  while (GlobalTimerNs() < end) {
    x = x * 0.9999f + 1.0f;  // keep the warp issuing
  }
  if (x == 1.2345e-30f) pad[0] = x;
}

}  // namespace

cudaError_t LaunchFill(void* p, int64_t n, MathType t, cudaStream_t s) {
  if (t == MathType::kHalf) FillKernel<__half><<<Blocks(n), kThreads, 0, s>>>(p, n);
  else FillKernel<float><<<Blocks(n), kThreads, 0, s>>>(p, n);
  return cudaGetLastError();
}

cudaError_t LaunchElementwise(const EltArgs& a, MathType t, cudaStream_t s) {
  if (t == MathType::kHalf) EltKernel<__half><<<Blocks(a.n_out), kThreads, 0, s>>>(a);
  else EltKernel<float><<<Blocks(a.n_out), kThreads, 0, s>>>(a);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNorm(const void* x, const void* const p[4], void* y, int64_t n,
                            int64_t channels, int64_t inner, MathType t, cudaStream_t s) {
  if (t == MathType::kHalf) {
    BatchNormKernel<__half><<<Blocks(n), kThreads, 0, s>>>(x, p[0], p[1], p[2], p[3], y, n,
                                                           channels, inner);
  } else {
    BatchNormKernel<float><<<Blocks(n), kThreads, 0, s>>>(x, p[0], p[1], p[2], p[3], y, n,
                                                          channels, inner);
  }
  return cudaGetLastError();
}

cudaError_t LaunchRowNorm(const void* x, void* y, const void* gamma, const void* beta,
                          int64_t rows, int64_t inner, int kind, MathType t, cudaStream_t s) {
  const int blocks = static_cast<int>(rows < 65535 * 16 ? (rows < 1 ? 1 : rows) : 65535 * 16);
  if (t == MathType::kHalf) {
    RowNormKernel<__half><<<blocks, kThreads, 0, s>>>(x, y, gamma, beta, rows, inner, kind);
  } else {
    RowNormKernel<float><<<blocks, kThreads, 0, s>>>(x, y, gamma, beta, rows, inner, kind);
  }
  return cudaGetLastError();
}

cudaError_t LaunchConcat(const void* const* in, const int64_t* inner, int n_in, void* out,
                         int64_t outer, int elem_bytes, cudaStream_t s) {
  if (n_in < 1 || n_in > 16) return cudaErrorInvalidValue;
  ConcatArgs a{};
  a.n_in = n_in;
  a.outer = outer;
  int64_t prefix = 0;
  for (int j = 0; j < n_in; ++j) {
    a.in[j] = in[j];
    a.inner[j] = inner[j];
    a.prefix[j] = prefix;
    prefix += inner[j];
  }
  a.total_inner = prefix;
  switch (elem_bytes) {
    case 1: return ConcatAs<uint8_t>(a, out, s);
    case 2: return ConcatAs<uint16_t>(a, out, s);
    case 8: return ConcatAs<uint64_t>(a, out, s);
    default: return ConcatAs<uint32_t>(a, out, s);
  }
}

cudaError_t LaunchSplit(const void* in, void* const* out, const int64_t* inner, int n_out,
                        int64_t outer, int elem_bytes, cudaStream_t s) {
  if (n_out < 1 || n_out > 16) return cudaErrorInvalidValue;
  ConcatArgs a{};
  a.n_in = n_out;
  a.outer = outer;
  int64_t prefix = 0;
  for (int j = 0; j < n_out; ++j) {
    a.in[j] = out[j];
    a.inner[j] = inner[j];
    a.prefix[j] = prefix;
    prefix += inner[j];
  }
  a.total_inner = prefix;
  switch (elem_bytes) {
    case 1: return SplitAs<uint8_t>(a, in, s);
    case 2: return SplitAs<uint16_t>(a, in, s);
    case 8: return SplitAs<uint64_t>(a, in, s);
    default: return SplitAs<uint32_t>(a, in, s);
  }
}

cudaError_t LaunchTranspose(const void* in, void* out, const int64_t* in_shape,
                            const int64_t* perm, int rank, int elem_bytes, cudaStream_t s) {
  if (rank < 1 || rank > 6) return cudaErrorInvalidValue;
  TransposeArgs a{};
  a.rank = rank;
  int64_t in_stride[6];
  int64_t st = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_stride[d] = st;
    st *= in_shape[d];
  }
  a.n = st;
  for (int d = 0; d < rank; ++d) {
    a.out_shape[d] = in_shape[perm[d]];
    a.in_stride_for_out_dim[d] = in_stride[perm[d]];
  }
  switch (elem_bytes) {
    case 1: return TransposeAs<uint8_t>(a, in, out, s);
    case 2: return TransposeAs<uint16_t>(a, in, out, s);
    case 8: return TransposeAs<uint64_t>(a, in, out, s);
    default: return TransposeAs<uint32_t>(a, in, out, s);
  }
}

cudaError_t LaunchCopy(const void* in, int64_t n_in, int in_bytes, void* out, int64_t n_out,
                       int out_bytes, cudaStream_t s) {
  if (n_in < 1) n_in = 1;
  switch (in_bytes) {
    case 1: return CopyFrom<uint8_t>(in, n_in, out, n_out, out_bytes, s);
    case 2: return CopyFrom<uint16_t>(in, n_in, out, n_out, out_bytes, s);
    case 8: return CopyFrom<uint64_t>(in, n_in, out, n_out, out_bytes, s);
    default: return CopyFrom<uint32_t>(in, n_in, out, n_out, out_bytes, s);
  }
}

cudaError_t LaunchStreamCopy(const float* a, float* b, int64_t n, cudaStream_t s) {
  const int64_t n4 = n / 4;
  StreamCopyKernel<<<Blocks(n4), kThreads, 0, s>>>(reinterpret_cast<const float4*>(a),
                                                   reinterpret_cast<float4*>(b), n4);
  return cudaGetLastError();
}

cudaError_t LaunchTriad(float* a, const float* b, const float* c, float sc, int64_t n,
                        cudaStream_t s) {
  const int64_t n4 = n / 4;
  TriadKernel<<<Blocks(n4), kThreads, 0, s>>>(reinterpret_cast<float4*>(a),
                                              reinterpret_cast<const float4*>(b),
                                              reinterpret_cast<const float4*>(c), sc, n4);
  return cudaGetLastError();
}

cudaError_t LaunchL2Read(const float* a, int64_t n, int passes, int blocks, float* sink,
                         cudaStream_t s) {
  L2ReadKernel<<<blocks, 512, 0, s>>>(reinterpret_cast<const float4*>(a), n / 4, passes, sink);
  return cudaGetLastError();
}

cudaError_t LaunchEmpty(cudaStream_t s) {
  EmptyKernel<<<1, 32, 0, s>>>();
  return cudaGetLastError();
}

cudaError_t LaunchFmaPeak(int blocks, int iters, bool half2, float* sink, cudaStream_t s) {
  if (half2) Half2FmaKernel<<<blocks, 256, 0, s>>>(iters, sink);
  else FmaKernel<<<blocks, 256, 0, s>>>(iters, sink);
  return cudaGetLastError();
}

cudaError_t AllowSpinSharedMemory(size_t bytes) {
  return cudaFuncSetAttribute(SpinKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

cudaError_t LaunchSpin(int blocks, int threads, size_t smem, int64_t spin_ns, cudaStream_t s) {
  SpinKernel<<<blocks, threads, smem, s>>>(spin_ns);
  return cudaGetLastError();
}

}  // namespace hase::probe::gpu
