#include "hase/predict/learned_estimator.h"

#include "hase/predict/analytic_estimator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace hase::predict {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t Attr(const Kernel& k, const char* name, size_t i, int64_t dflt) {
  auto it = k.attributes.find(name);
  if (it == k.attributes.end() || it->second.size() <= i) return dflt;
  return it->second[i];
}

bool Has(const std::vector<std::string>& v, const char* x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int64_t MaxElements(const std::vector<TensorInfo>& ts) {
  int64_t m = 0;
  for (const auto& t : ts) m = std::max(m, t.elements());
  return m;
}

}  // namespace

KernelSample KernelToSample(const Kernel& k, Precision precision) {
  KernelSample s;
  s.source = "neusight";
  s.gpu = "";
  s.family = k.family;
  s.dtype = StorageScale(precision) == 1.0 ? DType::kFloat : DType::kFloat16;
  const std::string op = k.op_type;
  const bool conv_like = k.family == KernelFamily::kConv || k.family == KernelFamily::kGroupedConv ||
                         k.family == KernelFamily::kPooling;
  if (conv_like && !k.inputs.empty() && k.inputs[0].shape.size() == 4) {
    const auto& x = k.inputs[0].shape;
    s.n = x[0]; s.c = x[1]; s.h = x[2]; s.w = x[3];
    s.stride_h = Attr(k, "strides", 0, 1);
    s.stride_w = Attr(k, "strides", 1, 1);
    s.pad_h = Attr(k, "pads", 0, 0);
    s.pad_w = Attr(k, "pads", 1, 0);
    s.dilation_h = Attr(k, "dilations", 0, 1);
    s.dilation_w = Attr(k, "dilations", 1, 1);
    if (k.family == KernelFamily::kPooling) {
      s.k = s.c;
      if (op.starts_with("Global")) {
        s.r = s.h;
        s.s = s.w;
        s.op = op == "GlobalMaxPool" ? "globalmaxpool" : "globalavgpool";
      } else {
        s.r = Attr(k, "kernel_shape", 0, 1);
        s.s = Attr(k, "kernel_shape", 1, 1);
        s.op = op == "MaxPool" ? "maxpool" : "avgpool";
      }
    } else {
      s.groups = Attr(k, "group", 0, 1);
      if (!k.weights.empty() && k.weights[0].shape.size() == 4) {
        s.k = k.weights[0].shape[0];
        s.r = k.weights[0].shape[2];
        s.s = k.weights[0].shape[3];
      } else if (!k.outputs.empty() && k.outputs[0].shape.size() == 4) {
        s.k = k.outputs[0].shape[1];
        s.r = Attr(k, "kernel_shape", 0, 1);
        s.s = Attr(k, "kernel_shape", 1, 1);
      }
      if (s.groups > 1) {
        s.op = s.groups == s.c ? "depthwise_conv2d" : "conv2d";
      } else if (Has(k.fused_ops, "Add") && Has(k.fused_ops, "Relu")) {
        s.op = "conv2d_add_relu";
      } else if (Has(k.fused_ops, "Relu")) {
        s.op = "conv2d_relu";
      } else {
        s.op = "conv2d";
      }
    }
  } else if (k.family == KernelFamily::kGemm && !k.outputs.empty() && !k.inputs.empty()) {
    const auto& out = k.outputs[0].shape;
    const auto& a = k.inputs[0].shape;
    const int64_t n = out.empty() ? 1 : out.back();
    int64_t lead = 1;
    for (size_t i = 0; i + 1 < out.size(); ++i) lead *= out[i];
    const bool trans_a = Attr(k, "transA", 0, 0) != 0;
    const int64_t kk = a.empty() ? 1 : (trans_a && a.size() >= 2 ? a[a.size() - 2] : a.back());
    if (!k.weights.empty() || k.inputs.size() < 2) {
      s.op = "linear";  // activation × weight: NeuSight's linear, batch folded into m
      s.gemm_batch = 1;
      s.gemm_m = lead;
    } else {
      s.op = "bmm";
      const int64_t m = out.size() >= 2 ? out[out.size() - 2] : 1;
      s.gemm_m = m;
      s.gemm_batch = m > 0 ? lead / m : 1;
    }
    s.gemm_n = n;
    s.gemm_k = kk;
  } else {
    s.op = Lower(op);
    if (op == "LayerNormalization") s.op = "layernorm";
    if (op == "BatchNormalization") s.op = "batchnorm";
    s.elements = MaxElements(k.inputs);
    if (k.family == KernelFamily::kNormalization && !k.inputs.empty() &&
        !k.inputs[0].shape.empty()) {
      s.inner = k.inputs[0].shape.back();
    }
  }
  s.flops = k.flops;
  s.bytes = static_cast<double>(k.dram_bytes());
  if (s.dtype == DType::kFloat16) s.bytes *= 0.5;  // fp32 graph run with FP16 tensors
  s.latency_ms = 1;  // unused for prediction
  FillDerived(s);    // only fills what is still 0
  return s;
}

