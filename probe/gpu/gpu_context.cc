#include "gpu_context.h"

#include <fmt/format.h>

#include "cuda_status.h"

namespace hase::probe::gpu {
namespace {
constexpr size_t kCublasWorkspaceBytes = 32u << 20;  // cuBLAS recommends ≥ 32 MiB on Hopper
}

Result<std::unique_ptr<GpuContext>> GpuContext::Create(int device, size_t workspace_bytes) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    return Status::NotFound(std::string("no CUDA device: ") + cudaGetErrorString(e), "CUDA",
                            "run hase-probe on a machine with an NVIDIA GPU and driver");
  }
  if (device < 0 || device >= count) {
    return Status::NotFound(fmt::format("device {} does not exist ({} found)", device, count),
                            "CUDA", "pass --device 0.." + std::to_string(count - 1));
  }
  std::unique_ptr<GpuContext> c(new GpuContext());
  c->device_ = device;
  HASE_CUDA(cudaSetDevice(device));
  HASE_CUDA(cudaGetDeviceProperties(&c->props_, device));
  HASE_CUDA(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking));
  HASE_CUDNN(cudnnCreate(&c->cudnn_));
  HASE_CUDNN(cudnnSetStream(c->cudnn_, c->stream_));
  HASE_CUBLAS(cublasCreate(&c->cublas_));
  HASE_CUBLAS(cublasSetStream(c->cublas_, c->stream_));
  HASE_CUDA(cudaMalloc(&c->cublas_workspace_, kCublasWorkspaceBytes));
  HASE_CUBLAS(cublasSetWorkspace(c->cublas_, c->cublas_workspace_, kCublasWorkspaceBytes));
  for (size_t bytes = workspace_bytes; bytes >= (1u << 20); bytes /= 2) {
    if (cudaMalloc(&c->workspace_, bytes) == cudaSuccess) {
      c->workspace_bytes_ = bytes;
      break;
    }
    (void)cudaGetLastError();  // clear the allocation failure
  }
  return c;
}

GpuContext::~GpuContext() {
  if (workspace_) cudaFree(workspace_);
  if (cublas_workspace_) cudaFree(cublas_workspace_);
  if (cublas_) cublasDestroy(cublas_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::string GpuContext::pci_bus_id() const {
  char buf[64] = {0};
  if (cudaDeviceGetPCIBusId(buf, sizeof buf, device_) != cudaSuccess) return "";
  return buf;
}

std::string GpuContext::driver_version() const {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) return "";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

}  // namespace hase::probe::gpu
