#include "hase/graph/onnx_loader.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <nlohmann/json.hpp>

#include "hase/base/isolated_call.h"
#include "hase/graph/attribute_proto.h"
#include "hase/graph/ort_shape_view.h"
#include "hase/graph/shape_inference.h"
#include "hase/graph/shape_values.h"
#include "hase/graph/validate_ops.h"

namespace hase::graph {
namespace {

// Runs shape inference (shape_inference.h; in this process: the caller is the loader's
// isolated inference phase) and words its errors.
Status RunInference(onnx::ModelProto* model, const onnx::ShapeInferenceOptions& opts,
                    const std::string& path) {
  Status st = InferModelShapesUnisolated(model, opts);
  if (st.ok()) return st;
  // ONNX lists one error per node; after the first, most are its consequences (a node whose
  // input type is now null). Keep the first, count the rest.
  const std::string what = "ONNX shape inference failed";
  const std::string& msg = st.message();
  const size_t nl = msg.find('\n');
  if (nl == std::string::npos || nl + 1 >= msg.size()) {
    return Status::InvalidArgument(what + ": " + msg, path);
  }
  const size_t rest = std::count(msg.begin() + nl + 1, msg.end(), '\n') + (msg.back() != '\n');
  return Status::InvalidArgument(
      what + ": " + msg.substr(0, nl) + " (+" + std::to_string(rest) + " follow-on errors)", path);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) { mant <<= 1; --exp; }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
std::vector<double> FromRaw(const std::string& raw) {
  std::vector<double> out(raw.size() / sizeof(T));
  for (size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
  return out;
}

// Values of a tensor whose data is in the proto; nullopt when absent (stripped, external) or of
// a type we do not read.
std::optional<std::vector<double>> TensorValues(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n > kMaxConstantElements) return std::nullopt;
  std::vector<double> v;
  using TP = onnx::TensorProto;
  if (t.has_raw_data()) {
    const std::string& r = t.raw_data();
    switch (t.data_type()) {
      case TP::FLOAT: v = FromRaw<float>(r); break;
      case TP::DOUBLE: v = FromRaw<double>(r); break;
      case TP::INT64: v = FromRaw<int64_t>(r); break;
      case TP::INT32: v = FromRaw<int32_t>(r); break;
      case TP::INT16: v = FromRaw<int16_t>(r); break;
      case TP::INT8: v = FromRaw<int8_t>(r); break;
      case TP::UINT8: case TP::BOOL: v = FromRaw<uint8_t>(r); break;
      case TP::UINT16: v = FromRaw<uint16_t>(r); break;
      case TP::UINT32: v = FromRaw<uint32_t>(r); break;
      case TP::UINT64: v = FromRaw<uint64_t>(r); break;
      case TP::FLOAT16: {
        for (double h : FromRaw<uint16_t>(r)) v.push_back(HalfToFloat(static_cast<uint16_t>(h)));
        break;
      }
      default: return std::nullopt;
    }
  } else if (t.float_data_size() > 0) {
    v.assign(t.float_data().begin(), t.float_data().end());
  } else if (t.int64_data_size() > 0) {
    v.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (t.double_data_size() > 0) {
    v.assign(t.double_data().begin(), t.double_data().end());
  } else if (t.uint64_data_size() > 0) {
    v.assign(t.uint64_data().begin(), t.uint64_data().end());
  } else if (t.int32_data_size() > 0) {
    if (t.data_type() == TP::FLOAT16) {
      for (int32_t h : t.int32_data()) v.push_back(HalfToFloat(static_cast<uint16_t>(h)));
    } else {
      v.assign(t.int32_data().begin(), t.int32_data().end());
    }
  } else if (n != 0) {
    return std::nullopt;
  }
  if (static_cast<int64_t>(v.size()) != n) return std::nullopt;
  return v;
}

Value ValueFromTensor(const std::string& name, const onnx::TensorProto& t) {
  Value v;
  v.name = name;
  v.elem_type = t.data_type();
  v.has_shape = true;
  v.shape.assign(t.dims().begin(), t.dims().end());
  v.is_initializer = true;
  v.constant = TensorValues(t);
  return v;
}

Value ValueFromInfo(const onnx::ValueInfoProto& vi) {
  Value v;
  v.name = vi.name();
  if (!vi.type().has_tensor_type()) return v;
  const auto& tt = vi.type().tensor_type();
  v.elem_type = tt.elem_type();
  if (tt.has_shape()) {
    v.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      v.shape.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
    }
  }
  return v;
}

// Constant node → initializer value (ONNX Runtime does the same when it loads a graph).
std::optional<Value> ValueFromConstant(const onnx::NodeProto& n) {
  if (n.output_size() != 1) return std::nullopt;
  for (const auto& a : n.attribute()) {
    Value v;
    v.name = n.output(0);
    v.is_initializer = true;
    v.has_shape = true;
    if (a.name() == "value" && a.has_t()) return ValueFromTensor(n.output(0), a.t());
    if (a.name() == "value_float") { v.elem_type = 1; v.constant = std::vector<double>{a.f()}; return v; }
    if (a.name() == "value_int") { v.elem_type = 7; v.constant = std::vector<double>{double(a.i())}; return v; }
    if (a.name() == "value_floats") {
      v.elem_type = 1; v.shape = {a.floats_size()};
      v.constant = std::vector<double>(a.floats().begin(), a.floats().end());
      return v;
    }
    if (a.name() == "value_ints") {
      v.elem_type = 7; v.shape = {a.ints_size()};
      v.constant = std::vector<double>(a.ints().begin(), a.ints().end());
      return v;
    }
  }
  return std::nullopt;
}

std::string DomainOf(const onnx::NodeProto& n) {
  return n.domain() == "ai.onnx" ? std::string() : n.domain();
}

bool HasSchema(const onnx::NodeProto& n, const std::unordered_map<std::string, int>& opsets) {
  const std::string d = DomainOf(n);
  auto it = opsets.find(d);
  const int version = it == opsets.end() ? 1 : it->second;
  return onnx::OpSchemaRegistry::Schema(n.op_type(), version, d) != nullptr;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

// The batch dim of a graph input: the first symbolic dim whose name contains "batch" (any
// case), as torch.onnx.export's dynamic_axes name it; else dim 0. A sequence-first RNN export
// (nn.LSTM without batch_first) has [seq, batch, features], and binding --batch to dim 0 would
// price a sequence of N steps instead of N samples.
int BatchAxis(const onnx::TensorShapeProto& shape) {
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    if (d.has_dim_value() || !d.has_dim_param()) continue;
    std::string name = d.dim_param();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name.find("batch") != std::string::npos) return i;
  }
  return 0;
}

// "dims after the batch" / "dims other than the batch (dim 1, …)", for hints.
std::string OtherDims(int b) {
  return b == 0 ? "dims after the batch"
                : "dims other than the batch (dim " + std::to_string(b) + ", which the model names the batch)";
}

// Binds graph inputs' dims per `options`; fails when a dim stays dynamic.
Status BindInputs(onnx::GraphProto* g, const LoadOptions& options,
                  std::vector<std::string>* warnings) {
  std::unordered_set<std::string> inits;
  for (const auto& t : g->initializer()) inits.insert(t.name());
  bool first = true;
  for (auto& in : *g->mutable_input()) {
    if (inits.count(in.name())) continue;
    const bool is_first = first;
    first = false;
    if (!in.type().has_tensor_type()) {
      return Status::Unsupported("graph input '" + in.name() + "' is not a tensor");
    }
    auto* tt = in.mutable_type()->mutable_tensor_type();
    if (!tt->has_shape() && !(is_first && !options.input_shape.empty())) {
      return Status::InvalidArgument("graph input '" + in.name() + "' has no shape (unknown rank)",
                                     "", "pass its full shape with --input-shape, e.g. 1x3x224x224");
    }
    auto* shape = tt->mutable_shape();
    const int rank = shape->dim_size();
    std::vector<std::optional<int64_t>> want(rank);
    const int b = BatchAxis(*shape);
    // The batch binds the symbolic batch dim of every input (dim 0, or the dim the file names
    // "batch", as a sequence-first RNN export has [seq, batch, features]), but overrides a
    // fixed dim 0 only on the first input (other inputs' fixed dim 0 is rarely a batch: shapes,
    // masks, scales).
    if (options.batch > 0 && rank > 0 &&
        (b != 0 || is_first || !shape->dim(0).has_dim_value() || shape->dim(0).dim_value() <= 0)) {
      want[b] = options.batch;
    }
    if (is_first && !options.input_shape.empty()) {
      const auto& s = options.input_shape;
      if (rank == 0) {
        for (size_t i = 0; i < s.size(); ++i) shape->add_dim();
        want.assign(s.begin(), s.end());
      } else if (static_cast<int>(s.size()) == rank) {
        want.assign(s.begin(), s.end());
      } else if (static_cast<int>(s.size()) == rank - 1) {
        for (int i = 0, k = 0; i < rank; ++i) {
          if (i != b) want[i] = s[k++];
        }
      } else {
        return Status::InvalidArgument(
            "--input-shape " + DimsText(s) + " has " + std::to_string(s.size()) +
                " dims but graph input '" + in.name() + "' has rank " + std::to_string(rank),
            "", "give the " + std::to_string(rank - 1) + " " + OtherDims(b) + ", e.g. 3x224x224");
      }
    }
    for (int i = 0; i < shape->dim_size(); ++i) {
      auto* d = shape->mutable_dim(i);
      if (i < static_cast<int>(want.size()) && want[i]) {
        if (*want[i] <= 0) {
          return Status::InvalidArgument("dims must be positive, got " + std::to_string(*want[i]),
                                         "graph input '" + in.name() + "'");
        }
        if (d->has_dim_value() && d->dim_value() != *want[i]) {
          warnings->push_back("graph input '" + in.name() + "' dim " + std::to_string(i) +
                              " is fixed to " + std::to_string(d->dim_value()) +
                              " in the model; overridden with " + std::to_string(*want[i]));
        }
        d->clear_dim_param();
        d->set_dim_value(*want[i]);
      }
      if (!d->has_dim_value() || d->dim_value() <= 0) {
        const std::string sym = d->has_dim_param() ? " ('" + d->dim_param() + "')" : "";
        return Status::InvalidArgument(
            "dynamic dim " + std::to_string(i) + sym + " of graph input '" + in.name() +
                "' is not bound",
            "", i == b ? "pass --batch N"
                       : "pass --input-shape with the " + OtherDims(b) + ", e.g. 3x640x640");
      }
    }
  }
  return Status::OK();
}

bool HasKnownShape(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return false;
  for (const auto& d : vi.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return false;
  }
  return true;
}

// ONNX's shape inference divides by strides and dilations and sizes windows from kernel_shape
// without checking them: a Conv with strides = [0] raised SIGFPE inside libonnx. Checked here
// first, for the window ops of ai.onnx (and in every subgraph).
Status CheckWindowAttributes(const onnx::GraphProto& g, const std::string& path) {
  static const std::set<std::string> kWindowOps = {"Conv",        "ConvTranspose", "ConvInteger",
                                                   "QLinearConv", "MaxPool",       "AveragePool",
                                                   "LpPool",      "MaxUnpool"};
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) HASE_RETURN_IF_ERROR(CheckWindowAttributes(a.g(), path));
      for (const auto& sub : a.graphs()) HASE_RETURN_IF_ERROR(CheckWindowAttributes(sub, path));
    }
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (!kWindowOps.count(n.op_type())) continue;
    const std::string where = path + ": node '" + (n.name().empty() ? "#" + std::to_string(i) : n.name()) +
                              "' (" + n.op_type() + ")";
    for (const auto& a : n.attribute()) {
      const bool positive = a.name() == "strides" || a.name() == "dilations" ||
                            a.name() == "kernel_shape";
      const bool non_negative = a.name() == "pads" || a.name() == "output_padding";
      if (!positive && !non_negative) continue;
      for (int64_t v : a.ints()) {
        if ((positive && v < 1) || (non_negative && v < 0)) {
          return Status::InvalidArgument(
              "attribute '" + a.name() + "' has " + std::to_string(v) + "; " + a.name() +
                  (positive ? " must be >= 1" : " must be >= 0"),
              where, "the model is invalid (ONNX operator spec); re-export it");
        }
      }
    }
  }
  return Status::OK();
}

