// Graph: hase's in-memory model graph (nodes, tensors, initializer metadata), the IR that fusion
// rules rewrite.
//
// A Graph is built by LoadOnnxGraph (onnx_loader.h) after ONNX shape inference, so every value
// normally carries a dtype and a shape. Initializers are metadata only (name, dims, dtype); the
// values of small ones (≤ kMaxConstantElements: Clip bounds, Reshape shapes, Resize scales) are
// kept in Value::constant because fusion decisions depend on them. Weight bytes are never held.
//
// Nodes are stored in the file's (topological) order and never move: NodeId is a stable index.
// A removed node stays in nodes() with removed == true, so ids held by callers stay valid.
// Inputs/outputs of a node change only through SetInputs/SetOutputs/RemoveNode, which keep the
// producer/consumer index consistent.
//
// Thread-safety: none; a Graph is owned by one thread at a time. Copying is deleted (a graph has
// identity while rules rewrite it); Clone() makes an explicit copy.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace hase::graph {

using NodeId = int32_t;
constexpr NodeId kNoNode = -1;

// Initializers with at most this many elements keep their values (as doubles) when the file
// holds them: enough for Reshape shapes, Clip bounds, Resize scales, Pad/Slice parameters.
constexpr int64_t kMaxConstantElements = 256;

// One node attribute. ONNX's INT/INTS become `ints`, FLOAT/FLOATS `floats`, STRING `s`,
// STRINGS `strings`; a TENSOR (ConstantOfShape's `value`) keeps its dtype in `tensor_elem_type`,
// its dims in `ints` and, when the file stores it as raw_data, those bytes in `s`
// (`tensor_raw` true). GRAPH, SPARSE_TENSOR, TENSORS, … are kOther with no content.
struct Attribute {
  enum class Kind { kInt, kInts, kFloat, kFloats, kString, kStrings, kTensor, kOther };
  Kind kind = Kind::kOther;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::string s;
  std::vector<std::string> strings;
  int32_t tensor_elem_type = 0;  // kTensor: ONNX TensorProto.DataType
  bool tensor_raw = false;       // kTensor: `s` holds the tensor's raw_data

  static Attribute Int(int64_t v) { Attribute a; a.kind = Kind::kInt; a.ints = {v}; return a; }
  static Attribute Float(float v) { Attribute a; a.kind = Kind::kFloat; a.floats = {v}; return a; }
  static Attribute Str(std::string v) { Attribute a; a.kind = Kind::kString; a.s = std::move(v); return a; }
  static Attribute Ints(std::vector<int64_t> v) { Attribute a; a.kind = Kind::kInts; a.ints = std::move(v); return a; }
};

// Dim codes of Value::ort_shape: ≥ 0 a known dim, kOrtUnknownDim unknown, ≤ kOrtFirstSymbol a
// named symbolic dim of the file (the same code for the same name, e.g. every "batch").
constexpr int64_t kOrtUnknownDim = -1;
constexpr int64_t kOrtFirstSymbol = -2;

// A tensor: graph input, initializer, or any node output.
struct Value {
  std::string name;
  int32_t elem_type = 0;          // ONNX TensorProto.DataType (1 float, 7 int64, 10 float16, …)
  bool has_shape = false;         // rank known
  std::vector<int64_t> shape;     // dims; -1 where a dim is unknown (only if has_shape)
  bool is_initializer = false;    // constant: an initializer or a folded Constant node
  std::optional<std::vector<double>> constant;  // values, when small and present in the file
  // ONNX Runtime's view while it optimises the file with its batch open (ort_shape_view.h):
  // dims (≥ 0 known, -1 unknown, ≤ -2 a named symbolic dim such as "batch"), absent when ORT
  // does not know the rank; and the int values its constant folding computes, when it does.
  std::optional<std::vector<int64_t>> ort_shape;
  std::optional<std::vector<int64_t>> ort_value;
  // Float values ORT's constant folding computes for it from constants (OrtShapeView::float_values).
  std::optional<std::vector<double>> ort_float_value;

  // True when the rank and every dim are known.
  bool shape_known() const;
  // Product of dims; -1 unless shape_known().
  int64_t elements() const;
  // True when ORT knows every dim (ort_shape present, all ≥ 0).
  bool ort_shape_concrete() const;
};

