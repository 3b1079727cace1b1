// LearnedEstimator: the XGBoost kernel model (LearnedKernelModel) behind the
// KernelLatencyEstimator interface, so `hase predict --model FILE` and the scheduler's latency
// oracle can use it. Name() = "xgboost".
//
// A Kernel (ONNX Runtime kernel from `kernels`) becomes a KernelSample (KernelToSample) and is
// predicted as a kernel of the "neusight" software stack (PyTorch 2.1 + cuDNN 8.9: the most
// recent of the training sources, closest to ORT's CUDA EP which also calls cuDNN/cuBLAS), on
// ctx.gpu under ctx.load, WITHOUT the dispatch floor (KernelEstimate is device time; the runtime's
// own dispatch cost is added by PredictModel), plus kDeviceFloorMs. A measured profile
// (ctx.profile.measured, `hase predict --profile`) replaces the model's normaliser figures of
// ctx.gpu (LearnedKernelModel::FiguresFromMeasuredProfile) when the model was trained on probe
// figures; otherwise the model's own figures are used (stored for training GPUs, datasheet ×
// fallback efficiency for others).
//
// Returns Unsupported (PredictModel falls back to the analytic estimator) for a family without a
// booster, or whose booster saw fewer than kMinKernelRows rows of pure kernel time (e.g. pooling,
// known only from bencyq timings that include host copies), and for conv/gemm under
// Precision::kTf32 on a GPU with TF32 tensor cores (the training rows are FP32 math), and for
// conv/gemm under Precision::kFp16 on a GPU with tensor cores (its float16 training rows all ran
// on tensor cores, DeepBench fp16_mixed), and for every conv under kFp16 / kTensor (leave-one-GPU-
// out the learned model loses to the two-parameter baseline there; docs/predictor-learned.md,
// "Where the learned model is used"). On a GPU without tensor cores kFp16 and kTensor are the
// same arithmetic and get the same prediction; the float16 normaliser there is
// max(FP16, FP32 peak) (FiguresRoofline), since GP102/GP104 run FP16 at 1/64 rate and runtimes
// compute in FP32.
#pragma once

#include <memory>
#include <string>

#include "hase/predict/kernel_latency_estimator.h"
#include "hase/predict/kernel_sample.h"
#include "hase/predict/learned_model.h"

namespace hase::predict {

class LearnedEstimator final : public KernelLatencyEstimator {
 public:
  // Device-side cost of any kernel (launch latency on the GPU, ramp-up, tail), ms — the same
  // 2 µs as AnalyticParams::kernel_floor_us.
  static constexpr double kDeviceFloorMs = 0.002;
  static constexpr size_t kMinKernelRows = 200;

  explicit LearnedEstimator(LearnedKernelModel model) : model_(std::move(model)) {}
  // Loads a model file (LearnedKernelModel::Load errors).
  static Result<std::unique_ptr<LearnedEstimator>> Load(const std::string& path);

  std::string Name() const override { return "xgboost"; }
  Result<KernelEstimate> Estimate(const Kernel& kernel, const ExecutionContext& ctx) const override;

  const LearnedKernelModel& model() const { return model_; }

 private:
  LearnedKernelModel model_;
};

// The training-set view of an ORT kernel: family, op ("conv2d", "conv2d_relu",
// "conv2d_add_relu", "depthwise_conv2d", "linear", "bmm", "add", "relu", "maxpool",
// "globalavgpool", "softmax", "layernorm", …), shapes from inputs/weights/outputs and
// attributes, flops = kernel.flops, bytes = kernel.dram_bytes(), dtype from `precision`.
KernelSample KernelToSample(const Kernel& kernel, Precision precision);

}  // namespace hase::predict
