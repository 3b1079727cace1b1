#include "hase/kernels/rules/common_subexpression_elimination.h"

#include <cstring>
#include <functional>
#include <unordered_map>

#include "hase/graph/topological_order.h"

namespace hase::kernels::rules {
namespace {

using graph::Attribute;

constexpr int kEmptyClass = 0;  // an omitted optional value (ORT: a NodeArg that does not exist)

// common_subexpression_elimination.cc:L375-L384 and utils.cc:L274-L302.
bool IsNodeSupported(const graph::Node& n) {
  static const std::vector<std::string> kOnnxNonDeterministic = {
      "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial",
      "Dropout"};
  if (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan") return false;  // subgraphs
  if (n.op_type == "DequantizeLinear" && (n.domain.empty() || n.domain == "com.microsoft")) {
    return false;
  }
  if (n.domain.empty()) {
    return std::find(kOnnxNonDeterministic.begin(), kOnnxNonDeterministic.end(), n.op_type) ==
           kOnnxNonDeterministic.end();
  }
  if (n.domain == "com.microsoft") return n.op_type == "QuantizeLinear";
  return false;  // unknown domain: assumed non-deterministic
}

// AreScalarTensorAttributeEqual (L176-L198): one-element [1] float / float16 / int64 raw data.
bool ScalarTensorsEqual(const Attribute& a, const Attribute& b) {
  const int32_t t = a.tensor_elem_type;
  if (t != b.tensor_elem_type || (t != 1 && t != 10 && t != 7)) return false;
  if (a.ints != std::vector<int64_t>{1} || b.ints != std::vector<int64_t>{1}) return false;
  if (!a.tensor_raw || !b.tensor_raw) return false;
  if (t == 1) {
    float x, y;
    if (a.s.size() < sizeof x || b.s.size() < sizeof y) return false;
    std::memcpy(&x, a.s.data(), sizeof x);
    std::memcpy(&y, b.s.data(), sizeof y);
    return x == y;
  }
  if (t == 10) {  // MLFloat16 ==: NaN equals nothing, +0 equals -0, else the bits
    uint16_t x, y;
    if (a.s.size() < sizeof x || b.s.size() < sizeof y) return false;
    std::memcpy(&x, a.s.data(), sizeof x);
    std::memcpy(&y, b.s.data(), sizeof y);
    auto is_nan = [](uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; };
    if (is_nan(x) || is_nan(y)) return false;
    if ((x & 0x7FFF) == 0 && (y & 0x7FFF) == 0) return true;
    return x == y;
  }
  int64_t x, y;
  if (a.s.size() < sizeof x || b.s.size() < sizeof y) return false;
  std::memcpy(&x, a.s.data(), sizeof x);
  std::memcpy(&y, b.s.data(), sizeof y);
  return x == y;
}

// AreEqual (L200-L236).
bool AttributesEqual(const Attribute& a, const Attribute& b) {
  if (&a == &b) return true;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Attribute::Kind::kInt:
    case Attribute::Kind::kInts: return a.ints == b.ints;
    case Attribute::Kind::kFloat:
    case Attribute::Kind::kFloats: return a.floats == b.floats;  // element-wise ==
    case Attribute::Kind::kString: return a.s == b.s;
    case Attribute::Kind::kStrings: return a.strings == b.strings;
    case Attribute::Kind::kTensor: return ScalarTensorsEqual(a, b);
    case Attribute::Kind::kOther: return false;
  }
  return false;
}

bool SameAttributes(const std::map<std::string, Attribute>& a,
                    const std::map<std::string, Attribute>& b) {
  if (&a == &b) return true;
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i->first != j->first || !AttributesEqual(i->second, j->second)) return false;
  }
  return true;
}

// The class of a node output: what ORT's EquivalenceClass holds for an op value.
struct OpClass {
  const graph::Node* node;   // op, domain, attributes
  std::vector<int> inputs;   // input classes, trailing omitted ones dropped
  int output_index;
  int discriminator;         // 0, or unique for an unsupported node
  size_t hash;