// Every attribute an op's schema marks required must be there, in every subgraph too: ONNX
// 1.12's inference reads some without looking (Scan without 'body' was SIGSEGV), and ONNX
// Runtime refuses such a node when it loads the graph.
Status CheckRequiredAttributes(const onnx::GraphProto& g,
                               const std::unordered_map<std::string, int>& opsets,
                               const std::string& path) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    std::set<std::string> present;
    for (const auto& a : n.attribute()) {
      present.insert(a.name());
      if (a.has_g()) HASE_RETURN_IF_ERROR(CheckRequiredAttributes(a.g(), opsets, path));
      for (const auto& sub : a.graphs()) {
        HASE_RETURN_IF_ERROR(CheckRequiredAttributes(sub, opsets, path));
      }
    }
    const std::string d = DomainOf(n);
    auto it = opsets.find(d);
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(n.op_type(), it == opsets.end() ? 1 : it->second, d);
    if (schema == nullptr) continue;  // unknown ops get a warning later
    for (const auto& [name, attr] : schema->attributes()) {
      if (!attr.required || present.count(name)) continue;
      return Status::InvalidArgument(
          "required attribute '" + name + "' of " + n.op_type() + "-" +
              std::to_string(schema->SinceVersion()) + " is missing",
          path + ": node '" + (n.name().empty() ? "#" + std::to_string(i) : n.name()) + "' (" +
              n.op_type() + ")",
          "the model is invalid (ONNX operator spec); re-export it");
    }
  }
  return Status::OK();
}

