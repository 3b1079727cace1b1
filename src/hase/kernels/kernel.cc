#include "hase/kernels/kernel.h"

namespace hase {

int64_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat: case DType::kInt32: return 4;
    case DType::kUint8: case DType::kInt8: case DType::kBool: return 1;
    case DType::kInt64: case DType::kDouble: return 8;
    case DType::kFloat16: case DType::kBFloat16: return 2;
    case DType::kUndefined: return 0;
  }
  return 0;
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat: return "float";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "double";
    case DType::kBFloat16: return "bfloat16";
    case DType::kUndefined: return "undefined";
  }
  return "undefined";
}

const char* KernelFamilyName(KernelFamily f) {
  switch (f) {
    case KernelFamily::kConv: return "conv";
    case KernelFamily::kGroupedConv: return "grouped_conv";
    case KernelFamily::kGemm: return "gemm";
    case KernelFamily::kElementwise: return "elementwise";
    case KernelFamily::kPooling: return "pooling";
    case KernelFamily::kNormalization: return "normalization";
    case KernelFamily::kDataMovement: return "data_movement";
    case KernelFamily::kOther: return "other";
  }
  return "other";
}

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double KernelList::total_macs() const {
  double s = 0;
  for (const auto& k : kernels) s += k.macs;
  return s;
}
double KernelList::total_flops() const {
  double s = 0;
  for (const auto& k : kernels) s += k.flops;
  return s;
}
int64_t KernelList::total_parameters() const {
  int64_t s = 0;
  for (const auto& k : kernels) s += k.parameters;
  return s;
}
int64_t KernelList::total_dram_bytes() const {
  int64_t s = 0;
  for (const auto& k : kernels) s += k.dram_bytes();
  return s;
}

}  // namespace hase
