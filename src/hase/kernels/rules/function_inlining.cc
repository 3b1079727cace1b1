#include "hase/kernels/rules/function_inlining.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>
#include <onnx/shape_inference/implementation.h>

#include "hase/graph/attribute_proto.h"
#include "hase/graph/shape_inference.h"
#include "hase/kernels/rules/cpu_float16_kernels.h"

namespace hase::kernels::rules {
namespace {

using AP = onnx::AttributeProto;

// hase's attribute as ONNX's, or nullopt for kinds hase keeps no content of.
// `a` as ONNX writes it; nullopt for kinds whose content hase does not keep whole (tensors are
// kept as raw bytes only, kOther not at all): such a node or body is left alone.
std::optional<AP> ToProto(const std::string& name, const graph::Attribute& a) {
  if (a.kind == graph::Attribute::Kind::kTensor) return std::nullopt;
  return graph::AttributeToProto(name, a);
}

// The tensor type of `v` with its bound shape (unknown dims left open).
onnx::TypeProto TypeOf(const graph::Value* v) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  if (v == nullptr) return t;
  tt->set_elem_type(v->elem_type);
  if (v->has_shape) {
    auto* s = tt->mutable_shape();
    for (int64_t d : v->shape) {
      auto* dim = s->add_dim();
      if (d >= 0) dim->set_dim_value(d);
    }
  }
  return t;
}

// The body of `n`'s op at `opset`, or nullopt when it has none (or libonnx cannot build it).
std::optional<onnx::FunctionProto> Body(const graph::Graph& g, const graph::Node& n,
                                        int64_t opset) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(n.op_type, static_cast<int>(opset), "");
  if (schema == nullptr) return std::nullopt;
  if (schema->HasFunction() && schema->GetFunction() != nullptr) return *schema->GetFunction();
  if (!schema->HasContextDependentFunction()) return std::nullopt;
  onnx::NodeProto np;
  np.set_op_type(n.op_type);
  np.set_name(n.name);
  for (const auto& i : n.inputs) np.add_input(i);
  for (const auto& o : n.outputs) np.add_output(o);
  std::vector<onnx::TypeProto> types;
  for (const auto& i : n.inputs) types.push_back(TypeOf(i.empty() ? nullptr : g.FindValue(i)));
  for (const auto& [name, a] : n.attributes) {
    auto p = ToProto(name, a);
    if (!p) return std::nullopt;
    *np.add_attribute() = *p;
  }
  onnx::FunctionBodyBuildContextImpl ctx(np, types);
  onnx::FunctionProto fp;
  if (!schema->BuildContextDependentFunction(ctx, fp)) return std::nullopt;
  return fp;
}

// Graph::GenerateNodeName (graph.cc:L3912-L3948): `base`, or base_token_<n> when taken (ORT's
// counter is graph-wide, this one starts at 0). Taken: a node of that name, or a node whose name
// or output starts with it + "_" (an earlier inlined body: its nodes and tensors carry the
// prefix, so a second HardSwish must not reuse "_inlfunc_HardSwish_HS_X").
std::string UniqueNodeName(const graph::Graph& g, const std::string& base) {
  std::unordered_set<std::string> taken;
  for (const auto& n : g.nodes()) {
    if (n.removed) continue;
    taken.insert(n.name);
    for (const auto& o : n.outputs) {
      if (o.rfind(base, 0) == 0) taken.insert(o);
    }
  }
  auto used = [&](const std::string& name) {
    if (taken.count(name)) return true;
    const std::string dash = name + "_";
    for (const auto& t : taken) {
      if (t.rfind(dash, 0) == 0) return true;
    }
    return false;
  };
  std::string name = base;
  for (int i = 0; used(name); ++i) name = base + "_token_" + std::to_string(i);
  return name;
}

