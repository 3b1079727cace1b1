#include "hase/predict/runtime_profile.h"

#include "hase/kernels/eager_batchnorm.h"

namespace hase {
namespace {

// Median per-operator floor of NeuSight's small elementwise calls (add/mul/tanh, <= 64 K
// elements, PyTorch 2.1) over its five machines: 26.2 µs (tools/fit_runtime_host.py). It
// includes the CUDA launch, which PredictModel adds from the profile (5 µs derived), so the
// framework's own share is the difference.
constexpr double kPytorchOpFloorUs = 26.2;
constexpr double kDerivedLaunchUs = 5.0;  // ProfileEfficiency::kLaunchOverheadUs

std::vector<RuntimeProfile> MakeRuntimes() {
  std::vector<RuntimeProfile> r;
  r.push_back({"ort-cuda", "ort-cuda", false, Precision::kTf32, true, 5.0, 0.0, 0.0, true,
               "ONNX Runtime CUDA EP, Run() with host inputs: ort-cuda fusions, TF32 "
               "(use_tf32=1), launch + 5 us executor per kernel (prior), H2D/D2H copies"});
  r.push_back({"ort-cuda-graph", "ort-cuda", false, Precision::kTf32, false, 0.0, 0.0, 10.0,
               false,
               "ONNX Runtime CUDA EP with enable_cuda_graph=1 and IO binding: one graph launch "
               "(10 us) per batch, no per-kernel host cost, no copies"});
  r.push_back({"pytorch-eager", "none", true, Precision::kTf32Conv, true,
               kPytorchOpFloorUs - kDerivedLaunchUs, 0.0, 0.0, false,
               "PyTorch eager, inputs on the GPU: one kernel per operator incl. BatchNorm, cuDNN "
               "conv TF32 / matmul FP32, 26.2 us host per operator (NeuSight floor)"});
  r.push_back({"tensorrt", "ort-cuda", false, Precision::kTf32, true, 0.0, 0.0, 0.0, false,
               "TensorRT fp32 engine (TF32 on by default), inputs on the GPU: launch cost only"});
  return r;
}

const std::vector<RuntimeProfile>& Runtimes() {
  static const std::vector<RuntimeProfile> kRuntimes = MakeRuntimes();
  return kRuntimes;
}

}  // namespace

std::vector<std::string> RuntimeNames() {
  std::vector<std::string> names;
  for (const auto& r : Runtimes()) names.push_back(r.name);
  return names;
}

Result<RuntimeProfile> FindRuntime(std::string_view name) {
  std::string_view n = name;
  if (n == "ort") n = "ort-cuda";
  if (n == "pytorch" || n == "torch") n = "pytorch-eager";
  if (n == "trt") n = "tensorrt";
  for (const auto& r : Runtimes()) {
    if (r.name == n) return r;
  }
  std::string names;
  for (const auto& r : Runtimes()) names += (names.empty() ? "" : ", ") + r.name;
  return Status::InvalidArgument("unknown runtime '" + std::string(name) + "'", "",
                                 "use one of " + names);
}

const RuntimeProfile& DefaultRuntime() { return Runtimes().front(); }

Result<KernelList> BuildRuntimeKernelList(const std::string& onnx_path, KernelListOptions options,
                                          const RuntimeProfile& runtime) {
  options.profile = runtime.fusion_profile;
  auto kl = BuildKernelList(onnx_path, options);
  if (!kl.ok()) return kl;
  if (runtime.eager_batchnorm) InsertEagerBatchNorm(*kl);
  return kl;
}

}  // namespace hase
