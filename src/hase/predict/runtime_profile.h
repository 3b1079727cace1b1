// RuntimeProfile: how one inference runtime runs a model — which kernels it launches (fusion
// profile), in what arithmetic by default, what the host spends to issue each kernel and each
// batch, and whether every batch copies its inputs and outputs between host and device.
//
// The same GPU time can give very different model latencies: PyTorch eager pays ~26 µs of host
// time per operator, so a ResNet-50 at batch 1 on an A100 is host-bound (the GPU idles between
// kernels), while a CUDA graph replays the same kernels back to back. PredictModel
// (predict_model.h) composes the host issue timeline with the device timeline per kernel.
//
// Every number below is sourced in docs/predictor.md, "Runtime profiles"; the summary:
//   ort-cuda        ORT CUDA EP, InferenceSession.Run with host (numpy) inputs. Fusion
//                   "ort-cuda"; TF32 (use_tf32 default true, cuda_execution_provider_info.h);
//                   host per kernel = CUDA launch (profile.launch_overhead_us) + 5 µs ORT
//                   executor (prior); inputs copied H2D and outputs D2H every batch (the
//                   bencyq_hase collector's sess.run does exactly this, its README).
//   ort-cuda-graph  ORT CUDA EP with enable_cuda_graph=1: IO binding with device buffers (ORT
//                   requires it for CUDA graphs), no copies, no per-kernel host cost; one
//                   cudaGraphLaunch per batch. Kernels then run back to back (their device-side
//                   fixed cost is the estimator's kernel floor, as for stream launches; NVIDIA,
//                   "Getting Started with CUDA Graphs": 3.4 µs per 2.9 µs kernel in a graph vs
//                   3.8 µs launched back to back on a stream).
//   pytorch-eager   PyTorch eager, inputs already on the GPU: one kernel per operator (fusion
//                   "none") plus the BatchNormalization the ONNX exporter folded
//                   (kernels/eager_batchnorm.h); cuDNN convs on TF32, matmul FP32 (PyTorch >=
//                   1.12 defaults: precision "tf32-conv"); 26.2 µs host per operator including the
//                   launch (median small-op floor of NeuSight's five PyTorch 2.1 machines,
//                   tools/fit_runtime_host.py).
//   tensorrt        TensorRT engine, fp32 build (TF32 on: BuilderFlag::kTF32 is set by
//                   default), inputs on the device (trtexec's "GPU Compute Time"); fusion
//                   approximated by "ort-cuda"; host per kernel = the CUDA launch alone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/kernels/kernel.h"
#include "hase/kernels/kernel_list_builder.h"
#include "hase/predict/precision.h"

namespace hase {

struct RuntimeProfile {
  std::string name;                  // "ort-cuda", … (flag, JSON and workload spelling; never rename)
  std::string fusion_profile;        // kernels/fusion_profile.h name the runtime's kernels follow
  bool eager_batchnorm = false;      // re-insert BatchNormalization kernels the exporter folded
  Precision default_precision = kDefaultPrecision;  // what the runtime does with an fp32 model
  bool per_kernel_launch = true;     // false: the whole batch is one CUDA graph launch
  double framework_us_per_kernel = 0;  // host time per kernel on top of the CUDA launch
                                       // (MicrobenchmarkProfile::launch_overhead_us), µs
  double graph_node_gap_us = 0;      // device-side gap between graph nodes (CUDA graphs), µs
  double batch_host_us = 0;          // host time per batch before the first kernel (graph launch,
                                     // run setup), µs; synchronisation is PredictOptions::sync_us
  bool copies_io = false;            // inputs H2D and outputs D2H on every batch
  std::string source;                // one line: where the numbers come from
};

// "ort-cuda", "ort-cuda-graph", "pytorch-eager", "tensorrt" — in this order.
std::vector<std::string> RuntimeNames();

// The runtime named `name` (also accepts "ort", "pytorch", "torch", "trt"). Errors:
// InvalidArgument naming the accepted values.
Result<RuntimeProfile> FindRuntime(std::string_view name);

// The default runtime (ort-cuda): what `hase predict`, `simulate` and `serve` assume.
const RuntimeProfile& DefaultRuntime();

// The kernels `runtime` launches for the model at `onnx_path`: BuildKernelList with
// options.profile replaced by runtime.fusion_profile, then InsertEagerBatchNorm when
// runtime.eager_batchnorm. Errors: as BuildKernelList.
Result<KernelList> BuildRuntimeKernelList(const std::string& onnx_path, KernelListOptions options,
                                          const RuntimeProfile& runtime);

}  // namespace hase
