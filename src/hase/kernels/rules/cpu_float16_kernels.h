// CpuFloat16Kernels: which ops ONNX Runtime's CPU execution provider runs in float16 on
// x86-64, i.e. for which a float16 node gets a CPU kernel when ORT partitions the graph. A
// float16 node without one stays unassigned, and InsertCastTransformer then runs it in float
// (insert_cast_transformer.h).
//
// Source: the kernels registered in onnxruntime v1.21.0
// onnxruntime/core/providers/cpu/cpu_execution_provider.cc, RegisterOnnxOperatorKernels
// (L1331-L3220; every entry read), whose type constraints admit tensor(float16):
//   - typed MLFloat16 entries: Expand 8-12/13+ (L1722, L2226), IsNaN 9-12/13-19/20+ (L1782, L2530,
//     L3076), Round 11-21/22+ (L1957, L3201), LayerNormalization 17+ (L2810);
//   - untyped entries whose KernelDefBuilder (in the op's own file under providers/cpu/) uses
//     DataTypeImpl::AllTensorTypes / element_type_lists::All / AllNumeric or lists MLFloat16:
//     the table in cpu_float16_kernels.cc names each file.
// Plus the float16 entries of contrib_ops/cpu/cpu_contrib_kernels.cc RegisterCpuContribKernels
// (L283-L401) for the ops hase meets: LayerNormalization 1-16 and SimplifiedLayerNormalization
// (ai.onnx domain, L353, L356), SkipLayerNormalization and SkipSimplifiedLayerNormalization
// (com.microsoft, L359, L362).
// Not on x86-64: the MLFloat16 Relu, LeakyRelu, Conv, MaxPool, AveragePool, GlobalAveragePool
// and FusedConv kernels are registered only under MLAS_F16VEC_INTRINSICS_SUPPORTED, which
// core/mlas/inc/mlas.h:L92 defines for ARM64 builds (RegisterFp16Kernels, L3222; L3510-L3514),
// and MLFloat16 Gemm is defined in math/gemm.cc but not registered in v1.21.0.
// Checked against onnxruntime-node 1.30.0 (linux x64), each op alone in a float16 model:
// 19 ops of the table run in float16 and 42 ops outside it run in float between Casts
// (tests/kernels/insert_cast_transformer_test.cc, OneOpAtATimeAgainstOrt; LayerNormalization 17
// and Gemm in the tests beside it). The CPU EP of a release after v1.21.0 may register more.
#pragma once

#include "hase/graph/graph.h"

namespace hase::kernels::rules {

// True when `n` reads or writes a float16 tensor (ONNX elem_type 10).
bool TouchesFloat16(const graph::Graph& g, const graph::Node& n);

// True when ORT's CPU EP (v1.21.0 registrations, x86-64) has a kernel for `n` as typed: never for
// HardSwish (no kernel in any type; measured with onnxruntime-node 1.30), always for another node
// that touches no float16 tensor (every other op hase meets has a float CPU kernel);
// otherwise when the op, at the opset `g` imports for its domain, is registered with float16
// admitted for each argument that holds one.
bool CpuEpHasKernel(const graph::Graph& g, const graph::Node& n);

}  // namespace hase::kernels::rules
