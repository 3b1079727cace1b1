#include "hase/graph/ort_shape_view.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "hase/graph/attribute_proto.h"
#include "hase/graph/graph.h"
#include "hase/graph/ort_data_propagation.h"
#include "hase/graph/shape_inference.h"
#include "hase/graph/shape_values.h"
#include "hase/graph/topological_order.h"

namespace hase::graph {
namespace {

// A copy of `model` for inference: large initializers keep only name, dims and type.
onnx::ModelProto InferenceCopy(const onnx::ModelProto& model) {
  onnx::ModelProto m;
  m.set_ir_version(model.ir_version());
  *m.mutable_opset_import() = model.opset_import();
  const onnx::GraphProto& g = model.graph();
  onnx::GraphProto* c = m.mutable_graph();
  c->set_name(g.name());
  *c->mutable_node() = g.node();
  *c->mutable_input() = g.input();
  *c->mutable_output() = g.output();
  *c->mutable_value_info() = g.value_info();
  for (const onnx::TensorProto& t : g.initializer()) {
    int64_t elements = 1;
    bool small = t.data_location() != onnx::TensorProto::EXTERNAL;
    for (int64_t d : t.dims()) {
      small = small && d >= 0 && !__builtin_mul_overflow(elements, d, &elements) &&
              elements <= kMaxConstantElements;
    }
    if (small) {
      *c->add_initializer() = t;
      continue;
    }
    onnx::TensorProto* s = c->add_initializer();
    s->set_name(t.name());
    s->set_data_type(t.data_type());
    *s->mutable_dims() = t.dims();
    s->set_data_location(onnx::TensorProto::EXTERNAL);  // no bytes: never read as values
  }
  return m;
}

// As ORT infers: errors leave a value unknown, no data propagation.
onnx::ShapeInferenceOptions OrtInference() {
  return onnx::ShapeInferenceOptions(/*check_type=*/false, /*error_mode=*/0,
                                     /*enable_data_propagation=*/false);
}

constexpr const char* kSymbolPrefix = "hase_sym_";

void SetShape(onnx::TypeProto_Tensor* tt, const std::vector<int64_t>& dims) {
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
    else if (d <= kOrtFirstSymbol) dim->set_dim_param(kSymbolPrefix + std::to_string(-d));
  }
}

// A constant's values as an initializer ONNX inference can read; false when its type is not one
// hase keeps values for.
bool FillTensor(onnx::TensorProto* t, const Value& v) {
  t->set_name(v.name);
  t->set_data_type(v.elem_type);
  for (int64_t d : v.shape) t->add_dims(d);
  const std::vector<double>& x = *v.constant;
  for (double d : x) {
    if (!(std::fabs(d) < 9.2e18)) return false;  // NaN, ±inf, beyond int64: no values
  }
  switch (v.elem_type) {
    case onnx::TensorProto::INT64:
      for (double d : x) t->add_int64_data(static_cast<int64_t>(d));
      return true;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::BOOL:
      for (double d : x) {
        if (!(std::fabs(d) < 2.1e9)) return false;
        t->add_int32_data(static_cast<int32_t>(d));
      }
      return true;
    case onnx::TensorProto::FLOAT:
      for (double d : x) t->add_float_data(static_cast<float>(d));
      return true;
    case onnx::TensorProto::DOUBLE:
      for (double d : x) t->add_double_data(d);
      return true;
    default:
      return false;
  }
}

// Dims of an inferred value info in Value::ort_shape codes; nullopt without a rank.
// `symbol` gives the code of a dim_param (kOrtUnknownDim for names that are no symbol).
std::optional<std::vector<int64_t>> OrtDimsOf(
    const onnx::ValueInfoProto& vi, const std::function<int64_t(const std::string&)>& symbol) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : vi.type().tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(d.dim_value());
    } else {
      dims.push_back(d.has_dim_param() ? symbol(d.dim_param()) : kOrtUnknownDim);
    }
  }
  return dims;
}

// The code of a "hase_sym_N" name RefreshOrtShapes wrote (SetShape); other names are unknown.
int64_t RefreshSymbol(const std::string& param) {
  const std::string prefix = kSymbolPrefix;
  int64_t code = 0;
  if (param.rfind(prefix, 0) == 0 &&
      std::from_chars(param.data() + prefix.size(), param.data() + param.size(), code).ec ==
          std::errc() &&
      code >= -kOrtFirstSymbol) {
    return -code;
  }
  return kOrtUnknownDim;
}

}  // namespace

