#include "hase/graph/shape_values.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

namespace hase::graph {
namespace {

using Ints = std::vector<int64_t>;

// Values of an integer tensor held in the proto (int64 / int32, data or raw_data).
std::optional<Ints> TensorInts(const onnx::TensorProto& t) {
  Ints v;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.has_raw_data()) {
      v.resize(t.raw_data().size() / 8);
      std::memcpy(v.data(), t.raw_data().data(), v.size() * 8);
    } else {
      v.assign(t.int64_data().begin(), t.int64_data().end());
    }
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.has_raw_data()) {
      std::vector<int32_t> w(t.raw_data().size() / 4);
      std::memcpy(w.data(), t.raw_data().data(), w.size() * 4);
      v.assign(w.begin(), w.end());
    } else {
      v.assign(t.int32_data().begin(), t.int32_data().end());
    }
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<Ints> KnownDims(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return std::nullopt;
  Ints d;
  for (const auto& x : vi.type().tensor_type().shape().dim()) {
    if (!x.has_dim_value()) return std::nullopt;
    d.push_back(x.dim_value());
  }
  return d;
}

int64_t IntAttr(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

// Elementwise a op b with a one-element operand broadcast.
std::optional<Ints> Arith(const std::string& op, const Ints& a, const Ints& b) {
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
  Ints out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
    if (op == "Add") out[i] = x + y;
    else if (op == "Sub") out[i] = x - y;
    else if (op == "Mul") out[i] = x * y;
    else if (y == 0) return std::nullopt;
    else out[i] = x / y;  // Div on int64: truncation, as ONNX Runtime's integer Div
  }
  return out;
}

}  // namespace