// A body Constant's tensor (value, value_int(s), value_float(s)), named `name`.
std::optional<onnx::TensorProto> ConstantTensor(const onnx::NodeProto& c, const std::string& name) {
  if (c.attribute_size() != 1) return std::nullopt;
  const AP& a = c.attribute(0);
  onnx::TensorProto t;
  if (a.name() == "value" && a.type() == AP::TENSOR) {
    t = a.t();
  } else if (a.name() == "value_int") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a.i());
  } else if (a.name() == "value_ints") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a.ints_size());
    for (int64_t v : a.ints()) t.add_int64_data(v);
  } else if (a.name() == "value_float") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a.f());
  } else if (a.name() == "value_floats") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a.floats_size());
    for (float v : a.floats()) t.add_float_data(v);
  } else {
    return std::nullopt;
  }
  t.set_name(name);
  return t;
}

// hase's initializer Value for `t` (values kept when small and of a type ParseData reads).
graph::Value InitializerValue(const onnx::TensorProto& t) {
  graph::Value v;
  v.name = t.name();
  v.elem_type = t.data_type();
  v.has_shape = true;
  v.shape.assign(t.dims().begin(), t.dims().end());
  v.is_initializer = true;
  std::vector<double> values;
  switch (t.data_type()) {
    case onnx::TensorProto::INT64:
      for (int64_t x : onnx::ParseData<int64_t>(&t)) values.push_back(static_cast<double>(x));
      break;
    case onnx::TensorProto::INT32:
      for (int32_t x : onnx::ParseData<int32_t>(&t)) values.push_back(x);
      break;
    case onnx::TensorProto::FLOAT:
      for (float x : onnx::ParseData<float>(&t)) values.push_back(x);
      break;
    case onnx::TensorProto::DOUBLE:
      for (double x : onnx::ParseData<double>(&t)) values.push_back(x);
      break;
    default:
      return v;
  }
  if (static_cast<int64_t>(values.size()) <= graph::kMaxConstantElements) v.constant = values;
  v.ort_shape = v.shape;
  return v;
}

