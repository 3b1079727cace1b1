#include "hase/graph/shape_values.h"

#include "hase/graph/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

namespace hase::graph {
namespace {

using Ints = std::vector<int64_t>;

}  // namespace

std::optional<std::vector<int64_t>> TensorInts(const onnx::TensorProto& t) {
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

namespace {

// Values of a small float / double tensor held in the proto (float_data, double_data or
// raw_data); nullopt otherwise.
std::optional<std::vector<double>> TensorDoubles(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<double> v;
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    if (t.has_raw_data()) {
      std::vector<float> w(t.raw_data().size() / 4);
      std::memcpy(w.data(), t.raw_data().data(), w.size() * 4);
      v.assign(w.begin(), w.end());
    } else {
      v.assign(t.float_data().begin(), t.float_data().end());
    }
  } else if (t.data_type() == onnx::TensorProto::DOUBLE) {
    if (t.has_raw_data()) {
      v.resize(t.raw_data().size() / 8);
      std::memcpy(v.data(), t.raw_data().data(), v.size() * 8);
    } else {
      v.assign(t.double_data().begin(), t.double_data().end());
    }
  } else {
    return std::nullopt;
  }
  if (v.size() > 64) return std::nullopt;
  return v;
}

bool IsFloatType(int32_t t) { return t == 1 || t == 10 || t == 11 || t == 16; }

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
    else if (op == "Mod") out[i] = ((x % y) + y) % y;  // fmod = 0: the divisor's sign (y > 0)
    else out[i] = x / y;  // Div on int64: truncation, as ONNX Runtime's integer Div
  }
  return out;
}

// Product of `dims`, or -1 when a dim is negative or the product overflows int64.
int64_t Product(const Ints& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(p, d, &p)) return -1;
  }
  return p;
}

// Numpy broadcast of two shapes, or nullopt.
std::optional<Ints> Broadcast(const Ints& a, const Ints& b) {
  const size_t rank = std::max(a.size(), b.size());
  Ints d(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    d[i] = x == 1 ? y : x;
  }
  return d;
}

}  // namespace

std::optional<EinsumShape> ComputeEinsumShape(std::string eq,
                                              const std::vector<const std::vector<int64_t>*>& in) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  if (terms.size() != in.size()) return std::nullopt;
  std::map<char, int64_t> size;
  std::map<char, int> uses;
  Ints ellipsis;  // broadcast of every term's "..." dims
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& term = terms[t];
    const Ints& d = *in[t];
    const size_t dots = term.find("...");
    std::string letters = term;
    if (dots != std::string::npos) letters.erase(dots, 3);
    for (char c : letters) {
      if (!std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
    }
    if (letters.size() > d.size() || (dots == std::string::npos && letters.size() != d.size())) {
      return std::nullopt;
    }
    const size_t ell_rank = d.size() - letters.size();
    const size_t ell_at = dots == std::string::npos ? letters.size() : dots;
    if (dots != std::string::npos) {
      auto b = Broadcast(ellipsis, Ints(d.begin() + ell_at, d.begin() + ell_at + ell_rank));
      if (!b) return std::nullopt;
      ellipsis = *b;
    }
    for (size_t i = 0; i < letters.size(); ++i) {
      const int64_t dim = d[i < ell_at ? i : i + ell_rank];
      const char c = letters[i];
      ++uses[c];
      auto [it, fresh] = size.emplace(c, dim);
      if (!fresh && it->second != dim) {
        if (it->second != 1 && dim != 1) return std::nullopt;
        it->second = std::max(it->second, dim);
      }
    }
  }
  EinsumShape r;
  std::set<char> kept;
  if (arrow == std::string::npos) {
    r.output = ellipsis;
    for (const auto& [c, n] : uses) {
      if (n == 1) {
        r.output.push_back(size[c]);
        kept.insert(c);
      }
    }
  } else {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (rhs.compare(i, 3, "...") == 0) {
        r.output.insert(r.output.end(), ellipsis.begin(), ellipsis.end());
        i += 2;
      } else if (size.count(rhs[i]) && kept.insert(rhs[i]).second) {
        r.output.push_back(size[rhs[i]]);
      } else {
        return std::nullopt;  // a letter no input has, or twice
      }
    }
  }
  for (const auto& [c, d] : size) {
    if (!kept.count(c)) r.contracted *= d;
  }
  return r;
}