void RefreshOrtShapes(Graph& g) {
  if (!g.has_ort_view()) return;
  onnx::ModelProto m;
  m.set_ir_version(8);
  for (const auto& [domain, version] : g.opset_imports()) {
    auto* o = m.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  if (!g.opset_imports().count("com.microsoft")) {
    auto* o = m.add_opset_import();  // the domain of ORT's fused ops
    o->set_domain("com.microsoft");
    o->set_version(1);
  }
  onnx::GraphProto* gp = m.mutable_graph();
  gp->set_name(g.name());
  std::unordered_set<std::string> declared;
  auto declare_input = [&](const std::string& name) {
    if (name.empty() || !declared.insert(name).second) return;
    const Value* v = g.FindValue(name);
    if (v == nullptr) return;
    if (v->is_initializer && v->constant && v->has_shape &&
        FillTensor(gp->add_initializer(), *v)) {
      return;
    }
    if (v->is_initializer && v->constant) gp->mutable_initializer()->RemoveLast();
    onnx::ValueInfoProto* vi = gp->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(v->elem_type);
    if (v->ort_shape) SetShape(tt, *v->ort_shape);
  };
  const std::vector<NodeId> order = OrtTopologicalOrder(g);
  std::unordered_set<std::string> produced;
  for (NodeId id : order) {
    for (const std::string& o : g.node(id).outputs) produced.insert(o);
  }
  for (NodeId id : order) {
    const Node& n = g.node(id);
    for (const std::string& in : n.inputs) {
      if (!produced.count(in)) declare_input(in);
    }
    onnx::NodeProto* np = gp->add_node();
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    np->set_name(n.name);
    for (const std::string& in : n.inputs) np->add_input(in);
    for (const std::string& o : n.outputs) {
      np->add_output(o);
      const Value* v = o.empty() ? nullptr : g.FindValue(o);
      if (v == nullptr || !v->ort_shape) continue;
      onnx::ValueInfoProto* vi = gp->add_value_info();
      vi->set_name(o);
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(v->elem_type);
      SetShape(tt, *v->ort_shape);
    }
    for (const auto& [name, a] : n.attributes) {
      if (auto p = AttributeToProto(name, a)) *np->add_attribute() = std::move(*p);
    }
  }
  if (!InferModelShapes(&m, OrtInference()).ok()) return;  // crashed or threw: no refinement
  for (const onnx::ValueInfoProto& vi : m.graph().value_info()) {
    const Value* v = g.FindValue(vi.name());
    if (v == nullptr) continue;
    const auto inferred = OrtDimsOf(vi, RefreshSymbol);
    if (!inferred) continue;
    std::vector<int64_t> merged = *inferred;
    if (v->ort_shape) {
      if (v->ort_shape->size() != inferred->size()) continue;
      bool changed = false;
      for (size_t i = 0; i < merged.size(); ++i) {
        const int64_t old = (*v->ort_shape)[i];
        if (old >= 0 || (old <= kOrtFirstSymbol && merged[i] < 0)) merged[i] = old;
        changed |= merged[i] != old;
      }
      if (!changed) continue;
    }
    Value refined = *v;
    refined.ort_shape = std::move(merged);
    g.SetValue(std::move(refined));
  }
}

OrtShapeView ComputeOrtShapeView(const onnx::ModelProto& model) {
  OrtShapeView view;
  onnx::ModelProto m = InferenceCopy(model);
  // The file's own symbolic dim names (inference's generated "unk__N" names count as unknown).
  std::unordered_map<std::string, int64_t> symbols;
  auto collect = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (d.has_dim_param() && !d.dim_param().empty() && !symbols.count(d.dim_param())) {
        const int64_t code = kOrtFirstSymbol - static_cast<int64_t>(symbols.size());
        symbols[d.dim_param()] = code;
      }
    }
  };
  for (const auto& vi : m.graph().input()) collect(vi);
  for (const auto& vi : m.graph().output()) collect(vi);
  for (const auto& vi : m.graph().value_info()) collect(vi);

  if (!InferModelShapesUnisolated(&m, OrtInference()).ok()) return view;
  std::unordered_set<std::string> file_symbols;
  for (const auto& [name, code] : symbols) file_symbols.insert(name);
  std::unordered_map<std::string, std::vector<int64_t>> values;
  std::unordered_map<std::string, std::vector<double>> float_values;
  for (int round = 0; round < 64; ++round) {
    // Constant folding's values first (they make full shapes), then ORT's data propagation for
    // the Reshapes still without a rank.
    int added = ResolveShapeComputedDims(&m, &values, &float_values);
    if (added == 0) added = PropagateOrtShapeData(&m, file_symbols);
    if (added == 0 || !InferModelShapesUnisolated(&m, OrtInference()).ok()) break;
  }
  view.values = std::move(values);
  view.float_values = std::move(float_values);

  auto note = [&](const onnx::ValueInfoProto& vi) {
    auto dims = OrtDimsOf(vi, [&](const std::string& param) {
      auto it = symbols.find(param);
      return it == symbols.end() ? kOrtUnknownDim : it->second;
    });
    if (dims) view.dims[vi.name()] = std::move(*dims);
  };
  for (const auto& vi : m.graph().input()) note(vi);
  for (const auto& vi : m.graph().value_info()) note(vi);
  for (const auto& vi : m.graph().output()) note(vi);
  for (const auto& t : m.graph().initializer()) {
    view.dims[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  }
  return view;
}

}  // namespace hase::graph
