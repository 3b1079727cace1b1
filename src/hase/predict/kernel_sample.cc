#include "hase/predict/kernel_sample.h"

#include <algorithm>

#include <fmt/format.h>

namespace hase::predict {

int64_t KernelSample::out_h() const {
  if (h <= 0 || r <= 0 || stride_h <= 0) return 0;
  return (h + 2 * pad_h - dilation_h * (r - 1) - 1) / stride_h + 1;
}

int64_t KernelSample::out_w() const {
  if (w <= 0 || s <= 0 || stride_w <= 0) return 0;
  return (w + 2 * pad_w - dilation_w * (s - 1) - 1) / stride_w + 1;
}

bool KernelSample::HasFlag(const std::string& f) const {
  return std::find(flags.begin(), flags.end(), f) != flags.end();
}

bool KernelSample::Suspect() const {
  for (const auto& f : flags) {
    if (f.starts_with("suspect_")) return true;
  }
  return false;
}

namespace {
bool IsBinaryOp(const std::string& op) {
  return op == "add" || op == "mul" || op == "div" || op == "pow" || op == "sub";
}
}  // namespace

void FillDerived(KernelSample& s) {
  const double size = static_cast<double>(std::max<int64_t>(DTypeSize(s.dtype), 1));
  double flops = 0, bytes = 0;
  switch (s.family) {
    case KernelFamily::kConv:
    case KernelFamily::kGroupedConv: {
      const double g = static_cast<double>(std::max<int64_t>(s.groups, 1));
      const double cg = static_cast<double>(s.c) / g;
      const double out = static_cast<double>(s.n) * s.k * s.out_h() * s.out_w();
      flops = 2.0 * out * cg * s.r * s.s;
      bytes = size * (static_cast<double>(s.n) * s.c * s.h * s.w + s.k * cg * s.r * s.s + out);
      break;
    }
    case KernelFamily::kGemm: {
      const double b = static_cast<double>(std::max<int64_t>(s.gemm_batch, 1));
      const double m = s.gemm_m, n = s.gemm_n, k = s.gemm_k;
      flops = 2.0 * b * m * n * k;
      bytes = size * b * (m * k + k * n + m * n);
      break;
    }
    case KernelFamily::kPooling: {
      const double out = static_cast<double>(s.n) * s.c * s.out_h() * s.out_w();
      flops = out * s.r * s.s;
      bytes = size * (static_cast<double>(s.n) * s.c * s.h * s.w + out);
      break;
    }
    case KernelFamily::kElementwise:
      flops = static_cast<double>(s.elements);
      bytes = size * static_cast<double>(s.elements) * (IsBinaryOp(s.op) ? 3.0 : 2.0);
      break;
    case KernelFamily::kNormalization:
      flops = 5.0 * static_cast<double>(s.elements);
      bytes = 2.0 * size * static_cast<double>(s.elements);
      break;
    case KernelFamily::kDataMovement:
    case KernelFamily::kOther:
      bytes = 2.0 * size * static_cast<double>(s.elements);
      break;
  }
  if (s.flops <= 0) s.flops = flops;
  if (s.bytes <= 0) s.bytes = bytes;
}

std::string ShapeKey(const KernelSample& s) {
  return fmt::format("{}|{}|{}|{},{},{},{},{},{},{},{},{},{},{},{},{},{}|{},{},{},{}|{},{}",
                     KernelFamilyName(s.family), s.op, DTypeName(s.dtype), s.n, s.c, s.h, s.w,
                     s.k, s.r, s.s, s.stride_h, s.stride_w, s.pad_h, s.pad_w, s.dilation_h,
                     s.dilation_w, s.groups, s.gemm_batch, s.gemm_m, s.gemm_n, s.gemm_k,
                     s.elements, s.inner);
}

bool ParseKernelFamily(const std::string& name, KernelFamily* out) {
  for (KernelFamily f : {KernelFamily::kConv, KernelFamily::kGroupedConv, KernelFamily::kGemm,
                         KernelFamily::kElementwise, KernelFamily::kPooling,
                         KernelFamily::kNormalization, KernelFamily::kDataMovement,
                         KernelFamily::kOther}) {
    if (name == KernelFamilyName(f)) {
      *out = f;
      return true;
    }
  }
  return false;
}

bool ParseDType(const std::string& name, DType* out) {
  if (name.empty() || name == "float" || name == "float32" || name == "fp32") {
    *out = DType::kFloat;
  } else if (name == "float16" || name == "fp16" || name == "half") {
    *out = DType::kFloat16;
  } else if (name == "bfloat16" || name == "bf16") {
    *out = DType::kBFloat16;
  } else if (name == "int8") {
    *out = DType::kInt8;
  } else if (name == "double" || name == "float64") {
    *out = DType::kDouble;
  } else {
    return false;
  }
  return true;
}

}  // namespace hase::predict
