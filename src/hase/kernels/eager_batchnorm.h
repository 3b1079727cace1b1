// EagerBatchNorm: the BatchNormalization kernels PyTorch eager launches but an exported ONNX
// model no longer shows.
//
// torch.onnx.export in eval mode folds every BatchNormalization that directly follows a Conv into
// that Conv's weight and bias and renames both initializers "onnx::Conv_<n>" (the exporter's
// name for tensors it created); a Conv written with its own bias keeps its module name
// ("features.0.bias" in VGG). Eager PyTorch runs the BatchNorm as its own kernel (cuDNN
// batch-norm inference: reads and writes the conv output once, 2 FLOP per element).
#pragma once

#include "hase/kernels/kernel.h"

namespace hase {

// True when `k` is a Conv whose weight initializer carries the exporter's folded name
// ("onnx::Conv_" prefix).
bool HasFoldedBatchNorm(const Kernel& k);

// The "BatchNormalization(eager)" kernel PyTorch launches after `conv` (family kNormalization,
// input = output = the conv's first output: reads and writes it once, 2 FLOP per element).
// REQUIRES: conv.outputs is not empty.
Kernel EagerBatchNormAfter(const Kernel& conv);

// Inserts one "BatchNormalization(eager)" kernel (family kNormalization, input = output = the
// conv's first output) after every kernel for which HasFoldedBatchNorm holds, and renumbers
// Kernel::index. Returns the number of kernels inserted. Never fails.
int InsertEagerBatchNorm(KernelList& kl);

}  // namespace hase