namespace {

// Row-major strides of `dims`.
Ints Strides(const Ints& dims) {
  Ints st(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) st[i - 1] = st[i] * dims[i];
  return st;
}

// Transpose of the values `x` with dims `d` by `perm` (ONNX Transpose).
std::optional<Ints> TransposeValues(const Ints& x, const Ints& d, const Ints& perm) {
  const Ints in_st = Strides(d);
  Ints od;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(d.size())) return std::nullopt;
    od.push_back(d[p]);
  }
  Ints out(x.size());
  Ints idx(od.size(), 0);
  for (size_t flat = 0; flat < out.size(); ++flat) {
    int64_t src = 0;
    for (size_t k = 0; k < idx.size(); ++k) src += idx[k] * in_st[perm[k]];
    out[flat] = x[src];
    for (size_t k = idx.size(); k-- > 0;) {
      if (++idx[k] < od[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// ONNX Slice (opset ≥ 10) of the values `x` with dims `d`; nullopt when out of its rules.
std::optional<Ints> SliceValues(const Ints& x, const Ints& d, const Ints& starts, const Ints& ends,
                                const Ints* axes, const Ints* steps) {
  const int64_t rank = static_cast<int64_t>(d.size());
  if (starts.size() != ends.size() || (axes && axes->size() != starts.size()) ||
      (steps && steps->size() != starts.size())) {
    return std::nullopt;
  }
  Ints b(rank, 0), st(rank, 1), od = d;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes ? (*axes)[i] : static_cast<int64_t>(i);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    const int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0) return std::nullopt;
    const int64_t size = d[axis];
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += size;
    if (e < 0) e += size;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, size);
      e = std::clamp<int64_t>(e, 0, size);
      od[axis] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, size - 1);
      e = std::clamp<int64_t>(e, -1, size - 1);
      od[axis] = s > e ? (s - e - step - 1) / -step : 0;
    }
    b[axis] = s;
    st[axis] = step;
  }
  const Ints in_st = Strides(d);
  const int64_t count = Product(od);
  Ints out;
  if (count <= 0) return out;
  Ints idx(rank, 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t src = 0;
    for (int64_t k = 0; k < rank; ++k) src += (b[k] + idx[k] * st[k]) * in_st[k];
    if (src < 0 || src >= static_cast<int64_t>(x.size())) return std::nullopt;
    out.push_back(x[src]);
    for (int64_t k = rank; k-- > 0;) {
      if (++idx[k] < od[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// Float arithmetic on small constant values, as ORT's constant folding runs it: Constant,
// Cast (to a float type keeps the numbers; to an integer type truncates toward zero, into the
// integer values), Reciprocal / Floor / Ceil / Neg / Sqrt, Add / Sub / Mul / Div / Min / Max of
// two known operands (one-element broadcast), Unsqueeze / Squeeze / Identity / Concat, and
// ReduceMax / ReduceMin over every element. Writes (*fvalues)[out] (and (*ints)[out] for a Cast
// to an integer type).
template <typename FVal, typename OutType>
void EvaluateFloat(const onnx::NodeProto& n, const std::string& op, const std::string& out,
                   FVal& fval, OutType& out_type,
                   std::unordered_map<std::string, std::vector<double>>* fvalues,
                   std::unordered_map<std::string, Ints>* ints) {
  using D = std::vector<double>;
  if (op == "Constant") {
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        if (auto v = TensorDoubles(a.t())) (*fvalues)[out] = *v;
      }
      if (a.name() == "value_float") (*fvalues)[out] = {a.f()};
      if (a.name() == "value_floats") (*fvalues)[out] = D(a.floats().begin(), a.floats().end());
    }
    return;
  }
  if (op == "Cast") {
    auto x = fval(n, 0);
    if (!x) return;
    const int64_t to = IntAttr(n, "to", 0);
    if (IsFloatType(static_cast<int32_t>(to))) {
      D v = *x;
      if (to == onnx::TensorProto::FLOAT) {
        for (double& e : v) e = static_cast<double>(static_cast<float>(e));
      }
      (*fvalues)[out] = v;
    } else if ((to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32) &&
               !ints->count(out)) {
      Ints v;
      for (double e : *x) {
        if (!(std::fabs(e) < 9.0e15)) return;
        v.push_back(static_cast<int64_t>(std::trunc(e)));
      }
      (*ints)[out] = v;
    }
    return;
  }
  if ((op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd") && n.input_size() == 1 &&
      !IsFloatType(out_type(n))) {
    // Integer values over every element (the transform's min/max image size; batched_nms's
    // boxes.numel() == 0 test as ReduceProd(Shape(boxes))): into the integer values.
    for (const auto& a : n.attribute()) {
      if (a.name() == "axes") return;
    }
    auto it = ints->find(n.input(0));
    if (it == ints->end() || it->second.empty()) return;
    const Ints& v = it->second;
    if (op == "ReduceProd") {
      const int64_t p = Product(v);
      if (p >= 0) (*ints)[out] = {p};
      return;
    }
    (*ints)[out] = {op == "ReduceMax" ? *std::max_element(v.begin(), v.end())
                                      : *std::min_element(v.begin(), v.end())};
    return;
  }
  if (!IsFloatType(out_type(n))) return;
  if (op == "Reciprocal" || op == "Floor" || op == "Ceil" || op == "Neg" || op == "Sqrt") {
    auto x = fval(n, 0);
    if (!x) return;
    D v = *x;
    for (double& e : v) {
      if (op == "Reciprocal") e = 1.0 / e;
      else if (op == "Floor") e = std::floor(e);
      else if (op == "Ceil") e = std::ceil(e);
      else if (op == "Neg") e = -e;
      else e = std::sqrt(e);
    }
    (*fvalues)[out] = v;
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Min" ||
             op == "Max") {
    if (n.input_size() != 2) return;
    auto a = fval(n, 0), b = fval(n, 1);
    if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return;
    D v(std::max(a->size(), b->size()));
    for (size_t i = 0; i < v.size(); ++i) {
      const double x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i];
      if (op == "Add") v[i] = x + y;
      else if (op == "Sub") v[i] = x - y;
      else if (op == "Mul") v[i] = x * y;
      else if (op == "Div") v[i] = x / y;
      else if (op == "Min") v[i] = std::min(x, y);
      else v[i] = std::max(x, y);
    }
    (*fvalues)[out] = v;
  } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity" || op == "Reshape") {
    if (auto x = fval(n, 0)) (*fvalues)[out] = *x;
  } else if (op == "Concat") {
    D v;
    for (int i = 0; i < n.input_size(); ++i) {
      auto x = fval(n, i);
      if (!x) return;
      v.insert(v.end(), x->begin(), x->end());
    }
    (*fvalues)[out] = v;
  } else if ((op == "ReduceMax" || op == "ReduceMin") && n.input_size() == 1) {
    for (const auto& a : n.attribute()) {
      if (a.name() == "axes") return;  // over every element only
    }
    auto x = fval(n, 0);
    if (!x || x->empty()) return;
    (*fvalues)[out] = {op == "ReduceMax" ? *std::max_element(x->begin(), x->end())
                                         : *std::min_element(x->begin(), x->end())};
  }
}

// Writes `name`'s static dims into its value_info / graph output entry (the existing one, e.g.
// rank-only, or a new value_info) and records it in `entries`.
void SetStaticShape(onnx::GraphProto* g, std::unordered_map<std::string, onnx::ValueInfoProto*>& entries,
                    const std::string& name, const Ints& d, int32_t elem_type) {
  auto it = entries.find(name);
  onnx::ValueInfoProto* vi = it != entries.end() ? it->second : g->add_value_info();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  tt->clear_shape();
  for (int64_t x : d) tt->mutable_shape()->add_dim()->set_dim_value(x);
  entries[name] = vi;
}

}  // namespace

