// Precision: the arithmetic a model is run in, which selects the peak the predictor uses.
#pragma once

#include <string>
#include <string_view>

#include "hase/base/status.h"

namespace hase {

enum class Precision {
  kFp32,    // FP32 tensors and math on CUDA cores (TF32 disabled: ORT CUDA EP use_tf32=0,
            // PyTorch allow_tf32=False)
  kFp16,    // FP16 tensors, FP16 math on CUDA cores (no tensor cores)
  kTensor,  // FP16 tensors, Conv/Gemm on tensor cores with FP32 accumulate (PyTorch AMP,
            // ORT fp16 models); other kernels as kFp16
  kTf32,    // FP32 tensors; Conv/Gemm on TF32 tensor cores where the GPU has them (compute
            // capability >= 8.0), else as kFp32; other kernels as kFp32. What ONNX Runtime's CUDA
            // EP does with an fp32 model by default (provider option use_tf32, default true:
            // onnxruntime/core/providers/cuda/cuda_execution_provider_info.h), and cuDNN convs
            // under PyTorch (torch.backends.cudnn.allow_tf32 defaults to True).
  kTf32Conv,  // FP32 tensors; Conv on TF32 tensor cores (compute capability >= 8.0), Gemm/MatMul
              // in FP32: PyTorch's defaults since 1.12 (torch.backends.cudnn.allow_tf32 = True,
              // torch.backends.cuda.matmul.allow_tf32 = False; PyTorch "CUDA semantics", TF32
              // section). PredictModel hands estimators kTf32 for conv kernels and kFp32 for the
              // rest (EffectivePrecision), so estimators never see this value.
};

// The precision hase predicts with when none is given: kTf32 (ORT CUDA EP's default above).
// On GPUs before Ampere it is identical to kFp32.
constexpr Precision kDefaultPrecision = Precision::kTf32;

// "fp32", "fp16", "tensor", "tf32", "tf32-conv" — the spelling used by flags, JSON and model files. Never
// rename.
const char* PrecisionName(Precision p);
// Parses the spelling above (also accepts "amp" and "fp16-tensor" for kTensor).
// Errors: InvalidArgument naming the accepted values.
Result<Precision> ParsePrecision(std::string_view s);

// Bytes a tensor element occupies relative to FP32: 1 for kFp32 and kTf32 (FP32 storage),
// 0.5 for kFp16 and kTensor (an fp32 graph run with FP16 tensors moves half the bytes).
double StorageScale(Precision p);

// The precision a kernel of `family_is_conv` runs in under `p`: kTf32Conv → kTf32 for conv
// kernels, kFp32 otherwise; every other value unchanged.
Precision EffectivePrecision(Precision p, bool family_is_conv);

}  // namespace hase