  bool operator==(const OpClass& o) const {
    return hash == o.hash && output_index == o.output_index &&
           discriminator == o.discriminator && node->op_type == o.node->op_type &&
           node->domain == o.node->domain && inputs == o.inputs &&
           SameAttributes(node->attributes, o.node->attributes);
  }
};

size_t Combine(size_t h, size_t v) { return h * 31013 + v; }

size_t HashOf(const OpClass& c) {
  size_t h = 0;
  h = Combine(h, std::hash<int>{}(c.output_index));
  h = Combine(h, std::hash<int>{}(c.discriminator));
  h = Combine(h, std::hash<std::string>{}(c.node->op_type));
  h = Combine(h, std::hash<std::string>{}(c.node->domain));
  for (const auto& [key, a] : c.node->attributes) {  // names and kinds: equal ⇒ same hash
    h = Combine(h, std::hash<std::string>{}(key));
    h = Combine(h, static_cast<size_t>(a.kind));
  }
  for (int in : c.inputs) h = Combine(h, std::hash<int>{}(in));
  return h;
}

struct OpClassHash {
  size_t operator()(const OpClass& c) const { return c.hash; }
};

}  // namespace

int CommonSubexpressionElimination::ApplyToGraph(graph::Graph& g) const {
  const std::vector<graph::NodeId> order = graph::OrtTopologicalOrder(g);

  // Value numbering (L422-L466). Class 0 is the empty value; every other class is a number.
  std::unordered_map<std::string, int> class_of;       // value name → class
  std::unordered_map<OpClass, int, OpClassHash> op_classes;
  std::vector<std::string> representative = {""};     // class → value kept
  int empty_input_class = kEmptyClass;                 // ORT's shared entry for "" (see header)
  int unique_discriminator = 1;
  for (graph::NodeId id : order) {
    const graph::Node& n = g.node(id);
    std::vector<int> inputs;
    inputs.reserve(n.inputs.size());
    for (const std::string& in : n.inputs) {
      if (in.empty()) {
        inputs.push_back(empty_input_class);
        continue;
      }
      auto it = class_of.find(in);
      if (it == class_of.end()) {  // a graph input or initializer: a class of its own
        it = class_of.emplace(in, static_cast<int>(representative.size())).first;
        representative.push_back(in);
      }
      inputs.push_back(it->second);
    }
    while (!inputs.empty() && inputs.back() == kEmptyClass) inputs.pop_back();
    const int discriminator = IsNodeSupported(n) ? 0 : ++unique_discriminator;
    for (int i = 0; i < static_cast<int>(n.outputs.size()); ++i) {
      OpClass c{&n, inputs, i, discriminator, 0};
      c.hash = HashOf(c);
      auto [it, inserted] = op_classes.emplace(std::move(c), static_cast<int>(representative.size()));
      if (inserted) representative.push_back(n.outputs[i]);
      if (n.outputs[i].empty()) {
        empty_input_class = it->second;
      } else {
        class_of[n.outputs[i]] = it->second;
      }
    }
  }

  // Replacement (L472-L511): consumers of a later member of a class read the first one.
  int replaced_nodes = 0;
  for (graph::NodeId id : order) {
    const graph::Node& n = g.node(id);
    bool replaced = false;
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;
      const std::string& rep = representative[class_of.at(out)];
      if (rep == out || rep.empty() || g.IsGraphOutput(out)) continue;
      g.ReplaceUses(out, rep);
      replaced = true;
    }
    if (!replaced) continue;
    ++replaced_nodes;
    bool in_use = false;
    for (const std::string& out : g.node(id).outputs) {
      in_use = in_use || (!out.empty() && (g.IsGraphOutput(out) || !g.Consumers(out).empty()));
    }
    if (!in_use) g.RemoveNode(id);
  }
  return replaced_nodes;
}

}  // namespace hase::kernels::rules