int ResolveShapeComputedDims(onnx::ModelProto* model,
                             std::unordered_map<std::string, std::vector<int64_t>>* values_out,
                             std::unordered_map<std::string, std::vector<double>>* float_out) {
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
  // Small float values (ORT constant-folds float arithmetic on constants too: detection models'
  // GeneralizedRCNNTransform computes its resize scale as Reciprocal → Mul → Min → Floor).
  std::unordered_map<std::string, std::vector<double>> fvalues;
  for (const auto& t : g->initializer()) {
    dims[t.name()] = Ints(t.dims().begin(), t.dims().end());
    types[t.name()] = t.data_type();
    if (auto v = TensorInts(t)) values[t.name()] = *v;
    if (auto v = TensorDoubles(t)) fvalues[t.name()] = *v;
  }
  // value_info / output entries by name (element pointers of a RepeatedPtrField are stable).
  std::unordered_map<std::string, onnx::ValueInfoProto*> entries;
  for (auto& v : *g->mutable_value_info()) entries[v.name()] = &v;
  for (auto& v : *g->mutable_output()) entries[v.name()] = &v;
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
    SetStaticShape(g, entries, out, d, elem_type);
    ++added;
  };
  // A float view of input i: its float values, or its integer values as numbers.
  auto fval = [&](const onnx::NodeProto& n, int i) -> std::optional<std::vector<double>> {
    if (i >= n.input_size() || n.input(i).empty()) return std::nullopt;
    if (auto it = fvalues.find(n.input(i)); it != fvalues.end()) return it->second;
    if (auto it = values.find(n.input(i)); it != values.end() && it->second.size() <= 64) {
      return std::vector<double>(it->second.begin(), it->second.end());
    }
    return std::nullopt;
  };
  auto out_type = [&](const onnx::NodeProto& n) -> int32_t {
    auto it = types.find(n.output(0));
    if (it != types.end()) return it->second;
    it = types.find(n.input_size() > 0 ? n.input(0) : "");
    return it == types.end() ? 0 : it->second;
  };
  for (const onnx::NodeProto& n : g->node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (n.output_size() == 0) continue;
    const std::string& op = n.op_type();
    const std::string& out = n.output(0);
    EvaluateFloat(n, op, out, fval, out_type, &fvalues, &values);
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
        // Its own dims (1-D) too, which inference knows only once the input's rank is known:
        // a Gather of it then resolves in this same pass.
        if (!dims.count(out)) dims[out] = {end - start};
      }
    } else if (op == "Size" && n.input_size() == 1) {
      if (const Ints* s = shape_of(n.input(0))) {
        if (const int64_t e = Product(*s); e >= 0) values[out] = {e};
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
    } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Cast" || op == "Identity" ||
               (op == "Reshape" && val(n, 0))) {
      if (const Ints* v = val(n, 0)) values[out] = *v;
      if (op == "Reshape") continue;  // its shape is resolved below only for activations
    } else if (op == "Equal") {
      const Ints* a = val(n, 0);
      const Ints* b = val(n, 1);
      if (a && b && (a->size() == b->size() || a->size() == 1 || b->size() == 1)) {
        Ints o(std::max(a->size(), b->size()));
        for (size_t i = 0; i < o.size(); ++i) {
          o[i] = (*a)[a->size() == 1 ? 0 : i] == (*b)[b->size() == 1 ? 0 : i];
        }
        values[out] = o;
      }
    } else if (op == "Where") {
      const Ints* c = val(n, 0);
      const Ints* a = val(n, 1);
      const Ints* b = val(n, 2);
      if (c && a && b) {
        const size_t len = std::max({c->size(), a->size(), b->size()});
        Ints o(len);
        bool ok = true;
        for (const Ints* v : {c, a, b}) ok = ok && (v->size() == len || v->size() == 1);
        for (size_t i = 0; ok && i < len; ++i) {
          auto at = [&](const Ints* v) { return (*v)[v->size() == 1 ? 0 : i]; };
          o[i] = at(c) ? at(a) : at(b);
        }
        if (ok) values[out] = o;
      }
    } else if (op == "Concat") {
      Ints o;
      bool all = true;
      for (int i = 0; i < n.input_size() && all; ++i) {
        const Ints* v = val(n, i);
        all = v != nullptr;
        if (all) o.insert(o.end(), v->begin(), v->end());
      }
      if (all) values[out] = o;
    } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
                (op == "Mod" && IntAttr(n, "fmod", 0) == 0)) &&
               !IsFloatType(out_type(n))) {
      const Ints* a = val(n, 0);
      const Ints* b = val(n, 1);
      if (a && b) {
        if (auto o = Arith(op, *a, *b)) values[out] = *o;
      }
    } else if (op == "Range") {
      // Range(start, limit, delta), integer scalars: ceil((limit - start) / delta) values (Swin's
      // shifted-window masks and roll). Its dims are resolved; its values kept when small.
      const Ints* a = val(n, 0);
      const Ints* l = val(n, 1);
      const Ints* dl = val(n, 2);
      if (a && l && dl && a->size() == 1 && l->size() == 1 && dl->size() == 1 && (*dl)[0] != 0) {
        const int64_t start = (*a)[0], limit = (*l)[0], delta = (*dl)[0];
        const int64_t count = std::max<int64_t>(
            0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
        if (count <= 4096) {
          Ints o;
          for (int64_t i = 0; i < count; ++i) o.push_back(start + i * delta);
          values[out] = o;
        }
        if (!dims.count(out)) {
          resolve(out, {count}, types.count(n.input(0)) ? types[n.input(0)] : 7);
        }
      }
    } else if (op == "Transpose" && val(n, 0) && shape_of(n.input(0))) {
      // Values reordered (torch's F.pad writes its pads through Reshape → Slice → Transpose).
      const Ints& x = *val(n, 0);
      const Ints& d = *shape_of(n.input(0));
      Ints perm;
      for (const auto& a : n.attribute()) {
        if (a.name() == "perm") perm.assign(a.ints().begin(), a.ints().end());
      }
      if (perm.empty()) {
        for (size_t i = d.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      }
      const int64_t count = Product(d);
      if (perm.size() == d.size() && count == static_cast<int64_t>(x.size())) {
        if (auto o = TransposeValues(x, d, perm)) values[out] = *o;
      }
    } else if (op == "Slice" && val(n, 0) && shape_of(n.input(0)) && val(n, 1) && val(n, 2)) {
      // Values sliced along any axes, any steps (F.pad's reversal of its pads: step -1).
      if (auto o = SliceValues(*val(n, 0), *shape_of(n.input(0)), *val(n, 1), *val(n, 2),
                               val(n, 3), val(n, 4))) {
        values[out] = *o;
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
        const int64_t total = Product(*x);
        int64_t known = 1, infer = -1;
        Ints d = *t;
        bool ok = total >= 0;
        for (size_t i = 0; i < d.size() && ok; ++i) {
          if (d[i] == 0) {
            ok = i < x->size();
            if (ok) d[i] = (*x)[i];
          }
          if (d[i] == -1) {
            ok = infer < 0;
            infer = static_cast<int64_t>(i);
          } else if (ok) {
            ok = d[i] > 0 && !__builtin_mul_overflow(known, d[i], &known);
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
    } else if (op == "ConstantOfShape") {
      if (const Ints* t = val(n, 0)) {
        int32_t et = onnx::TensorProto::FLOAT;
        std::optional<Ints> fill;
        for (const auto& a : n.attribute()) {
          if (a.name() == "value" && a.has_t()) {
            et = a.t().data_type();
            fill = TensorInts(a.t());
          }
        }
        const int64_t count = Product(*t);
        if (fill && fill->size() == 1 && count >= 0 && count <= 64) {
          values[out] = Ints(static_cast<size_t>(count), (*fill)[0]);
        }
        if (!dims.count(out)) resolve(out, *t, et);
      }
    } else if (op == "Einsum" && !dims.count(out)) {
      // ONNX 1.12 infers only Einsum's rank (maxvit_t's relative attention).
      std::vector<const Ints*> in;
      for (int i = 0; i < n.input_size(); ++i) in.push_back(shape_of(n.input(i)));
      std::string eq;
      for (const auto& a : n.attribute()) {
        if (a.name() == "equation") eq = a.s();
      }
      if (!in.empty() && std::find(in.begin(), in.end(), nullptr) == in.end() && !eq.empty()) {
        if (auto e = ComputeEinsumShape(eq, in)) {
          resolve(out, e->output, types.count(n.input(0)) ? types[n.input(0)] : 1);
        }
      }
    } else if (op == "Resize" && !dims.count(out) && n.input_size() >= 3) {
      // Resize-11..19 with `sizes` computed from shapes (torchvision's segmentation heads:
      // F.interpolate(x, size=input.shape[-2:]) → Shape → Slice/Gather → Concat). ONNX's Resize
      // inference reads only initializer sizes. Resize-18's `axes` names the axes `sizes` covers;
      // a keep_aspect_ratio_policy other than "stretch" changes them, left unresolved.
      const Ints* x = shape_of(n.input(0));
      const Ints* sizes = n.input_size() >= 4 ? val(n, 3) : nullptr;
      Ints axes;
      std::string policy = "stretch";
      for (const auto& a : n.attribute()) {
        if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
        if (a.name() == "keep_aspect_ratio_policy") policy = a.s();
      }
      std::optional<std::vector<double>> scales;
      if (!sizes && !n.input(2).empty()) scales = fval(n, 2);
      if (x && scales && scales->size() == x->size() && axes.empty()) {
        // Resize-13 with computed scales: floor(dim × scale) (ONNX's resizeShapeInference).
        Ints d = *x;
        bool ok = true;
        for (size_t i = 0; i < d.size() && ok; ++i) {
          const double v = std::floor(static_cast<double>(d[i]) * (*scales)[i]);
          ok = (*scales)[i] > 0 && v >= 0 && v < 9.0e15;
          if (ok) d[i] = static_cast<int64_t>(v);
        }
        if (ok) resolve(out, d, types.count(n.input(0)) ? types[n.input(0)] : 1);
      } else if (x && sizes && policy == "stretch") {
        const int64_t rank = static_cast<int64_t>(x->size());
        if (axes.empty()) {
          for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
        }
        Ints d = *x;
        bool ok = axes.size() == sizes->size();
        for (size_t i = 0; i < axes.size() && ok; ++i) {
          const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
          ok = axis >= 0 && axis < rank && (*sizes)[i] >= 0;
          if (ok) d[axis] = (*sizes)[i];
        }
        if (ok) resolve(out, d, types.count(n.input(0)) ? types[n.input(0)] : 1);
      }
    } else if (op == "Tile" && !dims.count(out) && n.input_size() == 2) {
      // Repeats computed from shapes (SSD's anchor generator: Tile(anchors, [H·W, 1])).
      const Ints* x = shape_of(n.input(0));
      const Ints* rep = val(n, 1);
      if (x && rep && rep->size() == x->size()) {
        Ints d = *x;
        bool ok = true;
        for (size_t i = 0; i < d.size() && ok; ++i) {
          ok = (*rep)[i] >= 0 && !__builtin_mul_overflow(d[i], (*rep)[i], &d[i]);
        }
        if (ok) resolve(out, d, types.count(n.input(0)) ? types[n.input(0)] : 1);
      }
    } else if (op == "TopK" && n.input_size() == 2 && n.output_size() == 2) {
      // k computed from shapes (Faster R-CNN's RPN: min(pre_nms_top_n, anchors)): both outputs
      // are the input's dims with `axis` replaced by k.
      const Ints* x = shape_of(n.input(0));
      const Ints* k = val(n, 1);
      int64_t axis = IntAttr(n, "axis", -1);
      if (x && k && k->size() == 1 && (*k)[0] >= 0) {
        if (axis < 0) axis += static_cast<int64_t>(x->size());
        if (axis >= 0 && axis < static_cast<int64_t>(x->size()) && (*k)[0] <= (*x)[axis]) {
          Ints d = *x;
          d[axis] = (*k)[0];
          resolve(n.output(0), d, types.count(n.input(0)) ? types[n.input(0)] : 1);
          if (!n.output(1).empty()) resolve(n.output(1), d, onnx::TensorProto::INT64);
        }
      }
    } else if (op == "Pad" && !dims.count(out)) {
      const Ints* x = shape_of(n.input(0));
      const Ints* pads = val(n, 1);
      if (x && pads && pads->size() == 2 * x->size() && n.input_size() <= 3) {
        Ints d = *x;
        for (size_t i = 0; i < d.size(); ++i) d[i] += (*pads)[i] + (*pads)[i + d.size()];
        resolve(out, d, types.count(n.input(0)) ? types[n.input(0)] : 1);
      }
    }
    // Carry resolved dims through the ops that sit between one computed Reshape and the next
    // Shape in attention blocks, so that one round resolves a whole chain instead of one step
    // per shape-inference re-run.
    if (!dims.count(out) && n.input_size() > 0 && shape_of(n.input(0))) {
      const Ints& x = *shape_of(n.input(0));
      const int32_t et = types.count(n.input(0)) ? types[n.input(0)] : 1;
      static const char* kUnary[] = {"Softmax", "Erf", "Sqrt", "Relu", "Sigmoid", "Tanh",
                                     "Identity", "Dropout", "Neg", "Exp", "LayerNormalization"};
      if (std::find(std::begin(kUnary), std::end(kUnary), op) != std::end(kUnary)) {
        resolve(out, x, et);
      } else if (op == "Transpose") {
        Ints perm;
        for (const auto& a : n.attribute()) {
          if (a.name() == "perm") perm.assign(a.ints().begin(), a.ints().end());
        }
        if (perm.empty()) {
          for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
        }
        if (perm.size() == x.size()) {
          Ints d;
          for (int64_t p : perm) d.push_back(x[p]);
          resolve(out, d, et);
        }
      } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow") &&
                 n.input_size() == 2 && shape_of(n.input(1))) {
        if (auto d = Broadcast(x, *shape_of(n.input(1)))) resolve(out, *d, et);
      } else if ((op == "Unsqueeze" || op == "Squeeze") && !values.count(out)) {
        Ints axes;
        for (const auto& a : n.attribute()) {
          if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
        }
        if (const Ints* a = val(n, 1)) axes = *a;
        const int64_t out_rank = static_cast<int64_t>(x.size()) +
                                 (op == "Unsqueeze" ? 1 : -1) * static_cast<int64_t>(axes.size());
        Ints d;
        bool ok = !axes.empty();
        for (int64_t& a : axes) a = a < 0 ? a + (op == "Unsqueeze" ? out_rank : static_cast<int64_t>(x.size())) : a;
        if (ok && op == "Unsqueeze") {
          size_t j = 0;
          for (int64_t i = 0; i < out_rank && ok; ++i) {
            if (std::find(axes.begin(), axes.end(), i) != axes.end()) {
              d.push_back(1);
            } else {
              ok = j < x.size();
              if (ok) d.push_back(x[j++]);
            }
          }
        } else if (ok) {
          for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
            if (std::find(axes.begin(), axes.end(), i) == axes.end()) d.push_back(x[i]);
          }
        }
        if (ok && static_cast<int64_t>(d.size()) == out_rank) resolve(out, d, et);
      } else if (op == "Gather" && !values.count(out) && n.input_size() == 2 &&
                 shape_of(n.input(1))) {
        int64_t axis = IntAttr(n, "axis", 0);
        if (axis < 0) axis += static_cast<int64_t>(x.size());
        if (axis >= 0 && axis < static_cast<int64_t>(x.size())) {
          Ints d(x.begin(), x.begin() + axis);
          const Ints& idx = *shape_of(n.input(1));
          d.insert(d.end(), idx.begin(), idx.end());
          d.insert(d.end(), x.begin() + axis + 1, x.end());
          resolve(out, d, et);
        }
      } else if (op == "Concat" && !values.count(out)) {
        int64_t axis = IntAttr(n, "axis", 0);
        if (axis < 0) axis += static_cast<int64_t>(x.size());
        Ints d = x;
        bool ok = axis >= 0 && axis < static_cast<int64_t>(x.size());
        for (int i = 1; i < n.input_size() && ok; ++i) {
          const Ints* y = shape_of(n.input(i));
          ok = y && y->size() == x.size();
          if (ok) d[axis] += (*y)[axis];
        }
        if (ok) resolve(out, d, et);
      } else if (op == "Gemm" && n.input_size() >= 2 && shape_of(n.input(1)) && x.size() == 2) {
        const Ints& w = *shape_of(n.input(1));
        if (w.size() == 2) {
          const int64_t m = IntAttr(n, "transA", 0) ? x[1] : x[0];
          const int64_t cols = IntAttr(n, "transB", 0) ? w[0] : w[1];
          resolve(out, {m, cols}, et);
        }
      } else if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax") {
        Ints axes;
        for (const auto& a : n.attribute()) {
          if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
        }
        if (!axes.empty() && n.input_size() == 1) {
          const bool keep = IntAttr(n, "keepdims", 1) != 0;
          for (int64_t& a : axes) a = a < 0 ? a + static_cast<int64_t>(x.size()) : a;
          Ints d;
          for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
            const bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
            if (!reduced) d.push_back(x[i]);
            else if (keep) d.push_back(1);
          }
          resolve(out, d, et);
        }
      } else if (op == "MatMul" && n.input_size() == 2 && shape_of(n.input(1))) {
        const Ints& y = *shape_of(n.input(1));
        if (x.size() >= 2 && y.size() >= 2 && x.back() == y[y.size() - 2]) {
          auto batch = Broadcast(Ints(x.begin(), x.end() - 2), Ints(y.begin(), y.end() - 2));
          if (batch) {
            batch->push_back(x[x.size() - 2]);
            batch->push_back(y.back());
            resolve(out, *batch, et);
          }
        }
      }
    }
    if (op == "Slice" && !dims.count(out) && !values.count(out)) {
      // An activation sliced with computed starts/ends (Swin's roll and window padding).
      const Ints* x = shape_of(n.input(0));
      const Ints* starts = val(n, 1);
      const Ints* ends = val(n, 2);
      const Ints* axes = val(n, 3);
      const Ints* steps = val(n, 4);
      if (x && starts && ends && starts->size() == ends->size()) {
        Ints d = *x;
        bool ok = true;
        for (size_t i = 0; i < starts->size() && ok; ++i) {
          int64_t axis = axes ? (i < axes->size() ? (*axes)[i] : -1000) : static_cast<int64_t>(i);
          if (axis < 0) axis += static_cast<int64_t>(d.size());
          const int64_t step = steps && i < steps->size() ? (*steps)[i] : 1;
          ok = axis >= 0 && axis < static_cast<int64_t>(d.size()) && step == 1;
          if (!ok) break;
          const int64_t size = d[axis];
          int64_t b = (*starts)[i], e = (*ends)[i];
          if (b < 0) b += size;
          if (e < 0) e += size;
          b = std::clamp<int64_t>(b, 0, size);
          e = std::clamp<int64_t>(e, b, size);
          d[axis] = e - b;
        }
        if (ok) resolve(out, d, types.count(n.input(0)) ? types[n.input(0)] : 1);
      }
    }
  }
  if (float_out) {
    std::set<std::string> inits;
    for (const auto& t : g->initializer()) inits.insert(t.name());
    for (auto& [name, v] : fvalues) {
      if (!inits.count(name)) (*float_out)[name] = v;
    }
  }
  if (values_out) {
    for (auto& [name, v] : values) (*values_out)[name] = std::move(v);
  }
  return added;
}

