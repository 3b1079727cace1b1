#include "hase/predict/precision.h"

namespace hase {

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kTensor: return "tensor";
  }
  return "fp32";
}

Result<Precision> ParsePrecision(std::string_view s) {
  if (s == "fp32") return Precision::kFp32;
  if (s == "fp16") return Precision::kFp16;
  if (s == "tensor" || s == "amp" || s == "fp16-tensor") return Precision::kTensor;
  return Status::InvalidArgument("unknown precision '" + std::string(s) + "'", "",
                                 "use fp32, fp16 or tensor");
}

}  // namespace hase
