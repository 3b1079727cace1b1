#include "hase/graph/batch_validity.h"

#include <numeric>

namespace hase::graph {
namespace {

std::string DimsText(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

std::string BatchValidity::Describe() const {
  if (only) {
    return *only == 0 ? "valid at no batch size" : "valid only at batch " + std::to_string(*only);
  }
  if (multiple_of > 1) {
    return "valid at batch sizes that are multiples of " + std::to_string(multiple_of);
  }
  return "valid at any batch size";
}

BatchValidity ComputeBatchValidity(const Graph& g, int64_t batch) {
  BatchValidity out;
  for (const Node& n : g.nodes()) {
    if (n.removed || !n.domain.empty() || n.op_type != "Reshape" || n.inputs.size() < 2) continue;
    const Value* x = g.FindValue(n.inputs[0]);
    const Value* target = g.FindValue(n.inputs[1]);
    if (x == nullptr || target == nullptr || g.IsConstant(n.inputs[0]) || !x->shape_known() ||
        x->shape.empty() || x->shape[0] != batch || !target->constant) {
      continue;
    }
    const std::vector<double>& t = *target->constant;
    if (t.empty()) continue;
    const int64_t elements = x->elements();
    if (elements <= 0 || elements % batch != 0) continue;
    const int64_t k = elements / batch;  // elements per sample
    int64_t fixed = 1;
    bool has_infer = false, has_copy = false;
    std::vector<int64_t> dims;
    for (double v : t) {
      const int64_t d = static_cast<int64_t>(v);
      dims.push_back(d);
      if (d == -1) {
        has_infer = true;
      } else if (d == 0) {
        has_copy = true;
      } else if (d > 0) {
        fixed *= d;
      }
    }
    if (has_copy) continue;  // copies the batch dim through
    const std::string reason = "Reshape '" + n.name + "' fixes its output to " + DimsText(dims) +
                               " (" + std::to_string(k) + " elements per sample in)";
    if (!has_infer) {
      const int64_t at = fixed % k == 0 ? fixed / k : 0;
      if (!out.only) {
        out.only = at;
        out.reason = reason;
      } else if (*out.only != at) {
        out.only = 0;  // two Reshapes pinning different batches
      }
    } else {
      const int64_t m = fixed / std::gcd(k, fixed);
      if (m > 1 && std::lcm(out.multiple_of, m) != out.multiple_of) {
        out.multiple_of = std::lcm(out.multiple_of, m);
        if (!out.only) out.reason = reason;
      }
    }
  }
  if (out.only && *out.only % out.multiple_of != 0) out.only = 0;
  return out;
}

}  // namespace hase::graph
