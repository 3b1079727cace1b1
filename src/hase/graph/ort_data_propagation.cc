#include "hase/graph/ort_data_propagation.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hase/graph/shape_values.h"

namespace hase::graph {
namespace {

// One element of a propagated value: a known integer, a symbolic dim of the file, or unknown.
struct Elem {
  std::optional<int64_t> value;
  std::string param;  // non-empty: the file's dim_param
  bool known() const { return value.has_value(); }
};

// A propagated value: ORT's scalar channel (rank 0, known integer only) or a 1-D list.
struct Datum {
  bool scalar = false;
  std::vector<Elem> e;
  bool all_known() const {
    for (const Elem& x : e) {
      if (!x.known()) return false;
    }
    return true;
  }
};

int64_t IntAttr(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

// A constant (initializer or Constant) of rank 0 or 1 as a Datum.
std::optional<Datum> ConstDatum(const onnx::TensorProto& t) {
  if (t.dims_size() > 1) return std::nullopt;
  auto v = TensorInts(t);
  if (!v) return std::nullopt;
  Datum d;
  d.scalar = t.dims_size() == 0;
  if (d.scalar && v->size() != 1) return std::nullopt;
  for (int64_t x : *v) d.e.push_back({x, {}});
  return d;
}

}  // namespace

int PropagateOrtShapeData(onnx::ModelProto* model,
                          const std::unordered_set<std::string>& file_symbols) {
  onnx::GraphProto* g = model->mutable_graph();
  // Inferred types by name (inputs, value_info, outputs); initializers by dims.
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : g->input()) types[vi.name()] = &vi.type();
  for (const auto& vi : g->value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : g->output()) types[vi.name()] = &vi.type();
  // Existing value_info / output entries by name (RepeatedPtrField elements do not move).
  std::unordered_map<std::string, onnx::ValueInfoProto*> entries;
  for (auto& vi : *g->mutable_value_info()) entries[vi.name()] = &vi;
  for (auto& vi : *g->mutable_output()) entries[vi.name()] = &vi;
  std::unordered_map<std::string, std::vector<int64_t>> init_dims;
  std::unordered_map<std::string, Datum> data;
  for (const auto& t : g->initializer()) {
    init_dims[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    if (auto d = ConstDatum(t)) data[t.name()] = std::move(*d);
  }
  // The input's dims as Elems; nullopt without a rank.
  auto dims_of = [&](const std::string& name) -> std::optional<std::vector<Elem>> {
    if (auto it = init_dims.find(name); it != init_dims.end()) {
      std::vector<Elem> d;
      for (int64_t x : it->second) d.push_back({x, {}});
      return d;
    }
    auto it = types.find(name);
    if (it == types.end() || !it->second->has_tensor_type() ||
        !it->second->tensor_type().has_shape()) {
      return std::nullopt;
    }
    std::vector<Elem> d;
    for (const auto& x : it->second->tensor_type().shape().dim()) {
      if (x.has_dim_value()) d.push_back({x.dim_value(), {}});
      else if (x.has_dim_param() && file_symbols.count(x.dim_param())) d.push_back({{}, x.dim_param()});
      else d.push_back({});
    }
    return d;
  };
  auto datum = [&](const onnx::NodeProto& n, int i) -> const Datum* {
    if (i >= n.input_size() || n.input(i).empty()) return nullptr;
    auto it = data.find(n.input(i));
    return it == data.end() ? nullptr : &it->second;
  };
  // A fully known list or scalar's values (the constants ORT's getInputData hands ONNX).
  auto known_values = [&](const onnx::NodeProto& n, int i) -> std::optional<std::vector<int64_t>> {
    const Datum* d = datum(n, i);
    if (d == nullptr || !d->all_known()) return std::nullopt;
    std::vector<int64_t> v;
    for (const Elem& x : d->e) v.push_back(*x.value);
    return v;
  };

  // Reshape-14's inference reads the propagated target; Reshape-5/13's (ONNX's old.cc, frozen
  // when Reshape-14 came) read only a constant one: opset 13 probes D and E give ORT no rank.
  int64_t opset = 0;
  for (const auto& o : model->opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  }
  const bool reshape_reads_propagated = opset >= 14;
  // Slice-13 (opset ≥ 13): ONNX test_slice_without_input_shape, x (3, 2, 'a') with starts/ends
  // not constant → y (None, None, None); probe S1 (opset 13 and 17): ORT fuses BiasGelu after
  // such a Slice, so it knows the rank.
  const bool slice_keeps_rank = opset >= 13;

  int written = 0;
  // Gives `out` the dims `d` (elem type of `like`), replacing a rank-less entry.
  auto write = [&](const std::string& out, const std::string& like, const std::vector<Elem>& d) {
    auto entry = entries.find(out);
    onnx::ValueInfoProto* vi = entry != entries.end() ? entry->second : g->add_value_info();
    vi->set_name(out);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    int32_t et = onnx::TensorProto::FLOAT;
    if (auto in = types.find(like); in != types.end() && in->second->has_tensor_type()) {
      et = in->second->tensor_type().elem_type();
    }
    tt->set_elem_type(et);
    auto* shape = tt->mutable_shape();
    shape->clear_dim();
    for (const Elem& e : d) {
      auto* dim = shape->add_dim();
      if (e.known() && *e.value >= 0) dim->set_dim_value(*e.value);
      else if (!e.param.empty()) dim->set_dim_param(e.param);
    }
    types[out] = &vi->type();
    entries[out] = vi;
    ++written;
  };
  auto has_rank = [&](const std::string& name) {
    auto it = types.find(name);
    return it != types.end() && it->second->has_tensor_type() &&
           it->second->tensor_type().has_shape();
  };
  for (const onnx::NodeProto& n : g->node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (n.output_size() == 0 || n.output(0).empty()) continue;
    const std::string& op = n.op_type();
    const std::string& out = n.output(0);
    std::optional<Datum> result;
    if (op == "Constant") {
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) result = ConstDatum(a.t());
        if (a.name() == "value_int") result = Datum{true, {{a.i(), {}}}};
        if (a.name() == "value_ints") {
          Datum d;
          for (int64_t x : a.ints()) d.e.push_back({x, {}});
          result = d;
        }
      }
    } else if (op == "Shape" && n.input_size() == 1) {
      // ONNX's Shape propagator: the input's dims, symbolic ones as their names (opset-15
      // start/end clamped as the operator does).
      if (auto d = dims_of(n.input(0))) {
        const int64_t rank = static_cast<int64_t>(d->size());
        int64_t start = IntAttr(n, "start", 0), end = IntAttr(n, "end", rank);
        if (start < 0) start += rank;
        if (end < 0) end += rank;
        start = std::clamp<int64_t>(start, 0, rank);
        end = std::clamp<int64_t>(end, start, rank);
        result = Datum{false, std::vector<Elem>(d->begin() + start, d->begin() + end)};
      }
    } else if (op == "Size" && n.input_size() == 1) {
      // size_op_data_propagation.cc: the product when every dim is known.
      if (auto d = dims_of(n.input(0))) {
        int64_t p = 1;
        bool ok = true;
        for (const Elem& x : *d) ok = ok && x.known() && !__builtin_mul_overflow(p, *x.value, &p);
        if (ok) result = Datum{true, {{p, {}}}};
      }
    } else if (op == "Cast") {
      if (const Datum* d = datum(n, 0)) result = *d;
    } else if (op == "Gather" && IntAttr(n, "axis", 0) == 0 && n.input_size() == 2) {
      const Datum* d = datum(n, 0);
      const Datum* idx = datum(n, 1);
      if (d && !d->scalar && idx && idx->all_known()) {
        const int64_t size = static_cast<int64_t>(d->e.size());
        Datum r;
        r.scalar = idx->scalar;
        bool ok = true;
        for (const Elem& i : idx->e) {
          int64_t k = *i.value < 0 ? *i.value + size : *i.value;
          ok = ok && k >= 0 && k < size;
          if (ok) r.e.push_back(d->e[k]);
        }
        // The scalar channel holds known integers only (gather_op_data_propagation.cc).
        if (ok && r.scalar && !r.e[0].known()) ok = false;
        if (ok) result = std::move(r);
      }
    } else if (op == "Unsqueeze") {
      // unsqueeze_op_data_propagation.cc: a scalar v becomes [v].
      if (const Datum* d = datum(n, 0); d && d->scalar) result = Datum{false, d->e};
    } else if (op == "Squeeze") {
      // squeeze_op_data_propagation.cc: a known one-element list becomes a scalar.
      if (const Datum* d = datum(n, 0); d && !d->scalar && d->e.size() == 1 && d->e[0].known()) {
        result = Datum{true, d->e};
      }
    } else if (op == "Concat" && n.input_size() > 0) {
      // ONNX's Concat propagator: every input must carry values (its elements may be unknown).
      Datum r;
      bool ok = true;
      for (int i = 0; i < n.input_size() && ok; ++i) {
        const Datum* d = datum(n, i);
        ok = d != nullptr && !d->scalar;
        if (ok) r.e.insert(r.e.end(), d->e.begin(), d->e.end());
      }
      if (ok) result = std::move(r);
    } else if (op == "Slice" && n.input_size() >= 3) {
      // ONNX's Slice propagator: a 1-D value sliced with constant starts/ends/axes/steps.
      const Datum* d = datum(n, 0);
      auto starts = known_values(n, 1), ends = known_values(n, 2);
      std::optional<std::vector<int64_t>> axes, steps;
      if (n.input_size() > 3 && !n.input(3).empty()) axes = known_values(n, 3);
      if (n.input_size() > 4 && !n.input(4).empty()) steps = known_values(n, 4);
      const bool inputs_ok = (n.input_size() <= 3 || n.input(3).empty() || axes) &&
                             (n.input_size() <= 4 || n.input(4).empty() || steps);
      if (d && !d->scalar && starts && ends && inputs_ok && starts->size() == 1 &&
          ends->size() == 1 && (!axes || (axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1))) &&
          (!steps || (steps->size() == 1 && (*steps)[0] != 0))) {
        const int64_t size = static_cast<int64_t>(d->e.size());
        const int64_t step = steps ? (*steps)[0] : 1;
        int64_t s = (*starts)[0], e = (*ends)[0];
        if (s < 0) s += size;
        if (e < 0) e += size;
        Datum r;
        if (step > 0) {
          s = std::clamp<int64_t>(s, 0, size);
          e = std::clamp<int64_t>(e, 0, size);
          for (int64_t i = s; i < e; i += step) r.e.push_back(d->e[i]);
        } else {
          s = std::clamp<int64_t>(s, 0, size - 1);
          e = std::clamp<int64_t>(e, -1, size - 1);
          for (int64_t i = s; i > e; i += step) r.e.push_back(d->e[i]);
        }
        result = std::move(r);
      }
    } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && n.input_size() == 2) {
      const Datum* a = datum(n, 0);
      const Datum* b = datum(n, 1);
      auto apply = [&](int64_t x, int64_t y) -> std::optional<int64_t> {
        if (op == "Add") return x + y;
        if (op == "Sub") return x - y;
        if (op == "Mul") return x * y;
        if (y == 0) return std::nullopt;
        return x / y;  // C++ integer division, as div_op_data_propagation.cc
      };
      if (a && b && a->scalar && b->scalar) {
        // The custom Add/Sub/Mul/Div propagation: two known scalars.
        if (auto v = apply(*a->e[0].value, *b->e[0].value)) result = Datum{true, {{*v, {}}}};
      } else if (a && b && !a->scalar && !b->scalar && op != "Div" &&
                 (a->e.size() == b->e.size() || a->e.size() == 1 || b->e.size() == 1)) {
        // ONNX's MathOpDataPropagator: elementwise over lists, one-element broadcast; an element
        // with an unknown side is unknown.
        const size_t len = std::max(a->e.size(), b->e.size());
        Datum r;
        for (size_t i = 0; i < len; ++i) {
          const Elem& x = a->e[a->e.size() == 1 ? 0 : i];
          const Elem& y = b->e[b->e.size() == 1 ? 0 : i];
          Elem z;
          if (x.known() && y.known()) z.value = apply(*x.value, *y.value);
          r.e.push_back(z);
        }
        result = std::move(r);
      }
    } else if (op == "Reshape" && n.input_size() == 2 && reshape_reads_propagated) {
      // The output has a rank already (ONNX inferred it from a constant target): nothing new.
      std::optional<std::vector<Elem>> dims;
      if (!has_rank(out)) {
        const Datum* t = datum(n, 1);
        const auto x = dims_of(n.input(0));
        if (t && !t->scalar) {
          dims = t->e;
          const bool allowzero = IntAttr(n, "allowzero", 0) != 0;
          int infer = -1;
          int64_t known = 1;
          bool others_known = true;
          for (size_t i = 0; i < dims->size(); ++i) {
            Elem& d = (*dims)[i];
            if (d.known() && *d.value == 0 && !allowzero) {
              d = x && i < x->size() ? (*x)[i] : Elem{};
            } else if (d.known() && *d.value == -1) {
              infer = static_cast<int>(i);
              d = Elem{};
              continue;
            }
            if (d.known() && *d.value >= 0) {
              others_known = others_known && !__builtin_mul_overflow(known, *d.value, &known);
            } else {
              others_known = false;
            }
          }
          if (infer >= 0 && others_known && known > 0 && x) {
            int64_t total = 1;
            bool all = true;
            for (const Elem& e : *x) all = all && e.known() && !__builtin_mul_overflow(total, *e.value, &total);
            if (all && total % known == 0) (*dims)[infer].value = total / known;
          }
        } else if (auto td = dims_of(n.input(1)); td && td->size() == 1 && (*td)[0].known() &&
                                                    *(*td)[0].value >= 0 && *(*td)[0].value <= 64) {
          dims = std::vector<Elem>(static_cast<size_t>(*(*td)[0].value));
        }
      }
      if (dims) write(out, n.input(0), *dims);
    }
    if (op == "Slice" && slice_keeps_rank && n.input_size() >= 3 && !has_rank(out)) {
      // ORT's ONNX infers Slice-13's output rank whatever starts/ends are (ONNX 1.12 gives
      // nothing when they are not constant); with every starts/ends/axes/steps value known
      // (propagated values reach ONNX as data) the sliced dims too.
      if (auto x = dims_of(n.input(0))) {
        std::vector<Elem> d(x->size());
        auto starts = known_values(n, 1), ends = known_values(n, 2);
        std::optional<std::vector<int64_t>> axes, steps;
        const bool has_axes = n.input_size() > 3 && !n.input(3).empty();
        const bool has_steps = n.input_size() > 4 && !n.input(4).empty();
        if (has_axes) axes = known_values(n, 3);
        if (has_steps) steps = known_values(n, 4);
        const int64_t rank = static_cast<int64_t>(x->size());
        if (starts && ends && (!has_axes || axes) && (!has_steps || steps) &&
            starts->size() == ends->size() && (!axes || axes->size() == starts->size()) &&
            (!steps || steps->size() == starts->size())) {
          d = *x;
          for (size_t i = 0; i < starts->size(); ++i) {
            int64_t axis = axes ? (*axes)[i] : static_cast<int64_t>(i);
            if (axis < 0) axis += rank;
            if (axis < 0 || axis >= rank) {
              d.assign(x->size(), Elem{});
              break;
            }
            const int64_t step = steps ? (*steps)[i] : 1;
            const Elem in = (*x)[axis];
            d[axis] = Elem{};
            if (!in.known() || step == 0) continue;
            const int64_t size = *in.value;
            int64_t b = (*starts)[i], e = (*ends)[i];
            if (b < 0) b += size;
            if (e < 0) e += size;
            if (step > 0) {
              b = std::clamp<int64_t>(b, 0, size);
              e = std::clamp<int64_t>(e, 0, size);
              d[axis].value = e > b ? (e - b + step - 1) / step : 0;
            } else {
              b = std::clamp<int64_t>(b, 0, size - 1);
              e = std::clamp<int64_t>(e, -1, size - 1);
              d[axis].value = b > e ? (b - e + (-step) - 1) / (-step) : 0;
            }
          }
        }
        write(out, n.input(0), d);
      }
    }
    if (result) data[out] = std::move(*result);
  }
  return written;
}

}  // namespace hase::graph