int BoundDataDependentDims(onnx::ModelProto* model,
                           const std::unordered_map<std::string, std::vector<int64_t>>& known,
                           std::vector<std::string>* notes, int depth) {
  onnx::GraphProto* g = model->mutable_graph();
  std::unordered_map<std::string, Ints> dims;
  std::unordered_map<std::string, Ints> values = known;
  std::unordered_map<std::string, int32_t> types;
  std::unordered_map<std::string, onnx::ValueInfoProto*> entries;
  auto note_type = [&](const onnx::ValueInfoProto& vi) {
    if (vi.type().has_tensor_type()) types[vi.name()] = vi.type().tensor_type().elem_type();
  };
  for (const auto& vi : g->input()) {
    note_type(vi);
    if (auto d = KnownDims(vi)) dims[vi.name()] = *d;
  }
  for (auto& vi : *g->mutable_value_info()) {
    note_type(vi);
    entries[vi.name()] = &vi;
    if (auto d = KnownDims(vi)) dims[vi.name()] = *d;
  }
  for (auto& vi : *g->mutable_output()) {
    note_type(vi);
    entries[vi.name()] = &vi;
    if (auto d = KnownDims(vi)) dims[vi.name()] = *d;
  }
  for (const auto& t : g->initializer()) {
    dims[t.name()] = Ints(t.dims().begin(), t.dims().end());
    types[t.name()] = t.data_type();
    if (auto v = TensorInts(t)) values[t.name()] = *v;
  }
  auto shape_of = [&](const std::string& name) -> const Ints* {
    auto it = dims.find(name);
    return it == dims.end() ? nullptr : &it->second;
  };
  int bounded = 0;
  auto set_dims = [&](const std::string& out, const Ints& d, int32_t elem_type) {
    SetStaticShape(g, entries, out, d, elem_type);
    dims[out] = d;
  };
  auto bound = [&](const onnx::NodeProto& n, const Ints& d, const std::string& why) {
    set_dims(n.output(0), d, onnx::TensorProto::INT64);
    ++bounded;
    std::string shape;
    for (size_t i = 0; i < d.size(); ++i) shape += (i ? "x" : "") + std::to_string(d[i]);
    notes->push_back("node '" + n.name() + "' (" + n.op_type() + "): its output size depends on " +
                     "the data; bounded at " + shape + " (" + why + "); the kernels after it are " +
                     "costed at that bound");
  };
  for (const onnx::NodeProto& n : g->node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (n.output_size() == 0 || n.output(0).empty() || shape_of(n.output(0))) continue;
    if (n.op_type() == "NonZero" && n.input_size() == 1) {
      const Ints* x = shape_of(n.input(0));
      const int64_t e = x ? Product(*x) : -1;
      if (x && e >= 0) {
        bound(n, {static_cast<int64_t>(x->size()), e}, "every one of its input's " +
                                                            std::to_string(e) +
                                                            " elements non-zero");
      }
    } else if (n.op_type() == "NonMaxSuppression" && n.input_size() >= 2) {
      const Ints* boxes = shape_of(n.input(0));
      const Ints* scores = shape_of(n.input(1));
      int64_t m = 0;
      bool m_known = n.input_size() < 3 || n.input(2).empty();
      if (!m_known) {
        auto it = values.find(n.input(2));
        m_known = it != values.end() && it->second.size() == 1;
        if (m_known) m = it->second[0];
      }
      if (boxes && scores && boxes->size() == 3 && scores->size() == 3 && m_known) {
        const int64_t per_class = std::min((*boxes)[1], std::max<int64_t>(m, 0));
        bound(n, {(*scores)[0] * (*scores)[1] * per_class, 3},
              "every class of every batch keeps min(boxes " + std::to_string((*boxes)[1]) +
                  ", max_output_boxes_per_class " + std::to_string(m) + ")");
      }
    } else if (n.op_type() == "If" && n.input_size() == 1 && depth < 8) {
      // A condition hase computed (torchvision's batched_nms: boxes.numel() == 0, false once
      // the boxes are bounded): the outputs take the dims of the branch taken, resolved with
      // the outer dims and values (and bounded inside, notes included).
      auto c = values.find(n.input(0));
      if (c == values.end() || c->second.size() != 1) continue;
      const char* branch_name = c->second[0] != 0 ? "then_branch" : "else_branch";
      const onnx::GraphProto* branch = nullptr;
      for (const auto& a : n.attribute()) {
        if (a.name() == branch_name && a.has_g()) branch = &a.g();
      }
      if (branch == nullptr || branch->output_size() != n.output_size()) continue;
      bool missing = false;
      for (const std::string& o : n.output()) missing = missing || (!o.empty() && !shape_of(o));
      if (!missing) continue;
      // The branch as a model of its own: outer names it reads become inputs of known dims
      // (integer values known outside become initializers), as ONNX's outer scope.
      onnx::ModelProto sub;
      sub.set_ir_version(model->ir_version());
      *sub.mutable_opset_import() = model->opset_import();
      onnx::GraphProto* sg = sub.mutable_graph();
      *sg = *branch;
      std::set<std::string> local;
      for (const auto& t : branch->initializer()) local.insert(t.name());
      for (const auto& vi : branch->input()) local.insert(vi.name());
      bool ok = true;
      for (const auto& bn : branch->node()) {
        for (const std::string& in : bn.input()) {
          if (in.empty() || local.count(in)) continue;
          local.insert(in);
          const Ints* d = shape_of(in);
          auto t = types.find(in);
          if (d == nullptr || t == types.end()) {
            ok = false;
            break;
          }
          auto v = values.find(in);
          if (v != values.end() && t->second == onnx::TensorProto::INT64 &&
              static_cast<int64_t>(v->second.size()) == Product(*d)) {
            onnx::TensorProto* init = sg->add_initializer();
            init->set_name(in);
            init->set_data_type(onnx::TensorProto::INT64);
            for (int64_t x : *d) init->add_dims(x);
            for (int64_t x : v->second) init->add_int64_data(x);
          } else {
            onnx::ValueInfoProto* vi = sg->add_input();
            vi->set_name(in);
            vi->mutable_type()->mutable_tensor_type()->set_elem_type(t->second);
            for (int64_t x : *d) {
              vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(x);
            }
          }
        }
        for (const std::string& o : bn.output()) local.insert(o);
        if (!ok) break;
      }
      if (!ok) continue;
      for (auto& o : *sg->mutable_output()) {
        if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
      }
      const onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/1,
                                             /*enable_data_propagation=*/true);
      if (!InferModelShapesUnisolated(&sub, opts).ok()) continue;
      for (int step = 0; step < 64; ++step) {
        std::unordered_map<std::string, std::vector<int64_t>> sub_values;
        int progress = 0;
        for (int round = 0; round < 64; ++round) {
          const int r = ResolveShapeComputedDims(&sub, &sub_values);
          if (r == 0) break;
          progress += r;
          if (!InferModelShapesUnisolated(&sub, opts).ok()) break;
        }
        std::vector<std::string> sub_notes;
        const int b = BoundDataDependentDims(&sub, sub_values, &sub_notes, depth + 1);
        for (std::string& note : sub_notes) notes->push_back(std::move(note));
        if (b > 0 && !InferModelShapesUnisolated(&sub, opts).ok()) break;
        if (progress + b == 0) break;
      }
      // The branch outputs' dims, by position.
      std::unordered_map<std::string, const onnx::ValueInfoProto*> sub_vi;
      for (const auto& vi : sub.graph().value_info()) sub_vi[vi.name()] = &vi;
      for (const auto& vi : sub.graph().output()) {
        if (KnownDims(vi)) sub_vi[vi.name()] = &vi;
      }
      for (int i = 0; i < n.output_size(); ++i) {
        if (n.output(i).empty() || shape_of(n.output(i))) continue;
        auto it = sub_vi.find(branch->output(i).name());
        if (it == sub_vi.end()) continue;
        auto d = KnownDims(*it->second);
        if (!d) continue;
        set_dims(n.output(i), *d, it->second->type().tensor_type().elem_type());
        ++bounded;
      }
    }
  }
  return bounded;
}

}  // namespace hase::graph