int ResolveShapeComputedDims(onnx::ModelProto* model) {
  onnx::GraphProto* g = model->mutable_graph();
  std::unordered_map<std::string, Ints> dims;     // fully known shapes
  std::unordered_map<std::string, int32_t> types;  // element types
  std::unordered_map<std::string, Ints> values;   // known int tensor values (flattened)
  auto note = [&](const onnx::ValueInfoProto& vi) {
    if (vi.type().has_tensor_type()) types[vi.name()] = vi.type().tensor_type().elem_type();
    if (auto d = KnownDims(vi)) dims[vi.name()] = *d;
  };
  for (const auto& vi : g->input()) note(vi);
  for (const auto& vi : g->value_info()) note(vi);
  for (const auto& vi : g->output()) note(vi);
  for (const auto& t : g->initializer()) {
    dims[t.name()] = Ints(t.dims().begin(), t.dims().end());
    types[t.name()] = t.data_type();
    if (auto v = TensorInts(t)) values[t.name()] = *v;
  }
  int added = 0;
  auto val = [&](const onnx::NodeProto& n, int i) -> const Ints* {
    if (i >= n.input_size() || n.input(i).empty()) return nullptr;
    auto it = values.find(n.input(i));
    return it == values.end() ? nullptr : &it->second;
  };
  auto shape_of = [&](const std::string& name) -> const Ints* {
    auto it = dims.find(name);
    return it == dims.end() ? nullptr : &it->second;
  };
  auto resolve = [&](const std::string& out, const Ints& d, int32_t elem_type) {
    if (dims.count(out)) return;
    dims[out] = d;
    onnx::ValueInfoProto* vi = nullptr;  // the existing entry (rank-only, a graph output), or new
    for (auto& v : *g->mutable_value_info()) {
      if (v.name() == out) vi = &v;
    }
    for (auto& v : *g->mutable_output()) {
      if (v.name() == out) vi = &v;
    }
    if (vi == nullptr) vi = g->add_value_info();
    vi->set_name(out);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    tt->clear_shape();
    for (int64_t x : d) tt->mutable_shape()->add_dim()->set_dim_value(x);
    ++added;
  };
  for (const onnx::NodeProto& n : g->node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (n.output_size() == 0) continue;
    const std::string& op = n.op_type();
    const std::string& out = n.output(0);
    if (op == "Constant") {
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) {
          if (auto v = TensorInts(a.t())) values[out] = *v;
        }
        if (a.name() == "value_ints") values[out] = Ints(a.ints().begin(), a.ints().end());
        if (a.name() == "value_int") values[out] = {a.i()};
      }
    } else if (op == "Shape" && n.input_size() == 1) {
      if (const Ints* s = shape_of(n.input(0))) {
        const int64_t rank = static_cast<int64_t>(s->size());
        int64_t start = IntAttr(n, "start", 0), end = IntAttr(n, "end", rank);
        if (start < 0) start += rank;
        if (end < 0) end += rank;
        start = std::clamp<int64_t>(start, 0, rank);
        end = std::clamp<int64_t>(end, start, rank);
        values[out] = Ints(s->begin() + start, s->begin() + end);
      }
    } else if (op == "Size" && n.input_size() == 1) {
      if (const Ints* s = shape_of(n.input(0))) {
        int64_t e = 1;
        for (int64_t x : *s) e *= x;
        values[out] = {e};
      }
    } else if (op == "Gather" && IntAttr(n, "axis", 0) == 0) {
      const Ints* data = val(n, 0);
      const Ints* idx = val(n, 1);
      const Ints* data_shape = shape_of(n.input(0));
      if (data && idx && data_shape && data_shape->size() <= 1) {
        Ints o;
        for (int64_t i : *idx) {
          if (i < 0) i += static_cast<int64_t>(data->size());
          if (i < 0 || i >= static_cast<int64_t>(data->size())) { o.clear(); break; }
          o.push_back((*data)[i]);
        }
        if (!o.empty()) values[out] = o;
      }
    } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Cast" || op == "Identity") {
      if (const Ints* v = val(n, 0)) values[out] = *v;
    } else if (op == "Concat") {
      Ints o;
      bool all = true;
      for (int i = 0; i < n.input_size() && all; ++i) {
        const Ints* v = val(n, i);
        all = v != nullptr;
        if (all) o.insert(o.end(), v->begin(), v->end());
      }
      if (all) values[out] = o;
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      const Ints* a = val(n, 0);
      const Ints* b = val(n, 1);
      if (a && b) {
        if (auto o = Arith(op, *a, *b)) values[out] = *o;
      }
    } else if (op == "Slice") {
      const Ints* data = val(n, 0);
      const Ints* starts = val(n, 1);
      const Ints* ends = val(n, 2);
      const Ints* axes = val(n, 3);
      const Ints* steps = val(n, 4);
      if (data && starts && ends && starts->size() == 1 && ends->size() == 1 &&
          (!axes || *axes == Ints{0}) && (!steps || *steps == Ints{1})) {
        const int64_t size = static_cast<int64_t>(data->size());
        int64_t s = (*starts)[0], e = (*ends)[0];
        if (s < 0) s += size;
        if (e < 0) e += size;
        s = std::clamp<int64_t>(s, 0, size);
        e = std::clamp<int64_t>(e, s, size);
        values[out] = Ints(data->begin() + s, data->begin() + e);
      }
    } else if (op == "Reshape" && !dims.count(out)) {
      const Ints* x = shape_of(n.input(0));
      const Ints* t = val(n, 1);
      if (x && t && IntAttr(n, "allowzero", 0) == 0) {
        int64_t total = 1, known = 1, infer = -1;
        for (int64_t d : *x) total *= d;
        Ints d = *t;
        bool ok = true;
        for (size_t i = 0; i < d.size() && ok; ++i) {
          if (d[i] == 0) {
            ok = i < x->size();
            if (ok) d[i] = (*x)[i];
          }
          if (d[i] == -1) {
            ok = infer < 0;
            infer = static_cast<int64_t>(i);
          } else if (ok) {
            ok = d[i] > 0;
            known *= d[i];
          }
        }
        if (ok && infer >= 0) {
          ok = known > 0 && total % known == 0;
          if (ok) d[infer] = total / known;
        }
        if (ok) resolve(out, d, types.count(n.input(0)) ? types[n.input(0)] : 1);
      }
    } else if (op == "Expand" && !dims.count(out)) {
      const Ints* x = shape_of(n.input(0));
      const Ints* t = val(n, 1);
      if (x && t) {
        const size_t rank = std::max(x->size(), t->size());
        Ints d(rank, 1);
        bool ok = true;
        for (size_t i = 0; i < rank && ok; ++i) {
          const int64_t a = i + x->size() >= rank ? (*x)[i + x->size() - rank] : 1;
          const int64_t b = i + t->size() >= rank ? (*t)[i + t->size() - rank] : 1;
          ok = a == b || a == 1 || b == 1;
          d[i] = std::max(a, b);
        }
        if (ok) resolve(out, d, types.count(n.input(0)) ? types[n.input(0)] : 1);
      }
    } else if (op == "ConstantOfShape" && !dims.count(out)) {
      if (const Ints* t = val(n, 0)) {
        int32_t et = onnx::TensorProto::FLOAT;
        for (const auto& a : n.attribute()) {
          if (a.name() == "value" && a.has_t()) et = a.t().data_type();
        }
        resolve(out, *t, et);
      }
    }
  }
  return added;
}

}  // namespace hase::graph
