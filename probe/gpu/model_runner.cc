#include "model_runner.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cuda_status.h"
#include "device_kernels.h"

// cuDNN 9 keeps the v7-style convolution API that ORT's CUDA EP uses, marked deprecated.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace hase::probe::gpu {

// The device kernels switch on EltOp values; keep them in step with kernel_plan.h.
static_assert(static_cast<int>(EltOp::kAdd) == 1 && static_cast<int>(EltOp::kMin) == 7);
static_assert(static_cast<int>(EltOp::kRelu) == 8 && static_cast<int>(EltOp::kClip) == 11);
static_assert(static_cast<int>(EltOp::kGelu) == 16 && static_cast<int>(EltOp::kSilu) == 24);

struct ModelRunner::Named {
  std::string name;
  void* ptr = nullptr;
  int64_t bytes = 0;
};

struct ModelRunner::Holder {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t ws = 0;
  ~Holder() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (act) cudnnDestroyActivationDescriptor(act);
    if (pool) cudnnDestroyPoolingDescriptor(pool);
  }
};

namespace {

MathType Math(DType t) { return t == DType::kFloat16 ? MathType::kHalf : MathType::kFloat; }
cudnnDataType_t CudnnType(DType t) {
  return t == DType::kFloat16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}
cudaDataType_t CudaType(DType t) { return t == DType::kFloat16 ? CUDA_R_16F : CUDA_R_32F; }
int64_t ElemBytes(DType t) { return std::max<int64_t>(1, DTypeSize(t)); }

// Bytes each named tensor needs for this kernel's launch: the declared size, or more where the
// launch writes more (cuDNN output dims from symmetric pads).
std::vector<std::pair<const TensorInfo*, int64_t>> Needs(const Kernel& k, const KernelPlan& p) {
  std::vector<std::pair<const TensorInfo*, int64_t>> needs;
  for (const auto* list : {&k.inputs, &k.weights, &k.outputs}) {
    for (const auto& t : *list) needs.emplace_back(&t, std::max<int64_t>(t.bytes(), 1));
  }
  const int64_t es = ElemBytes(p.dtype);
  int64_t out = 0;
  if (p.backend == Backend::kCudnnConv) out = p.conv.n * p.conv.k * p.conv.p * p.conv.q * es;
  if (p.backend == Backend::kCudnnPool) out = p.pool.n * p.pool.c * p.pool.p * p.pool.q * es;
  if (out > 0) {
    for (auto& [t, bytes] : needs) {
      if (t == &k.outputs[0] || (p.conv.residual && k.inputs.size() > 1 && t == &k.inputs[1])) {
        bytes = std::max(bytes, out);
      }
    }
  }
  return needs;
}

}  // namespace

void* ModelRunner::Buffer(const TensorInfo& t, int kernel_index, const char* role, int j) {
  const std::string name =
      t.name.empty() ? fmt::format("#{}:{}{}", kernel_index, role, j) : t.name;
  for (auto& b : buffers_) {
    if (b->name == name) return b->ptr;
  }
  return nullptr;
}

ModelRunner::~ModelRunner() {
  entries_.clear();
  for (void* p : allocations_) cudaFree(p);
}