// Replaces node `id` by the body `fp` (Graph::InlineFunction with function_utils::Specialize).
// Returns false, changing nothing, when the body cannot be placed (an attribute kind hase does
// not keep, a Constant form it does not read).
bool Inline(graph::Graph& g, graph::NodeId id, const onnx::FunctionProto& fp, int64_t opset) {
  const graph::Node call = g.node(id);
  const std::string prefix = UniqueNodeName(g, "_inlfunc_" + call.op_type);
  std::unordered_map<std::string, std::string> rename;  // formal → actual
  for (int i = 0; i < fp.input_size(); ++i) {
    rename[fp.input(i)] = i < static_cast<int>(call.inputs.size()) ? call.inputs[i] : "";
  }
  for (int i = 0; i < fp.output_size(); ++i) {
    rename[fp.output(i)] = i < static_cast<int>(call.outputs.size()) ? call.outputs[i] : "";
  }
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(call.op_type, static_cast<int>(opset), "");
  // The node's attributes, or the schema defaults, for the body's attribute references.
  auto ref = [&](const std::string& name) -> std::optional<AP> {
    if (auto it = call.attributes.find(name); it != call.attributes.end()) {
      return ToProto(name, it->second);
    }
    if (schema != nullptr) {
      auto it = schema->attributes().find(name);
      if (it != schema->attributes().end() && it->second.default_value.type() != AP::UNDEFINED) {
        return it->second.default_value;
      }
    }
    return std::nullopt;
  };

  std::vector<onnx::NodeProto> body;
  std::vector<onnx::TensorProto> constants;
  for (const onnx::NodeProto& original : fp.node()) {
    onnx::NodeProto n = original;
    n.set_domain(n.domain() == "ai.onnx" ? "" : n.domain());
    if (!n.domain().empty()) return false;
    // Attribute references (Inliner::transform, function_utils.cc:L443-L463): the node's value
    // (schema defaults included, graph.cc:L3200-L3210), else the attribute is dropped.
    google::protobuf::RepeatedPtrField<AP> attrs;
    for (const AP& a : n.attribute()) {
      if (a.ref_attr_name().empty()) {
        *attrs.Add() = a;
      } else if (auto v = ref(a.ref_attr_name())) {
        AP r = *v;
        r.set_name(a.name());
        *attrs.Add() = r;
      }
    }
    *n.mutable_attribute() = attrs;
    for (auto& x : *n.mutable_input()) {
      if (x.empty()) continue;
      auto it = rename.find(x);
      x = it != rename.end() ? it->second : x;  // else an outer-scope name, kept
    }
    for (auto& y : *n.mutable_output()) {
      if (y.empty()) continue;
      auto it = rename.find(y);
      if (it == rename.end()) it = rename.emplace(y, prefix + "_" + y).first;
      y = it->second;
    }
    if (n.op_type() == "Constant") {
      auto t = ConstantTensor(n, n.output(0));
      if (!t) return false;
      constants.push_back(*t);
      continue;
    }
    for (const AP& a : n.attribute()) {
      // a kind hase keeps no content of
      if (!ToProto(a.name(), graph::AttributeFromProto(a))) return false;
    }
    body.push_back(std::move(n));
  }

  // Shape inference over the body, from the node's inputs as bound.
  onnx::GraphProto gp;
  gp.set_name(prefix);
  std::unordered_set<std::string> declared;
  for (const auto& t : constants) {
    *gp.add_initializer() = t;
    declared.insert(t.name());
  }
  for (const auto& n : body) {
    for (const auto& x : n.input()) {
      if (x.empty() || declared.count(x)) continue;
      bool produced = false;
      for (const auto& m : body) {
        for (const auto& y : m.output()) produced = produced || y == x;
      }
      if (produced) continue;
      declared.insert(x);
      auto* vi = gp.add_input();
      vi->set_name(x);
      *vi->mutable_type() = TypeOf(g.FindValue(x));
    }
    *gp.add_node() = n;
  }
  onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/0,
                                   /*enable_data_propagation=*/false);
  if (!graph::InferGraphShapes(&gp, {{"", static_cast<int>(opset)}}, opts).ok()) return false;
  std::unordered_map<std::string, const onnx::ValueInfoProto*> inferred;
  for (const auto& vi : gp.value_info()) inferred[vi.name()] = &vi;

  g.RemoveNode(id);
  for (const auto& t : constants) g.SetValue(InitializerValue(t));
  for (const auto& n : body) {
    for (const auto& y : n.output()) {
      if (y.empty() || g.FindValue(y) != nullptr) continue;  // the node's own outputs exist
      graph::Value v;
      v.name = y;
      if (auto it = inferred.find(y); it != inferred.end()) {
        const auto& tt = it->second->type().tensor_type();
        v.elem_type = tt.elem_type();
        if (tt.has_shape()) {
          v.has_shape = true;
          for (const auto& d : tt.shape().dim()) {
            v.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
          }
        }
      }
      g.SetValue(std::move(v));
    }
    graph::Node m;
    m.name = n.name().empty() ? prefix + "_" + n.op_type() + "_" + n.output(0)
                              : prefix + "_" + n.name();
    m.op_type = n.op_type();
    m.inputs.assign(n.input().begin(), n.input().end());
    m.outputs.assign(n.output().begin(), n.output().end());
    for (const AP& a : n.attribute()) m.attributes[a.name()] = graph::AttributeFromProto(a);
    m.source_nodes = {call.name};
    g.AddNode(std::move(m));
  }
  return true;
}

}  // namespace

int FunctionInlining::ApplyToGraph(graph::Graph& g) const {
  const int64_t opset = g.opset("");
  int inlined = 0;
  std::unordered_set<graph::NodeId> refused;  // bodies that could not be placed
  for (bool again = true; again;) {            // PartitionOnnxFormatModel's do-while
    again = false;
    std::vector<graph::NodeId> candidates;
    for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
      const graph::Node& n = g.node(id);
      if (n.removed || !n.domain.empty() || refused.count(id)) continue;
      if (CpuEpHasKernel(g, n)) continue;
      bool has_subgraph = false;
      for (const auto& [name, a] : n.attributes) {
        has_subgraph = has_subgraph || (a.kind == graph::Attribute::Kind::kOther &&
                                        (name == "body" || name == "then_branch" ||
                                         name == "else_branch"));
      }
      if (!has_subgraph) candidates.push_back(id);
    }
    for (graph::NodeId id : candidates) {
      const auto body = Body(g, g.node(id), opset);
      if (!body || !Inline(g, id, *body, opset)) {
        refused.insert(id);
        continue;
      }
      ++inlined;
      again = true;
    }
  }
  return inlined;
}

}  // namespace hase::kernels::rules
