#include "hase/predict/precision.h"

namespace hase {

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kTensor: return "tensor";
    case Precision::kTf32: return "tf32";
    case Precision::kTf32Conv: return "tf32-conv";
  }
  return "fp32";
}

Result<Precision> ParsePrecision(std::string_view s) {
  if (s == "fp32") return Precision::kFp32;
  if (s == "fp16") return Precision::kFp16;
  if (s == "tensor" || s == "amp" || s == "fp16-tensor") return Precision::kTensor;
  if (s == "tf32") return Precision::kTf32;
  if (s == "tf32-conv") return Precision::kTf32Conv;
  return Status::InvalidArgument("unknown precision '" + std::string(s) + "'", "",
                                 "use tf32, tf32-conv, fp32, fp16 or tensor");
}

double StorageScale(Precision p) {
  return p == Precision::kFp32 || p == Precision::kTf32 || p == Precision::kTf32Conv ? 1.0 : 0.5;
}

Precision EffectivePrecision(Precision p, bool family_is_conv) {
  if (p != Precision::kTf32Conv) return p;
  return family_is_conv ? Precision::kTf32 : Precision::kFp32;
}

}  // namespace hase