// Every tensor's size in bytes must fit in int64 (the cost model multiplies dims × dtype size
// and sums them over a model): a dim near 2^40 or a product of large dims is refused with the
// tensor's name instead of wrapping into garbage FLOPs and bytes.
Status CheckTensorSizes(const Graph& graph, const std::string& path) {
  constexpr int64_t kMaxBytes = int64_t{1} << 56;  // 64 PiB: no GPU tensor comes near
  auto check = [&](const std::string& name) -> Status {
    const Value* v = name.empty() ? nullptr : graph.FindValue(name);
    if (v == nullptr || !v->has_shape) return Status::OK();
    int64_t bytes = 16;  // the widest dtype the cost model prices (complex128)
    for (int64_t d : v->shape) {
      if (d <= 0) {
        if (d == 0) bytes = 0;
        continue;  // empty, or symbolic / unknown
      }
      if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxBytes) {
        std::string dims;
        for (int64_t x : v->shape) dims += (dims.empty() ? "" : "x") + std::to_string(x);
        return Status::InvalidArgument("tensor '" + name + "' of shape [" + dims +
                                           "] is too large (more than 2^56 bytes)",
                                       path, "use a smaller --batch / --input-shape");
      }
    }
    return Status::OK();
  };
  for (const std::string& in : graph.inputs()) HASE_RETURN_IF_ERROR(check(in));
  for (const Node& n : graph.nodes()) {
    for (const std::string& in : n.inputs) HASE_RETURN_IF_ERROR(check(in));
    for (const std::string& o : n.outputs) HASE_RETURN_IF_ERROR(check(o));
  }
  return Status::OK();
}

