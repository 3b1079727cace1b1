#include "hase/kernels/rules/activation_params.h"

#include <limits>

namespace hase::kernels::rules {
namespace {

float FloatAttr(const graph::Node& n, const char* key, float fallback) {
  auto it = n.attributes.find(key);
  if (it == n.attributes.end() || it->second.floats.empty()) return fallback;
  return it->second.floats[0];
}

// Scalar value of optional constant input `i`; `fallback` when the input is omitted.
std::optional<float> ConstScalar(const graph::Graph& g, const graph::Node& n, size_t i,
                                 float fallback) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return fallback;
  const graph::Value* v = g.FindValue(n.inputs[i]);
  if (!v || !v->is_initializer || !v->constant || v->constant->size() != 1) return std::nullopt;
  return static_cast<float>((*v->constant)[0]);
}

}  // namespace

std::optional<std::vector<float>> ActivationParams(const graph::Graph& g, const graph::Node& act) {
  if (act.op_type == "Clip") {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (g.opset("") < 11) return std::vector<float>{FloatAttr(act, "min", -kInf), FloatAttr(act, "max", kInf)};
    auto lo = ConstScalar(g, act, 1, -kInf);
    auto hi = ConstScalar(g, act, 2, kInf);
    if (!lo || !hi) return std::nullopt;
    return std::vector<float>{*lo, *hi};
  }
  if (act.op_type == "LeakyRelu") return std::vector<float>{FloatAttr(act, "alpha", 0.01f)};
  if (act.op_type == "HardSigmoid") {
    return std::vector<float>{FloatAttr(act, "alpha", 0.2f), FloatAttr(act, "beta", 0.5f)};
  }
  return std::vector<float>{};
}

}  // namespace hase::kernels::rules
