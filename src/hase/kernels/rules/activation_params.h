// ActivationParams: the parameters ORT's fused kernels (FusedConv, FusedGemm) take for an
// activation, read from the activation node: Clip → {min, max} (constant inputs from opset 11,
// attributes before), LeakyRelu → {alpha}, HardSigmoid → {alpha, beta}; others → {}.
// Returns nullopt when a needed operand is not a known constant (the fusion must not apply).
// Defaults follow the ONNX operator spec (LeakyRelu alpha 0.01, HardSigmoid 0.2/0.5, Clip ±inf).
#pragma once

#include <optional>
#include <vector>

#include "hase/graph/graph.h"

namespace hase::kernels::rules {

std::optional<std::vector<float>> ActivationParams(const graph::Graph& g, const graph::Node& act);

}  // namespace hase::kernels::rules