// Runs shape inference; for ops without a schema, guesses output 0 = input 0 and re-runs.
Status InferAll(onnx::ModelProto* model, const std::string& path,
                std::vector<std::string>* warnings, std::vector<std::string>* unknown_nodes) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& o : model->opset_import()) {
    opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = static_cast<int>(o.version());
  }
  std::set<int> unknown;
  const auto& nodes = model->graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    if (!HasSchema(nodes[i], opsets)) {
      unknown.insert(i);
      const std::string nm = nodes[i].name().empty() ? "#" + std::to_string(i) : nodes[i].name();
      unknown_nodes->push_back(nm);
      warnings->push_back("unknown op '" + nodes[i].op_type() + "'" +
                          (nodes[i].domain().empty() ? "" : " (domain '" + nodes[i].domain() + "')") +
                          " at node '" + nm +
                          "': output shape taken from its first input, cost estimated "
                          "conservatively (all inputs read, outputs written, 1 FLOP per element)");
    }
  }
  onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/1,
                                   /*enable_data_propagation=*/true);
  std::set<int> guessed;
  for (size_t pass = 0; pass <= unknown.size(); ++pass) {
    HASE_RETURN_IF_ERROR(RunInference(model, opts, path));
    if (unknown.size() == guessed.size()) break;
    std::unordered_map<std::string, const onnx::ValueInfoProto*> known;
    const auto& g = model->graph();
    for (const auto& vi : g.input()) known[vi.name()] = &vi;
    for (const auto& vi : g.value_info()) known[vi.name()] = &vi;
    for (const auto& vi : g.output()) known[vi.name()] = &vi;
    bool progress = false;
    for (int i : unknown) {
      if (guessed.count(i)) continue;
      const auto& n = g.node(i);
      if (n.input_size() == 0 || n.output_size() == 0) { guessed.insert(i); continue; }
      auto in = known.find(n.input(0));
      if (in == known.end() || !HasKnownShape(*in->second)) continue;
      auto out = known.find(n.output(0));
      if (out == known.end() || !HasKnownShape(*out->second)) {
        onnx::ValueInfoProto vi = *in->second;
        vi.set_name(n.output(0));
        bool replaced = false;
        for (auto& o : *model->mutable_graph()->mutable_output()) {
          if (o.name() == vi.name()) { o = vi; replaced = true; }
        }
        if (!replaced) *model->mutable_graph()->add_value_info() = vi;
      }
      guessed.insert(i);
      progress = true;
    }
    if (!progress) break;
  }
  return Status::OK();
}

