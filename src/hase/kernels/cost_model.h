// Cost model: the work and DRAM traffic of one kernel, from its node's bound shapes.
//
// Units: macs in multiply-accumulates (MAC), flops in FLOP (1 MAC = 2 FLOP), bytes in bytes.
// Formulas (shapes after ONNX shape inference; N batch, C channels, spatial dims H, W, …):
//   Conv / FusedConv   macs = |Y| · Cin/group · Πk          (W is [Cout, Cin/group, k…])
//   ConvTranspose      macs = |X| · Cout/group · Πk         (W is [Cin, Cout/group, k…])
//   Gemm / FusedGemm   macs = |Y| · K                       (K = A's inner dim after transA)
//   MatMul             macs = |Y| · K                       (K = A's last dim)
//   flops = 2·macs + |Y|·(1 if bias) + |Y|·Σ per-element cost of fused ops (table below)
//   Pooling            flops = |Y| · Πkernel_shape; Global*Pool: |X|
//   Elementwise        flops = |Y| · per-element cost (Add/Mul/Relu… 1, Clip 2, Sigmoid/Tanh 4,
//                      QuickGelu 5, …: operation counts of the formula, exp/div counted as 1;
//                      hase's convention, the predictor learns the rest)
//   Normalization      BatchNormalization 2·|X|, LayerNormalization 8·|X|, Softmax 5·|X|
//   Data movement      0 FLOP (Concat, Split, Slice, Transpose, Resize, Pad, Gather, …)
// This is the convention of torchvision's and ultralytics' published "GFLOPS" (= GMACs):
// total_macs() counts Conv + Gemm + MatMul only, matching ../shared/REFERENCE.md.
//
// Bytes: activation_bytes_read = Σ bytes of non-constant inputs (each distinct tensor once);
// weight_bytes_read = Σ bytes of constant inputs (initializers and values computed only from
// them); bytes_written = Σ bytes of outputs. parameters = elements of floating/int8 constant
// inputs (int64 shape operands are not parameters; a Cast's input is not counted: the kernel
// reading the cast weight counts it).
//
// View-only kernels (IsViewOnly): Reshape, Flatten, Squeeze, Unsqueeze, Identity. ONNX Runtime
// registers these kernels with Alias(0, 0) on CPU and CUDA (onnxruntime/core/providers/cuda/
// tensor/reshape.cc etc.) and copies only when the output buffer differs from the input's, which
// the allocation planner avoids when the input is not reused; hase counts them 0 bytes, 0 FLOP.
// Dropout is not view-only (it is eliminated by the ort-* profiles instead).
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "hase/graph/graph.h"
#include "hase/kernels/kernel.h"

namespace hase::kernels {

// True for Reshape, Flatten, Squeeze, Unsqueeze, Identity in ai.onnx.
bool IsViewOnly(const graph::Node& n);

// Kernel family of a (possibly fused) node; Conv with group > 1 → kGroupedConv.
KernelFamily FamilyOf(const graph::Node& n);

// True when hase has a cost formula for `n`'s op (otherwise it is costed conservatively:
// every input read, every output written, 1 FLOP per output element).
bool HasCostFormula(const graph::Node& n);

// Builds the Kernel for live node `n` at launch position `index`. `constants` names every value
// known to be constant (initializers and values computed only from them); those are weights.
// Values without a known shape count 0 bytes.
Kernel CostKernel(const graph::Graph& g, const graph::Node& n, int index,
                  const std::unordered_set<std::string>& constants);

}  // namespace hase::kernels
