// MeasuredRun: one measured whole-model run (model, GPU type, runtime, batch, latency per batch),
// read from a CSV file, and hase's uncalibrated prediction of it: the input of `hase calibrate`
// and of tools/calibration_check.
//
// CSV (header required, any column order, '#' lines are comments):
//   model,gpu,batch,latency_ms[,runtime][,precision][,input_shape]
//   resnet50,A100-SXM4-40GB,8,5.1,pytorch-eager,,3x224x224
// model: zoo name or .onnx path; gpu: any name the catalog resolves; runtime: a
// runtime_profile.h name (default ort-cuda); precision: precision.h name (default the runtime's);
// input_shape: dims after the batch (default the model's). latency_ms: measured time of one
// batch, ms.
// hase-probe's whole-model CSV (`hase-probe kernels --model-out`, header with
// stream_median_ms) is read as well: its idle rows only, stream_median_ms as runtime
// "tensorrt" (kernels launched back to back, CUDA launch only, no copies) and graph_median_ms
// as "ort-cuda-graph" (one CUDA graph), both on the ort-cuda kernels the probe ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/predict/kernel_latency_estimator.h"
#include "hase/predict/predict_model.h"

namespace hase {

struct MeasuredRun {
  std::string model;                 // zoo name or .onnx path
  std::string gpu;                   // GPU type as written (resolved by the catalog)
  std::string runtime;               // runtime name ("" = the default runtime)
  std::string precision;             // precision name ("" = the runtime's default)
  int64_t batch = 1;                 // >= 1
  std::vector<int64_t> input_shape;  // dims after the batch; empty = the model's
  double latency_ms = 0;             // measured per batch, > 0
  std::string where;                 // "FILE:LINE" for messages
};

// Reads the rows of `path` (either format above). Errors: NotFound/IO reading, Parse (missing
// column, bad number, latency not > 0, batch < 1, bad input_shape), each naming FILE:LINE.
Result<std::vector<MeasuredRun>> ReadMeasuredRuns(const std::string& path);

// The uncalibrated prediction of `run` (PredictModel on an idle GPU, calibration off):
// `onnx_path` the model file the run's model names; `kernels_out`, when not null, receives the
// kernel list that was predicted. Errors: NotFound (GPU type), InvalidArgument (runtime,
// precision), the kernel builder's and predictor's errors, all naming run.where.
Result<ModelLatency> PredictMeasuredRun(const MeasuredRun& run, const std::string& onnx_path,
                                        const GpuCatalog& catalog,
                                        const KernelLatencyEstimator* estimator = nullptr,
                                        KernelList* kernels_out = nullptr);

}  // namespace hase