// What the inference phase hands back.
struct InferredModel {
  onnx::ModelProto model;               // dims bound, shapes inferred
  OrtShapeView ort_view;                // empty when !options.ort_view
  std::vector<std::string> warnings;    // the caller's, then the phase's own
  std::vector<std::string> unknown_nodes;
};

// The loader's inference phase, in this process: ORT's view of the unbound file, dims bound,
// shape inference, shape arithmetic resolved round by round.
Result<InferredModel> InferencePhase(onnx::ModelProto model, const std::string& path,
                                     const LoadOptions& options,
                                     std::vector<std::string> warnings) {
  InferredModel out;
  onnx::GraphProto* g = model.mutable_graph();
  // What ONNX Runtime sees of the file, taken before any dim is bound (ort_shape_view.h).
  out.ort_view = options.ort_view ? ComputeOrtShapeView(model) : OrtShapeView{};
  const size_t caller_warnings = warnings.size();
  {
    Status s = BindInputs(g, options, &warnings);
    if (!s.ok()) return s.WithContext(path);
  }
  g->clear_value_info();
  for (auto& o : *g->mutable_output()) {
    if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  const bool overrode_fixed_dims = warnings.size() > caller_warnings;  // only BindInputs warned
  if (Status s = InferAll(&model, path, &warnings, &out.unknown_nodes); !s.ok()) {
    if (!overrode_fixed_dims) return s;
    return Status::InvalidArgument(s.message(), s.where(),
                                   "the model fixes its input dims and may not support the ones "
                                   "given; " + warnings[caller_warnings]);
  }
  // Dims bound: resolve Reshape targets computed from shapes (shape_values.h) and carry them on.
  // One round per dependent step (a Reshape whose dims feed the next Shape): ViT-B/16 needs 13.
  onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/1,
                                   /*enable_data_propagation=*/true);
  for (int round = 0; round < 64 && ResolveShapeComputedDims(&model) > 0; ++round) {
    HASE_RETURN_IF_ERROR(RunInference(&model, opts, path));
  }
  // Then data-dependent sizes (NonZero, NonMaxSuppression) at their bound, with a warning each,
  // and what follows them resolved again.
  for (int step = 0; step < 256; ++step) {
    std::vector<std::string> notes;
    std::unordered_map<std::string, std::vector<int64_t>> values;
    if (ResolveShapeComputedDims(&model, &values) > 0) {
      HASE_RETURN_IF_ERROR(RunInference(&model, opts, path));
      continue;
    }
    if (BoundDataDependentDims(&model, values, &notes) == 0) break;
    for (std::string& n : notes) warnings.push_back(std::move(n));
    HASE_RETURN_IF_ERROR(RunInference(&model, opts, path));
    for (int round = 0; round < 64 && ResolveShapeComputedDims(&model) > 0; ++round) {
      HASE_RETURN_IF_ERROR(RunInference(&model, opts, path));
    }
  }

  out.model = std::move(model);
  out.warnings = std::move(warnings);
  return out;
}