Result<std::unique_ptr<ModelRunner>> ModelRunner::Create(const KernelList& list,
                                                         GpuContext& ctx,
                                                         const Options& options) {
  std::unique_ptr<ModelRunner> r(new ModelRunner());
  const int n = options.max_kernels > 0
                    ? std::min<int>(options.max_kernels, static_cast<int>(list.kernels.size()))
                    : static_cast<int>(list.kernels.size());
  r->entries_.resize(n);
  // Pass 1: plans and the bytes each tensor name needs.
  std::map<std::string, std::pair<int64_t, DType>> need;  // name → bytes, dtype
  for (int i = 0; i < n; ++i) {
    Entry& e = r->entries_[i];
    e.kernel = &list.kernels[i];
    auto plan = PlanKernel(*e.kernel);
    if (!plan.ok()) {
      e.skip_reason = plan.status().ToString();
      continue;
    }
    e.plan = *plan;
    if (e.plan.backend == Backend::kSkip) {
      e.skip_reason = e.plan.note;
      continue;
    }
    const Kernel& k = *e.kernel;
    int j = 0;
    for (const auto& [t, bytes] : Needs(k, e.plan)) {
      const char* role = j < (int)k.inputs.size() ? "in" : j < (int)(k.inputs.size() + k.weights.size()) ? "w" : "out";
      const std::string name = t->name.empty() ? fmt::format("#{}:{}{}", k.index, role, j) : t->name;
      auto& slot = need[name];
      if (bytes > slot.first) slot = {bytes, t->dtype};
      ++j;
    }
  }
  // Pass 2: allocate and fill.
  for (const auto& [name, nd] : need) {
    auto b = std::make_unique<Named>();
    b->name = name;
    b->bytes = (nd.first + 255) / 256 * 256;
    HASE_CUDA(cudaMalloc(&b->ptr, b->bytes));
    r->allocations_.push_back(b->ptr);
    r->device_bytes_ += b->bytes;
    const DType t = nd.second;
    if (t == DType::kFloat || t == DType::kFloat16) {
      HASE_CUDA(LaunchFill(b->ptr, b->bytes / ElemBytes(t), Math(t), ctx.stream()));
    } else {
      HASE_CUDA(cudaMemsetAsync(b->ptr, 0, b->bytes, ctx.stream()));
    }
    r->buffers_.push_back(std::move(b));
  }
  HASE_CUDA(cudaStreamSynchronize(ctx.stream()));
  // Pass 3: descriptors, algorithms, launch closures; one test launch each.
  for (Entry& e : r->entries_) {
    if (!e.skip_reason.empty()) continue;
    Status st = r->Prepare(e, ctx, options);
    if (st.ok()) st = e.launch();
    if (st.ok()) st = CudaStatus(cudaStreamSynchronize(ctx.stream()), "test launch");
    if (!st.ok()) {
      e.launch = nullptr;
      e.skip_reason = st.ToString();
      if (cudaGetLastError() != cudaSuccess || cudaStreamSynchronize(ctx.stream()) != cudaSuccess) {
        return Status::Internal("the GPU is in an error state after kernel " +
                                    std::to_string(e.kernel->index) + ": " + st.ToString(),
                                "CUDA");
      }
    }
  }
  return r;
}

Status ModelRunner::LaunchAll() const {
  for (const Entry& e : entries_) {
    if (e.launch) HASE_RETURN_IF_ERROR(e.launch());
  }
  return Status::OK();
}

