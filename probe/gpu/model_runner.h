// ModelRunner: every kernel of one KernelList prepared on the GPU, ready to launch.
//
// Tensors are allocated once per name, so kernel i+1 reads the buffer kernel i wrote, as in the
// real model (same footprint, same L2 reuse between consecutive kernels); initializers get
// their own buffers. All buffers are filled with small finite values. Convolution algorithms
// are chosen as ONNX Runtime's CUDA EP does by default (cudnnFindConvolutionForwardAlgorithmEx,
// exhaustive search, fastest first), once per kernel at Create().
// Not thread-safe; launches go to the GpuContext's stream.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu_context.h"
#include "hase/base/status.h"
#include "hase/kernels/kernel.h"
#include "kernel_plan.h"

namespace hase::probe::gpu {

class ModelRunner {
 public:
  struct Options {
    bool tf32 = true;     // allow TF32 tensor cores for FP32 conv/gemm (ORT's default)
    int max_kernels = 0;  // prepare only the first N kernels (0 = all)
  };

  // Plans, allocates and prepares every kernel. A kernel the probe cannot build (an
  // unsupported plan, a cuDNN configuration without an algorithm) is kept as not launchable
  // with its reason; only device-wide failures are errors (Internal, e.g. out of memory).
  static Result<std::unique_ptr<ModelRunner>> Create(const KernelList& list, GpuContext& ctx,
                                                     const Options& options);
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  int size() const { return static_cast<int>(entries_.size()); }
  const Kernel& kernel(int i) const { return *entries_[i].kernel; }
  const KernelPlan& plan(int i) const { return entries_[i].plan; }
  bool launchable(int i) const { return static_cast<bool>(entries_[i].launch); }
  const std::string& skip_reason(int i) const { return entries_[i].skip_reason; }
  int64_t device_bytes() const { return device_bytes_; }

  // Enqueues kernel i (REQUIRES launchable(i)).
  Status Launch(int i) const { return entries_[i].launch(); }
  // Enqueues every launchable kernel in order (the whole model, back to back).
  Status LaunchAll() const;

  struct Holder;  // owns the cuDNN descriptors of one kernel

 private:
  struct Entry {
    const Kernel* kernel = nullptr;
    KernelPlan plan;
    std::function<Status()> launch;  // empty when not launchable
    std::string skip_reason;
    std::unique_ptr<Holder> holder;
  };
  ModelRunner() = default;
  Status Prepare(Entry& e, GpuContext& ctx, const Options& o);
  void* Buffer(const TensorInfo& t, int kernel_index, const char* role, int j);

  std::vector<Entry> entries_;
  std::vector<void*> allocations_;
  struct Named;
  std::vector<std::unique_ptr<Named>> buffers_;
  int64_t device_bytes_ = 0;
};

}  // namespace hase::probe::gpu
