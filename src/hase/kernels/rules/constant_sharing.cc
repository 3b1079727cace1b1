#include "hase/kernels/rules/constant_sharing.h"

#include <cstring>
#include <map>
#include <tuple>
#include <unordered_set>

namespace hase::kernels::rules {
namespace {

// constant_sharing.cc:L17-L23: float16, float, double, int32, int64.
bool IsSupportedDataType(int32_t t) { return t == 10 || t == 1 || t == 11 || t == 6 || t == 7; }

// Values compared bit for bit, as ORT compares the initializers' bytes (L138).
struct BitKey {
  std::vector<double> v;
  bool operator<(const BitKey& o) const {
    if (v.size() != o.v.size()) return v.size() < o.v.size();
    return std::memcmp(v.data(), o.v.data(), v.size() * sizeof(double)) < 0;
  }
};

}  // namespace

int ConstantSharing::ApplyToGraph(graph::Graph& g) const {
  // Candidates in node order (each once): constant, read by a live node, not a graph output.
  std::vector<std::string> candidates;
  std::unordered_set<std::string> seen;
  for (const graph::Node& n : g.nodes()) {
    if (n.removed) continue;
    for (const std::string& in : n.inputs) {
      if (in.empty() || !seen.insert(in).second) continue;
      if (g.IsConstant(in) && !g.IsGraphOutput(in)) candidates.push_back(in);
    }
  }
  // (dtype, dims, values) → the initializer kept.
  std::map<std::tuple<int32_t, std::vector<int64_t>, BitKey>, std::string> kept;
  int shared = 0;
  for (const std::string& name : candidates) {
    const graph::Value* v = g.FindValue(name);
    if (v == nullptr || !v->shape_known() || !v->constant) continue;
    const int64_t elements = v->elements();
    if (elements <= 0 || elements > kMaxElements || !IsSupportedDataType(v->elem_type)) continue;
    if (static_cast<int64_t>(v->constant->size()) != elements) continue;
    auto key = std::make_tuple(v->elem_type, v->shape, BitKey{*v->constant});
    auto [it, inserted] = kept.emplace(std::move(key), name);
    if (inserted) continue;
    g.ReplaceUses(name, it->second);
    ++shared;
  }
  return shared;
}

}  // namespace hase::kernels::rules
