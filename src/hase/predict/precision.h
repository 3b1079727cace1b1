// Precision: the arithmetic a model is run in, which selects the peak the predictor uses.
#pragma once

#include <string>
#include <string_view>

#include "hase/base/status.h"

namespace hase {

enum class Precision {
  kFp32,    // FP32 on CUDA cores (ONNX Runtime CUDA EP default for an fp32 model)
  kFp16,    // FP16 tensors, FP16 math on CUDA cores (no tensor cores)
  kTensor,  // FP16 tensors, Conv/Gemm on tensor cores with FP32 accumulate (PyTorch AMP,
            // ORT fp16 models); other kernels as kFp16
};

// "fp32", "fp16", "tensor" — the spelling used by flags, JSON and model files. Never rename.
const char* PrecisionName(Precision p);
// Parses the spelling above (also accepts "amp" and "fp16-tensor" for kTensor).
// Errors: InvalidArgument naming the accepted values.
Result<Precision> ParsePrecision(std::string_view s);

}  // namespace hase
