// Converts CUDA runtime, cuDNN and cuBLAS error codes into hase::Status (the adapters of the
// three libraries). Every GPU failure becomes Status::Internal naming the call.
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "hase/base/status.h"

namespace hase::probe::gpu {

inline Status CudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return Status::Internal(std::string(what) + ": " + cudaGetErrorString(e), "CUDA");
}
inline Status CudnnStatus(cudnnStatus_t e, const char* what) {
  if (e == CUDNN_STATUS_SUCCESS) return Status::OK();
  return Status::Internal(std::string(what) + ": " + cudnnGetErrorString(e), "cuDNN");
}
inline Status CublasStatus(cublasStatus_t e, const char* what) {
  if (e == CUBLAS_STATUS_SUCCESS) return Status::OK();
  return Status::Internal(std::string(what) + ": cuBLAS status " +
                              std::to_string(static_cast<int>(e)),
                          "cuBLAS");
}

}  // namespace hase::probe::gpu

#define HASE_CUDA(expr) HASE_RETURN_IF_ERROR(::hase::probe::gpu::CudaStatus((expr), #expr))
#define HASE_CUDNN(expr) HASE_RETURN_IF_ERROR(::hase::probe::gpu::CudnnStatus((expr), #expr))
#define HASE_CUBLAS(expr) HASE_RETURN_IF_ERROR(::hase::probe::gpu::CublasStatus((expr), #expr))
