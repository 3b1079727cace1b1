// CpuPlacedNodes: the nodes ONNX Runtime's CUDA execution provider leaves to the CPU — the
// shape arithmetic between a Shape and the input that consumes it as a shape (Reshape's target,
// Unsqueeze's axes, …). Mirrors GetCpuPreferredNodes (onnxruntime/core/framework/
// fallback_cpu_capability.cc; the function predates both pins, 1.17.3 and 1.30.0):
//   - Shape and Size write their output to host memory (their CUDA kernels declare it so); they
//     launch no GPU work, so they count as CPU-placed here too;
//   - walking forward from those outputs in topological order, a node goes to the CPU when each
//     input is a host tensor, a small initializer (≤ 100 elements) or a graph input, no input is
//     float16/bfloat16, and none of its host inputs is one its CUDA kernel takes in host memory
//     anyway (Reshape's shape, Unsqueeze/Squeeze axes, Slice starts/ends/axes/steps, Expand's
//     and ConstantOfShape's shape, Tile's repeats, Resize/Upsample scales and sizes, Range, TopK's
//     k, Pad's pads): such a consumer stays on the GPU and reads the host tensor there.
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/framework/fallback_cpu_capability.cc:L44-L178
//   (GetCpuPreferredNodes: seeds from outputs the EP's kernels put in host memory, L71-L93; the
//   topological walk L106-L176: float16/bfloat16/float8 inputs keep a node on the EP L133-L142,
//   small initializers (≤ 100 elements, L21-L41) and graph inputs are allowed L145-L148, an input
//   the EP kernel declares IsInputOnCpu keeps it on the EP L157-L160). Called by the CUDA EP's
//   GetCapability (onnxruntime/core/providers/cuda/cuda_execution_provider.cc, not read here).
//   The host-memory inputs listed above were not checked against ORT's CUDA kernel
//   registrations in this pass. Pinned tags' text not read (docs/kernels-json.md "ORT sources").
// Thread-safety: a pure function of the graph.
#pragma once

#include <vector>

#include "hase/graph/graph.h"

namespace hase::kernels {

// One flag per NodeId (indexable by every id of `g`); true = runs on the host.
std::vector<bool> CpuPlacedNodes(const graph::Graph& g);

}  // namespace hase::kernels