Result<std::unique_ptr<LearnedEstimator>> LearnedEstimator::Load(const std::string& path) {
  HASE_ASSIGN_OR_RETURN(LearnedKernelModel m, LearnedKernelModel::Load(path));
  return std::make_unique<LearnedEstimator>(std::move(m));
}

Result<KernelEstimate> LearnedEstimator::Estimate(const Kernel& kernel,
                                                  const ExecutionContext& ctx) const {
  if (kernel.flops < 0 || kernel.dram_bytes() < 0) {
    return Status::InvalidArgument("kernel with negative FLOPs or bytes", kernel.type);
  }
  if (!model_.HasFamily(kernel.family) || model_.KernelRows(kernel.family) < kMinKernelRows) {
    return Status::Unsupported(std::string("no learned model for family ") +
                               KernelFamilyName(kernel.family));
  }
  // The training rows are FP32 math (NeuSight sets cudnn.allow_tf32 = False; PyTorch's matmul
  // default is FP32 since 1.12): conv/gemm that run on TF32 tensor cores are left to the
  // analytic model.
  if (ctx.precision == Precision::kTf32 && ctx.gpu.tensor_tf32_tflops() > 0 &&
      UsesTensorCores(kernel.family)) {
    return Status::Unsupported("learned model has no TF32 tensor-core timings", kernel.type);
  }
  // FP16 on CUDA cores of a GPU that has tensor cores: every float16 conv/gemm training row of
  // such a GPU ran on tensor cores (DeepBench fp16_mixed), and the normaliser uses the tensor
  // peak for float16 conv/gemm there, so without this kFp16 would get the kTensor prediction.
  if (ctx.precision == Precision::kFp16 && ctx.gpu.has_tensor_cores() &&
      UsesTensorCores(kernel.family)) {
    return Status::Unsupported("learned model has no FP16 CUDA-core timings of conv/gemm on a "
                               "GPU with tensor cores",
                               kernel.type);
  }
  // FP16 convolutions: leave-one-GPU-out on DeepBench the learned model loses to the
  // two-parameter baseline (MAPE 67 % vs 44 % over the float16 conv rows of P100, T4, V100;
  // the analytic model 41 %), so they go to the analytic model (docs/predictor-learned.md).
  if (StorageScale(ctx.precision) != 1.0 && kernel.family == KernelFamily::kConv) {
    return Status::Unsupported("learned model loses to the baseline on float16 convolutions",
                               kernel.type);
  }
  KernelSample s = KernelToSample(kernel, ctx.precision);
  s.gpu = ctx.gpu.id;
  s.load = ctx.load;
  // A measured profile moves the normaliser (models trained on probe figures only).
  std::map<std::string, NormFigures> figures;
  if (ctx.profile.measured && model_.UsesProbeFigures()) {
    figures[ctx.gpu.id] = model_.FiguresFromMeasuredProfile(ctx.profile);
  }
  HASE_ASSIGN_OR_RETURN(std::vector<double> pred,
                        model_.Predict({s}, {&ctx.gpu}, /*include_dispatch_floor=*/false, figures));
  if (pred.empty() || !std::isfinite(pred[0])) {
    return Status::Unsupported("learned model gave no prediction", kernel.type);
  }
  KernelEstimate e;
  e.latency_ms = pred[0] + kDeviceFloorMs;
  e.estimator = Name();
  return e;
}

}  // namespace hase::predict