// The wire form of an InferredModel, child → parent (CBOR; the model as protobuf bytes).
std::string Pack(const InferredModel& m) {
  const std::string bytes = m.model.SerializeAsString();
  nlohmann::json j;
  j["model"] = nlohmann::json::binary(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  j["dims"] = m.ort_view.dims;
  j["values"] = m.ort_view.values;
  j["float_values"] = m.ort_view.float_values;
  j["warnings"] = m.warnings;
  j["unknown"] = m.unknown_nodes;
  const std::vector<uint8_t> cbor = nlohmann::json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

Result<InferredModel> Unpack(const std::string& wire) {
  InferredModel m;
  try {
    const nlohmann::json j = nlohmann::json::from_cbor(wire);
    const auto& bytes = j.at("model").get_binary();
    if (!m.model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return Status::Internal("the inferred model did not parse back");
    }
    j.at("dims").get_to(m.ort_view.dims);
    j.at("values").get_to(m.ort_view.values);
    j.at("float_values").get_to(m.ort_view.float_values);
    j.at("warnings").get_to(m.warnings);
    j.at("unknown").get_to(m.unknown_nodes);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("the inference phase's reply is unreadable: ") + e.what());
  }
  return m;
}

// InferencePhase in a child process (shape_inference.h, base/isolated_call.h).
Result<InferredModel> InferenceIsolated(onnx::ModelProto model, const std::string& path,
                                        const LoadOptions& options,
                                        std::vector<std::string> warnings) {
  // Schemas built here, not in each child: once per process, and never half-built by another
  // thread at the moment of the fork (its static's guard would be held forever in the child).
  (void)NullSafeSchemaRegistry();
  IsolatedCallOptions io;
  io.what = "ONNX shape inference (libonnx)";
  io.timeout_s = kShapeInferenceTimeoutS;
  Result<std::string> wire = RunIsolated(
      [&]() -> Result<std::string> {
        HASE_ASSIGN_OR_RETURN(InferredModel m,
                              InferencePhase(std::move(model), path, options, std::move(warnings)));
        return Pack(m);
      },
      io);
  if (!wire.ok()) {
    const Status& st = wire.status();
    if (!st.IsInternal()) return st;  // the phase's own error, worded there
    return Status::Internal(st.message(), path,
                            st.hint().empty()
                                ? "libonnx cannot infer this model: it is malformed or hits a bug "
                                  "in libonnx; check it with onnx.checker.check_model(path, "
                                  "full_check=True) and re-export it"
                                : st.hint());
  }
  return Unpack(*wire);
}

}  // namespace

Result<std::vector<int64_t>> ParseShape(const std::string& text) {
  std::vector<int64_t> dims;
  std::string cur;
  auto flush = [&]() -> bool {
    if (cur.empty()) return false;
    size_t used = 0;
    long long v = 0;
    try { v = std::stoll(cur, &used); } catch (...) { return false; }
    if (used != cur.size() || v <= 0) return false;
    dims.push_back(v);
    cur.clear();
    return true;
  };
  for (char c : text) {
    if (c == 'x' || c == 'X' || c == ',') {
      if (!flush()) break;
    } else {
      cur.push_back(c);
    }
  }
  if (!flush() || dims.empty()) {
    return Status::InvalidArgument("bad shape '" + text + "'", "--input-shape",
                                   "write positive dims separated by 'x', e.g. 3x640x640");
  }
  return dims;
}