Status ModelRunner::Prepare(Entry& e, GpuContext& ctx, const Options& o) {
  const Kernel& k = *e.kernel;
  const KernelPlan& p = e.plan;
  cudaStream_t s = ctx.stream();
  auto in = [&](size_t j) { return Buffer(k.inputs[j], k.index, "in", static_cast<int>(j)); };
  auto wt = [&](size_t j) {
    return Buffer(k.weights[j], k.index, "w", static_cast<int>(k.inputs.size() + j));
  };
  auto out = [&](size_t j) {
    return Buffer(k.outputs[j], k.index, "out",
                  static_cast<int>(k.inputs.size() + k.weights.size() + j));
  };
  std::vector<void*> operands;
  for (size_t j = 0; j < k.inputs.size(); ++j) operands.push_back(in(j));
  for (size_t j = 0; j < k.weights.size(); ++j) operands.push_back(wt(j));
  void* y = out(0);
  const MathType mt = Math(p.dtype);
  e.holder = std::make_unique<Holder>();
  Holder* h = e.holder.get();

  switch (p.backend) {
    case Backend::kSkip:
      return Status::OK();

    case Backend::kCudnnConv: {
      const ConvDims& d = p.conv;
      const cudnnDataType_t dt = CudnnType(p.dtype);
      HASE_CUDNN(cudnnCreateTensorDescriptor(&h->x));
      HASE_CUDNN(cudnnSetTensor4dDescriptor(h->x, CUDNN_TENSOR_NCHW, dt, d.n, d.c, d.h, d.w));
      HASE_CUDNN(cudnnCreateFilterDescriptor(&h->w));
      HASE_CUDNN(cudnnSetFilter4dDescriptor(h->w, dt, CUDNN_TENSOR_NCHW, d.k, d.c / d.groups,
                                            d.r, d.s));
      HASE_CUDNN(cudnnCreateConvolutionDescriptor(&h->conv));
      HASE_CUDNN(cudnnSetConvolution2dDescriptor(h->conv, d.pad_h, d.pad_w, d.stride_h,
                                                 d.stride_w, d.dilation_h, d.dilation_w,
                                                 CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      HASE_CUDNN(cudnnSetConvolutionGroupCount(h->conv, static_cast<int>(d.groups)));
      HASE_CUDNN(cudnnSetConvolutionMathType(
          h->conv, p.dtype == DType::kFloat16 ? CUDNN_TENSOR_OP_MATH
                   : o.tf32                   ? CUDNN_DEFAULT_MATH
                                              : CUDNN_FMA_MATH));
      int on = 0, oc = 0, oh = 0, ow = 0;
      HASE_CUDNN(cudnnGetConvolution2dForwardOutputDim(h->conv, h->x, h->w, &on, &oc, &oh, &ow));
      HASE_CUDNN(cudnnCreateTensorDescriptor(&h->y));
      HASE_CUDNN(cudnnSetTensor4dDescriptor(h->y, CUDNN_TENSOR_NCHW, dt, on, oc, oh, ow));
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int returned = 0;
      HASE_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(
          ctx.cudnn(), h->x, operands[0], h->w, wt(0), h->conv, h->y, y,
          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, ctx.workspace(),
          ctx.workspace_bytes()));
      bool found = false;
      for (int i = 0; i < returned && !found; ++i) {
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= ctx.workspace_bytes()) {
          h->algo = perf[i].algo;
          h->ws = perf[i].memory;
          found = true;
        }
      }
      if (!found) return Status::Unsupported("cuDNN found no algorithm", "conv");
      void* bias = d.bias ? wt(1) : nullptr;
      void* z = d.residual ? in(1) : nullptr;
      void* x = operands[0];
      void* w = wt(0);
      cudnnHandle_t cudnn = ctx.cudnn();
      void* ws = ctx.workspace();
      bool fused = false;  // cudnnConvolutionBiasActivationForward took the bias/z/Relu
      if (d.relu) {
        // cudnnConvolutionBiasActivationForward: y = relu(conv(x) + alpha2·z + bias), as ORT's
        // FusedConv; if cuDNN refuses it for this configuration, fall back to conv + epilogue.
        HASE_CUDNN(cudnnCreateTensorDescriptor(&h->bias));
        HASE_CUDNN(cudnnSetTensor4dDescriptor(h->bias, CUDNN_TENSOR_NCHW, dt, 1, d.k, 1, 1));
        HASE_CUDNN(cudnnCreateActivationDescriptor(&h->act));
        HASE_CUDNN(cudnnSetActivationDescriptor(h->act, CUDNN_ACTIVATION_RELU,
                                                CUDNN_NOT_PROPAGATE_NAN, 0.0));
        void* cba_bias = bias;
        if (!cba_bias) {  // the fused call needs a bias: a zero one
          void* zb = nullptr;
          HASE_CUDA(cudaMalloc(&zb, d.k * ElemBytes(p.dtype)));
          allocations_.push_back(zb);
          HASE_CUDA(cudaMemsetAsync(zb, 0, d.k * ElemBytes(p.dtype), s));
          cba_bias = zb;
        }
        const float alpha2 = z ? 1.f : 0.f;
        e.launch = [=]() -> Status {
          const float one = 1.f;
          HASE_CUDNN(cudnnConvolutionBiasActivationForward(
              cudnn, &one, h->x, x, h->w, w, h->conv, h->algo, ws, h->ws, &alpha2, h->y,
              z ? z : y, h->bias, cba_bias, h->act, h->y, y));
          return Status::OK();
        };
        Status tried = e.launch();
        if (tried.ok()) tried = CudaStatus(cudaStreamSynchronize(s), "fused conv test launch");
        fused = tried.ok();
        if (!fused) {
          e.launch = nullptr;
          std::fprintf(stderr, "hase-probe: kernel %d: fused conv refused (%s); conv + epilogue\n",
                       k.index, tried.ToString().c_str());
        } else if (d.epilogue.empty()) {
          return Status::OK();
        }
      }
      // cudnnConvolutionForward, then one epilogue pass for bias / residual / activations.
      EltArgs epi;
      epi.in[epi.n_in] = y;
      epi.in_n[epi.n_in++] = static_cast<int64_t>(on) * oc * oh * ow;
      if (!fused && bias) {
        epi.in[epi.n_in] = bias;
        epi.in_n[epi.n_in++] = d.k;
        epi.ops[epi.n_ops++] = static_cast<int32_t>(EltOp::kAdd);
      }
      if (!fused && z) {
        epi.in[epi.n_in] = z;
        epi.in_n[epi.n_in++] = epi.in_n[0];
        epi.ops[epi.n_ops++] = static_cast<int32_t>(EltOp::kAdd);
      }
      if (!fused && d.relu) epi.ops[epi.n_ops++] = static_cast<int32_t>(EltOp::kRelu);
      for (EltOp op : d.epilogue) {
        if (epi.n_ops < EltArgs::kMaxOps) epi.ops[epi.n_ops++] = static_cast<int32_t>(op);
      }
      epi.out = y;
      epi.n_out = epi.in_n[0];
      auto first = std::move(e.launch);
      e.launch = [=]() -> Status {
        if (first) {
          HASE_RETURN_IF_ERROR(first());
        } else {
          const float one = 1.f, zero = 0.f;
          HASE_CUDNN(cudnnConvolutionForward(cudnn, &one, h->x, x, h->w, w, h->conv, h->algo,
                                             ws, h->ws, &zero, h->y, y));
        }
        if (epi.n_ops > 0) HASE_CUDA(LaunchElementwise(epi, mt, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kCudnnPool: {
      const PoolDims& d = p.pool;
      const cudnnDataType_t dt = CudnnType(p.dtype);
      HASE_CUDNN(cudnnCreateTensorDescriptor(&h->x));
      HASE_CUDNN(cudnnSetTensor4dDescriptor(h->x, CUDNN_TENSOR_NCHW, dt, d.n, d.c, d.h, d.w));
      HASE_CUDNN(cudnnCreatePoolingDescriptor(&h->pool));
      const cudnnPoolingMode_t mode =
          d.max ? CUDNN_POOLING_MAX
                : d.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                      : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
      HASE_CUDNN(cudnnSetPooling2dDescriptor(h->pool, mode, CUDNN_NOT_PROPAGATE_NAN, d.r, d.s,
                                             d.pad_h, d.pad_w, d.stride_h, d.stride_w));
      int on = 0, oc = 0, oh = 0, ow = 0;
      HASE_CUDNN(cudnnGetPooling2dForwardOutputDim(h->pool, h->x, &on, &oc, &oh, &ow));
      HASE_CUDNN(cudnnCreateTensorDescriptor(&h->y));
      HASE_CUDNN(cudnnSetTensor4dDescriptor(h->y, CUDNN_TENSOR_NCHW, dt, on, oc, oh, ow));
      cudnnHandle_t cudnn = ctx.cudnn();
      void* x = operands[0];
      e.launch = [=]() -> Status {
        const float one = 1.f, zero = 0.f;
        HASE_CUDNN(cudnnPoolingForward(cudnn, h->pool, &one, h->x, x, &zero, h->y, y));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kCublasGemm: {
      const GemmDims& d = p.gemm;
      void* a = operands[0];
      void* b = operands[1];
      void* bias = d.bias && operands.size() > 2 ? operands[2] : nullptr;
      const cudaDataType_t ct = CudaType(p.dtype);
      const cublasComputeType_t comp =
          p.dtype == DType::kFloat && o.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      const int lda = static_cast<int>(d.trans_a ? d.m : d.k);
      const int ldb = static_cast<int>(d.trans_b ? d.k : d.n);
      const cublasOperation_t op_a = d.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
      const cublasOperation_t op_b = d.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
      cublasHandle_t cublas = ctx.cublas();
      EltArgs bias_args, epi;
      if (bias) {
        bias_args.in[0] = bias;
        bias_args.in_n[0] = d.n;
        bias_args.n_in = 1;
        bias_args.out = y;
        bias_args.n_out = d.batch * d.m * d.n;
      }
      epi.in[0] = y;
      epi.in_n[0] = d.batch * d.m * d.n;
      epi.n_in = 1;
      for (EltOp op : d.epilogue) {
        if (epi.n_ops < EltArgs::kMaxOps) epi.ops[epi.n_ops++] = static_cast<int32_t>(op);
      }
      epi.out = y;
      epi.n_out = epi.in_n[0];
      // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands.
      e.launch = [=]() -> Status {
        const float one = 1.f;
        const float beta = bias ? 1.f : 0.f;
        if (bias) HASE_CUDA(LaunchElementwise(bias_args, mt, s));
        if (d.batch == 1) {
          HASE_CUBLAS(cublasGemmEx(cublas, op_b, op_a, d.n, d.m, d.k, &one, b, ct, ldb, a, ct,
                                   lda, &beta, y, ct, d.n, comp, CUBLAS_GEMM_DEFAULT));
        } else {
          HASE_CUBLAS(cublasGemmStridedBatchedEx(
              cublas, op_b, op_a, d.n, d.m, d.k, &one, b, ct, ldb, d.b_batched ? d.k * d.n : 0,
              a, ct, lda, d.a_batched ? d.m * d.k : 0, &beta, y, ct, d.n, d.m * d.n, d.batch,
              comp, CUBLAS_GEMM_DEFAULT));
        }
        if (epi.n_ops > 0) HASE_CUDA(LaunchElementwise(epi, mt, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kElementwise: {
      EltArgs a;
      for (size_t j = 0; j < operands.size() && j < EltArgs::kMaxOperands; ++j) {
        a.in[a.n_in] = operands[j];
        a.in_n[a.n_in++] = std::max<int64_t>(1, p.operand_elements[j]);
      }
      for (EltOp op : p.ops) {
        if (a.n_ops < EltArgs::kMaxOps) a.ops[a.n_ops++] = static_cast<int32_t>(op);
      }
      a.out = y;
      a.n_out = p.out_elements;
      e.launch = [=]() -> Status {
        HASE_CUDA(LaunchElementwise(a, mt, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kBatchNorm: {
      void* x = operands[0];
      std::array<const void*, 4> params{};
      for (size_t j = 0; j < 4; ++j) params[j] = j < k.weights.size() ? wt(j) : x;
      const int64_t n = p.out_elements, ch = std::max<int64_t>(1, p.channels),
                    inner = std::max<int64_t>(1, p.inner);
      e.launch = [=]() -> Status {
        HASE_CUDA(LaunchBatchNorm(x, params.data(), y, n, ch, inner, mt, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kRowNorm: {
      void* x = operands[0];
      const int kind = p.op.find("softmax") != std::string::npos ? 0 : 1;
      const void* gamma = kind == 1 && !k.weights.empty() &&
                                  k.weights[0].elements() >= p.inner ? wt(0) : nullptr;
      const void* beta = kind == 1 && k.weights.size() > 1 &&
                                 k.weights[1].elements() >= p.inner ? wt(1) : nullptr;
      const int64_t rows = p.rows, inner = p.inner;
      e.launch = [=]() -> Status {
        HASE_CUDA(LaunchRowNorm(x, y, gamma, beta, rows, inner, kind, mt, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kConcat: {
      if (k.inputs.size() > 16) return Status::Unsupported("concat of more than 16 inputs");
      std::vector<const void*> ins;
      for (size_t j = 0; j < k.inputs.size(); ++j) ins.push_back(in(j));
      const std::vector<int64_t> inner = p.concat_inner;
      const int64_t outer = p.outer;
      const int es = static_cast<int>(ElemBytes(k.outputs[0].dtype));
      e.launch = [=]() -> Status {
        HASE_CUDA(LaunchConcat(ins.data(), inner.data(), static_cast<int>(ins.size()), y, outer,
                               es, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kSplit: {
      if (k.outputs.size() > 16) return Status::Unsupported("split into more than 16 outputs");
      std::vector<void*> outs;
      for (size_t j = 0; j < k.outputs.size(); ++j) outs.push_back(out(j));
      const void* x = operands[0];
      const std::vector<int64_t> inner = p.concat_inner;
      const int64_t outer = p.outer;
      const int es = static_cast<int>(ElemBytes(k.inputs[0].dtype));
      e.launch = [=]() -> Status {
        HASE_CUDA(LaunchSplit(x, outs.data(), inner.data(), static_cast<int>(outs.size()), outer,
                              es, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kTranspose: {
      void* x = operands[0];
      const std::vector<int64_t> shape = p.in_shape, perm = p.perm;
      const int es = static_cast<int>(ElemBytes(k.outputs[0].dtype));
      e.launch = [=]() -> Status {
        HASE_CUDA(LaunchTranspose(x, y, shape.data(), perm.data(), static_cast<int>(shape.size()),
                                  es, s));
        return Status::OK();
      };
      return Status::OK();
    }

    case Backend::kCopy: {
      const void* x = operands.empty() ? y : operands[0];
      const int64_t n_in = p.operand_elements.empty() ? p.out_elements : p.operand_elements[0];
      const int in_b = static_cast<int>(p.in_elem_bytes), out_b = static_cast<int>(p.out_elem_bytes);
      const int64_t n_out = p.out_elements;
      e.launch = [=]() -> Status {
        HASE_CUDA(LaunchCopy(x, n_in, in_b, y, n_out, out_b, s));
        return Status::OK();
      };
      return Status::OK();
    }
  }
  return Status::Internal("unknown backend");
}

}  // namespace hase::probe::gpu
