// GpuContext: one CUDA device with the stream, cuDNN and cuBLAS handles and the shared
// convolution workspace the probe uses. Not thread-safe; one per process.
#pragma once

#include <memory>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "hase/base/status.h"

namespace hase::probe::gpu {

class GpuContext {
 public:
  // Selects `device`, creates a non-blocking stream, the cuDNN and cuBLAS handles bound to it,
  // a cuBLAS workspace (needed for CUDA-graph capture) and up to `workspace_bytes` of cuDNN
  // workspace (halved until it fits). Errors: NotFound (no such device / no CUDA device),
  // Internal (a CUDA, cuDNN or cuBLAS failure).
  static Result<std::unique_ptr<GpuContext>> Create(int device, size_t workspace_bytes);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int device() const { return device_; }
  const cudaDeviceProp& props() const { return props_; }
  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  void* workspace() const { return workspace_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  std::string pci_bus_id() const;     // "0000:3B:00.0"
  std::string driver_version() const; // CUDA driver API version, e.g. "13.0"

 private:
  GpuContext() = default;
  int device_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  void* cublas_workspace_ = nullptr;
};

}  // namespace hase::probe::gpu
