#include "hase/predict/conv_algorithm.h"

namespace hase {

namespace {

int64_t Attr(const Kernel& k, const char* name, size_t i, int64_t dflt) {
  auto it = k.attributes.find(name);
  if (it == k.attributes.end() || it->second.size() <= i) return dflt;
  return it->second[i];
}

}  // namespace

const char* ConvAlgorithmName(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::kImplicitGemm: return "implicit_gemm";
    case ConvAlgorithm::kWinograd: return "winograd";
    case ConvAlgorithm::kTensorCoreGemm: return "tensor_core_gemm";
    case ConvAlgorithm::kGrouped: return "grouped";
  }
  return "implicit_gemm";
}

std::optional<ConvShape> ConvShapeOf(const Kernel& k) {
  if (!IsConvolution(k.family)) return std::nullopt;
  if (k.inputs.empty() || k.inputs[0].shape.size() != 4) return std::nullopt;
  ConvShape s;
  const auto& x = k.inputs[0].shape;
  s.n = x[0];
  s.c = x[1];
  s.h = x[2];
  s.w = x[3];
  s.groups = Attr(k, "group", 0, 1);
  s.stride_h = Attr(k, "strides", 0, 1);
  s.stride_w = Attr(k, "strides", 1, 1);
  s.dilation_h = Attr(k, "dilations", 0, 1);
  s.dilation_w = Attr(k, "dilations", 1, 1);
  if (!k.weights.empty() && k.weights[0].shape.size() == 4) {
    s.k = k.weights[0].shape[0];
    s.r = k.weights[0].shape[2];
    s.s = k.weights[0].shape[3];
  } else {
    if (!k.outputs.empty() && k.outputs[0].shape.size() == 4) s.k = k.outputs[0].shape[1];
    s.r = Attr(k, "kernel_shape", 0, 1);
    s.s = Attr(k, "kernel_shape", 1, 1);
  }
  return s;
}

ConvAlgorithm PickConvAlgorithm(const ConvShape& sh, Precision precision, const GpuSpec& gpu) {
  if (sh.groups > 1) return ConvAlgorithm::kGrouped;
  const bool tensor = (precision == Precision::kTensor && gpu.has_tensor_cores()) ||
                      (precision == Precision::kTf32 && gpu.tensor_tf32_tflops() > 0);
  if (tensor && sh.c % kTensorChannelMultiple == 0) return ConvAlgorithm::kTensorCoreGemm;
  if (sh.r == 3 && sh.s == 3 && sh.stride_h == 1 && sh.stride_w == 1 && sh.dilation_h == 1 &&
      sh.dilation_w == 1 && sh.c >= kWinogradMinChannels) {
    return ConvAlgorithm::kWinograd;
  }
  return ConvAlgorithm::kImplicitGemm;
}

}  // namespace hase