struct Node {
  std::string name;     // ONNX node name (made unique by the loader: "<op_type>_<index>" if empty)
  std::string op_type;  // "Conv", or after fusion "FusedConv", "FusedGemm", "QuickGelu", …
  std::string domain;   // "" for ai.onnx; "com.microsoft" for ORT contrib ops made by fusion
  std::vector<std::string> inputs;   // value names; "" = omitted optional input
  std::vector<std::string> outputs;  // value names; "" = omitted optional output
  std::map<std::string, Attribute> attributes;
  std::vector<std::string> fused_ops;     // ops fused in after the anchor: {"Add", "Relu"}
  std::vector<std::string> source_nodes;  // ONNX node names merged into this node (itself first)
  bool removed = false;
  // ONNX Runtime's node index: the file position for loaded nodes; a fresh, higher key for
  // nodes a fusion creates anew in ORT (FusedConv, FusedGemm, QuickGelu, Gemm from MatMul+Add).
  // Orders inputs in OrtTopologicalOrder (topological_order.h).
  int64_t order_key = 0;

  // Integer attribute `key`, or `fallback` when absent.
  int64_t IntAttr(const std::string& key, int64_t fallback) const;
  // Integer-list attribute `key`, or empty when absent.
  std::vector<int64_t> IntsAttr(const std::string& key) const;
};

class Graph {
 public:
  Graph() = default;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph Clone() const;

  // ---- built by the loader ----
  // Adds a node (inputs/outputs indexed) and returns its id.
  NodeId AddNode(Node node);
  // Adds or replaces the value `v.name`.
  void SetValue(Value v);
  void set_name(std::string n) { name_ = std::move(n); }
  void set_inputs(std::vector<std::string> v) { inputs_ = std::move(v); }
  void set_outputs(std::vector<std::string> v) { outputs_ = std::move(v); }
  void set_opset_imports(std::map<std::string, int64_t> m) { opset_imports_ = std::move(m); }
  // True when the file leaves dim 0 of its first data input symbolic (a dynamic batch): ONNX
  // Runtime optimises such a graph with that dim unknown, whatever batch hase binds.
  void set_batch_symbolic(bool b) { batch_symbolic_ = b; }
  // True when Value::ort_shape was filled (ort_shape_view.h): an absent ort_shape then means ORT
  // knows no rank; false when the view could not be computed (rules use the bound shapes).
  void set_has_ort_view(bool b) { has_ort_view_ = b; }

  // ---- queries ----
  const std::string& name() const { return name_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_.at(id); }
  // Graph inputs that are not initializers (the data the model is fed), in file order.
  const std::vector<std::string>& inputs() const { return inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  // Opset per domain ("" = ai.onnx); 0 when the domain is not imported.
  int64_t opset(const std::string& domain = "") const;
  // Every imported domain ("" = ai.onnx) and its opset.
  const std::map<std::string, int64_t>& opset_imports() const { return opset_imports_; }
  bool batch_symbolic() const { return batch_symbolic_; }
  bool has_ort_view() const { return has_ort_view_; }
  // The value `name`, or nullptr. The pointer is valid until the next SetValue.
  const Value* FindValue(const std::string& name) const;
  // Live node writing `name`, or kNoNode (graph input, initializer, unknown).
  NodeId Producer(const std::string& name) const;
  // Live nodes reading `name` (each once, in id order).
  std::vector<NodeId> Consumers(const std::string& name) const;
  bool IsGraphOutput(const std::string& name) const;
  // True when `name` is an initializer (or folded Constant).
  bool IsConstant(const std::string& name) const;
  // Number of live nodes.
  int LiveNodeCount() const;
  // A key above every node's order_key, for a node a rule creates anew (see Node::order_key).
  int64_t NewOrderKey() { return next_order_key_++; }

  // ---- rewriting (fusion rules) ----
  // Op type, domain, attributes, fused_ops, source_nodes may be edited in place; inputs and
  // outputs only via SetInputs/SetOutputs so the index stays right.
  Node& mutable_node(NodeId id) { return nodes_.at(id); }
  void SetInputs(NodeId id, std::vector<std::string> inputs);
  void SetOutputs(NodeId id, std::vector<std::string> outputs);
  // Marks `id` removed and drops it from the index. Its output values stay in the value table.
  void RemoveNode(NodeId id);
  // Every live node reading `from` reads `to` instead.
  void ReplaceUses(const std::string& from, const std::string& to);
  // Graph output `from` is renamed `to` (used when an eliminated node wrote a graph output).
  void RenameGraphOutput(const std::string& from, const std::string& to);

 private:
  void Index(NodeId id);
  void Unindex(NodeId id);

  std::string name_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, Value> values_;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, int64_t> opset_imports_;
  std::unordered_map<std::string, NodeId> producer_;
  std::unordered_map<std::string, std::vector<NodeId>> consumers_;
  int64_t next_order_key_ = 0;
  bool batch_symbolic_ = false;
  bool has_ort_view_ = false;
};

}  // namespace hase::graph