Result<LoadedGraph> LoadOnnxGraph(const std::string& path, const LoadOptions& options) {
  LoadedGraph out;
  HASE_ASSIGN_OR_RETURN(onnx::ModelProto model, ReadModelProto(path, &out.read_stats));

  int64_t opset = 0;
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  }
  if (opset == 0) {
    return Status::Unsupported("the model imports no ai.onnx opset", path,
                               "re-export it with an ai.onnx opset between 7 and 17");
  }
  if (opset < kMinOpset || opset > kMaxOpset) {
    return Status::Unsupported("ai.onnx opset " + std::to_string(opset) + " is outside 7–17",
                               path, "convert the model with onnx.version_converter to opset 13–17");
  }

  onnx::GraphProto* g = model.mutable_graph();
  // Whether the file leaves the batch open (dim 0 of the first data input symbolic or unset), as
  // ONNX Runtime sees it when it optimises the graph (Graph::batch_symbolic).
  bool batch_symbolic = false;
  {
    std::unordered_set<std::string> inits;
    for (const auto& t : g->initializer()) inits.insert(t.name());
    for (const auto& in : g->input()) {
      if (inits.count(in.name())) continue;
      const auto& tt = in.type().tensor_type();
      batch_symbolic = tt.has_shape() && tt.shape().dim_size() > 0 &&
                       (!tt.shape().dim(0).has_dim_value() || tt.shape().dim(0).dim_value() <= 0);
      break;
    }
  }
  // Unreadable external data: one warning per data file, except for models hase's own export
  // wrote weight-free by design (models/*.onnx: producer "hase tools/export_zoo.py …", data file
  // never written).
  {
    const bool weight_free_zoo = model.producer_name().rfind("hase tools/export_zoo.py", 0) == 0;
    bool only_missing = true;
    for (const auto& i : out.read_stats.external_data_issues) {
      only_missing = only_missing && i.kind == ExternalDataIssue::kMissingFile;
    }
    if (!(weight_free_zoo && only_missing)) {
      for (auto& w : ExternalDataWarnings(out.read_stats, path)) out.warnings.push_back(std::move(w));
    }
  }
  // Window attributes first: ONNX's inference divides by strides (a zero one is SIGFPE).
  HASE_RETURN_IF_ERROR(CheckWindowAttributes(*g, path));
  {
    std::unordered_map<std::string, int> opsets;
    for (const auto& o : model.opset_import()) {
      opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = static_cast<int>(o.version());
    }
    HASE_RETURN_IF_ERROR(CheckRequiredAttributes(*g, opsets, path));
  }
  // Shape inference, in one child process (InferencePhase): a crash or hang in libonnx is a
  // Status, not the end of `hase` or of the daemon that loads the model.
  Result<InferredModel> inferred_or =
      InferenceIsolated(std::move(model), path, options, std::move(out.warnings));
  if (!inferred_or.ok()) {
    // ONNX's "Cannot parse data from external tensors. Please load external data into raw data
    // for tensor: NAME": a value it needs is in external data hase could not read.
    const std::string& msg = inferred_or.status().message();
    constexpr std::string_view kMarker = "load external data into raw data for tensor: ";
    if (const size_t at = msg.find(kMarker); at != std::string::npos) {
      std::string tensor = msg.substr(at + kMarker.size());
      tensor = tensor.substr(0, tensor.find_first_of("\n "));
      for (const auto& i : out.read_stats.external_data_issues) {
        if (i.tensor != tensor) continue;
        return Status::InvalidArgument(
            "shape inference needs the values of initializer '" + tensor +
                "', but its external data cannot be read: " + i.detail,
            path, "put the model's external data file next to it (or re-save it with "
                  "onnx.save_model(..., save_as_external_data=True))");
      }
    }
    return inferred_or.status();
  }
  InferredModel inferred = std::move(inferred_or).value();
  model = std::move(inferred.model);
  g = model.mutable_graph();
  out.warnings = std::move(inferred.warnings);
  const OrtShapeView& ort_view = inferred.ort_view;
  std::vector<std::string>& unknown_nodes = inferred.unknown_nodes;

  // Build the Graph.
  Graph& graph = out.graph;
  graph.set_name(g->name());
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) {
    opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  }
  graph.set_opset_imports(opsets);
  graph.set_batch_symbolic(batch_symbolic);
  std::unordered_set<std::string> init_names;
  for (const auto& vi : g->value_info()) graph.SetValue(ValueFromInfo(vi));
  for (const auto& vi : g->output()) graph.SetValue(ValueFromInfo(vi));
  for (const auto& vi : g->input()) graph.SetValue(ValueFromInfo(vi));
  for (const auto& t : g->initializer()) {
    graph.SetValue(ValueFromTensor(t.name(), t));
    init_names.insert(t.name());
  }
  std::vector<std::string> inputs, outputs;
  for (const auto& vi : g->input()) {
    if (!init_names.count(vi.name())) inputs.push_back(vi.name());
  }
  for (const auto& vi : g->output()) outputs.push_back(vi.name());
  graph.set_inputs(std::move(inputs));
  graph.set_outputs(std::move(outputs));

  std::unordered_set<std::string> used_names;
  for (int i = 0; i < g->node_size(); ++i) {
    const onnx::NodeProto& np = g->node(i);
    if (np.op_type() == "Constant" && DomainOf(np).empty()) {
      if (auto v = ValueFromConstant(np)) {
        if (const Value* inferred = graph.FindValue(v->name); inferred && inferred->has_shape) {
          v->shape = inferred->shape;
        }
        graph.SetValue(std::move(*v));
        continue;
      }
    }
    Node n;
    n.name = np.name();
    if (n.name.empty() || used_names.count(n.name)) n.name = np.op_type() + "_" + std::to_string(i);
    used_names.insert(n.name);
    n.op_type = np.op_type();
    n.domain = DomainOf(np);
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) n.attributes[a.name()] = AttributeFromProto(a);
    graph.AddNode(std::move(n));
  }
  graph.set_has_ort_view(!ort_view.dims.empty());
  for (const auto& [name, dims] : ort_view.dims) {
    const Value* v = graph.FindValue(name);
    if (v == nullptr) continue;
    Value with = *v;
    with.ort_shape = dims;
    if (auto it = ort_view.values.find(name); it != ort_view.values.end()) {
      with.ort_value = it->second;
    }
    if (auto it = ort_view.float_values.find(name); it != ort_view.float_values.end()) {
      with.ort_float_value = it->second;
    }
    graph.SetValue(std::move(with));
  }
  out.unknown_op_nodes = std::move(unknown_nodes);
  HASE_RETURN_IF_ERROR(CheckTensorSizes(graph, path));
  HASE_RETURN_IF_ERROR(ValidateOps(graph, path));

  if (options.require_shapes) {
    std::unordered_map<std::string, const ExternalDataIssue*> unreadable;
    for (const auto& i : out.read_stats.external_data_issues) unreadable.emplace(i.tensor, &i);
    for (const Node& n : graph.nodes()) {
      auto check = [&](const std::string& name) -> Status {
        if (name.empty()) return Status::OK();
        const Value* v = graph.FindValue(name);
        if (v != nullptr && v->shape_known()) return Status::OK();
        // The values this node's shape depends on are in external data that cannot be read.
        for (const auto& in : n.inputs) {
          auto it = unreadable.find(in);
          if (it == unreadable.end()) continue;
          return Status::InvalidArgument(
              "node '" + n.name + "' (" + n.op_type + ") needs the values of initializer '" + in +
                  "' to know the shape of '" + name + "', but its external data cannot be read: " +
                  it->second->detail,
              path, "put the model's external data file next to it (or re-save it with "
                    "onnx.save_model(..., save_as_external_data=True))");
        }
        return Status::InvalidArgument(
            "shape of tensor '" + name + "' is unknown after shape inference",
            path + ": node '" + n.name + "' (" + n.op_type + ")",
            "bind dynamic dims with --batch / --input-shape, or export the model with static "
            "shapes (e.g. onnxsim)");
      };
      for (const auto& in : n.inputs) HASE_RETURN_IF_ERROR(check(in));
      for (const auto& o : n.outputs) {
        if (!o.empty() && (graph.IsGraphOutput(o) || !graph.Consumers(o).empty())) {
          HASE_RETURN_IF_ERROR(check(o));
        }
      }
    }
  }
  return out;
}

}  // namespace hase::graph
