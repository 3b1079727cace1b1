#include "hase/kernels/cost_model.h"

#include <algorithm>
#include <map>
#include <set>

#include "hase/graph/shape_values.h"

namespace hase::kernels {
namespace {

// Per-element FLOP of elementwise ops (see cost_model.h).
const std::map<std::string, double>& ElementwiseCost() {
  static const std::map<std::string, double> k = {
      {"Add", 1}, {"Sub", 1}, {"Mul", 1}, {"Div", 1}, {"Relu", 1}, {"Abs", 1}, {"Neg", 1},
      {"Max", 1}, {"Min", 1}, {"Sum", 1}, {"Mean", 2}, {"Floor", 1}, {"Ceil", 1}, {"Round", 1},
      {"Sign", 1}, {"Reciprocal", 1}, {"Equal", 1}, {"Less", 1}, {"Greater", 1},
      {"LessOrEqual", 1}, {"GreaterOrEqual", 1}, {"And", 1}, {"Or", 1}, {"Xor", 1}, {"Not", 1},
      {"Where", 1}, {"Mod", 1}, {"Cast", 1}, {"PRelu", 2}, {"LeakyRelu", 2}, {"Clip", 2}, {"Sqrt", 1},
      {"Exp", 1}, {"Log", 1}, {"Pow", 1}, {"Erf", 1}, {"Sin", 1}, {"Cos", 1},
      {"HardSigmoid", 3}, {"HardSwish", 4}, {"Sigmoid", 4}, {"Tanh", 4}, {"Elu", 4},
      {"Selu", 5}, {"Softplus", 3}, {"Softsign", 3}, {"Mish", 7}, {"QuickGelu", 5},
      {"Gelu", 8}, {"FastGelu", 8}, {"BiasGelu", 9}, {"ThresholdedRelu", 1}, {"Celu", 4},
  };
  return k;
}

const std::set<std::string>& PoolingOps() {
  static const std::set<std::string> k = {
      "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool",
      "GlobalLpPool", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
      "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ArgMax", "ArgMin"};
  return k;
}

// Per-element FLOP of normalisations: BN after folding scale/shift is x·a + b (2); LayerNorm
// mean, variance, normalise, scale, shift (8); Softmax max, sub, exp, sum, div (5).
const std::map<std::string, double>& NormalizationCost() {
  static const std::map<std::string, double> k = {
      {"BatchNormalization", 2}, {"InstanceNormalization", 8}, {"LayerNormalization", 8},
      {"SimplifiedLayerNormalization", 6}, {"SkipLayerNormalization", 9}, {"GroupNormalization", 8},
      {"Softmax", 5}, {"LogSoftmax", 6}, {"LRN", 6}, {"MeanVarianceNormalization", 6}};
  return k;
}

const std::set<std::string>& DataMovementOps() {
  static const std::set<std::string> k = {
      "Concat", "Split", "Slice", "Transpose", "Resize", "Upsample", "Pad", "Gather",
      "GatherElements", "GatherND", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
      "Expand", "Tile", "DepthToSpace", "SpaceToDepth", "Shape", "Size", "ConstantOfShape",
      "ScatterND", "ScatterElements", "Range", "Dropout", "Compress", "NonZero", "OneHot",
      "ReverseSequence", "CumSum", "TopK"};
  return k;
}

double Elements(const graph::Value* v) {
  if (v == nullptr || !v->shape_known()) return 0;
  return static_cast<double>(v->elements());
}

int64_t Bytes(const graph::Value* v) {
  if (v == nullptr || !v->shape_known()) return 0;
  return v->elements() * DTypeSize(static_cast<DType>(v->elem_type));
}

bool IsParameterType(int32_t t) {
  // float, uint8, int8, float16, double, bfloat16
  return t == 1 || t == 2 || t == 3 || t == 10 || t == 11 || t == 16;
}

TensorInfo Info(const graph::Graph& g, const std::string& name) {
  TensorInfo t;
  t.name = name;
  if (const graph::Value* v = g.FindValue(name)) {
    t.shape = v->has_shape ? v->shape : std::vector<int64_t>{};
    t.dtype = static_cast<DType>(v->elem_type);
  }
  return t;
}

}  // namespace

bool IsViewOnly(const graph::Node& n) {
  static const std::set<std::string> k = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                          "Identity"};
  return n.domain.empty() && k.count(n.op_type) > 0;
}

KernelFamily FamilyOf(const graph::Node& n) {
  const std::string& op = n.op_type;
  if (op == "Conv" || op == "FusedConv" || op == "ConvTranspose" || op == "NhwcFusedConv") {
    return n.IntAttr("group", 1) > 1 ? KernelFamily::kGroupedConv : KernelFamily::kConv;
  }
  if (op == "Gemm" || op == "FusedGemm" || op == "MatMul" || op == "FusedMatMul") {
    return KernelFamily::kGemm;
  }
  // Einsum of two operands is a (batched) contraction: ORT's Einsum kernel runs it as MatMul.
  if (op == "Einsum" && n.domain.empty() && n.inputs.size() == 2) return KernelFamily::kGemm;
  if (ElementwiseCost().count(op)) return KernelFamily::kElementwise;
  if (PoolingOps().count(op)) return KernelFamily::kPooling;
  if (NormalizationCost().count(op)) return KernelFamily::kNormalization;
  if (DataMovementOps().count(op)) return KernelFamily::kDataMovement;
  return KernelFamily::kOther;
}

namespace {
bool IsRecurrent(const graph::Node& n) {
  return n.domain.empty() && (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN");
}
}  // namespace

bool HasCostFormula(const graph::Node& n) { return FamilyOf(n) != KernelFamily::kOther || IsRecurrent(n); }

Kernel CostKernel(const graph::Graph& g, const graph::Node& n, int index,
                  const std::unordered_set<std::string>& constants) {
  Kernel k;
  k.index = index;
  k.op_type = n.op_type;
  k.fused_ops = n.fused_ops;
  k.type = n.op_type;
  if (!n.fused_ops.empty()) {
    k.type += "(";
    for (size_t i = 0; i < n.fused_ops.size(); ++i) k.type += (i ? "," : "") + n.fused_ops[i];
    k.type += ")";
  }
  k.family = FamilyOf(n);
  k.source_nodes = n.source_nodes;
  k.view_only = IsViewOnly(n);
  for (const auto& [key, a] : n.attributes) {
    if (a.kind == graph::Attribute::Kind::kInt || a.kind == graph::Attribute::Kind::kInts) {
      k.attributes[key] = a.ints;
    }
  }

  std::set<std::string> seen;
  // BatchNormalization's running mean and variance (inputs 3, 4) are statistics, not learned
  // parameters (torchvision counts gamma and beta only). A Cast of a weight (ORT's
  // InsertCastTransformer casts float16 initializers to float) converts it for the kernel that
  // reads the result, which counts its parameters.
  const size_t param_inputs = n.op_type == "BatchNormalization" ? 3
                              : n.op_type == "Cast"             ? 0
                                                                : n.inputs.size();
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const std::string& in = n.inputs[i];
    if (in.empty() || !seen.insert(in).second) continue;
    const graph::Value* v = g.FindValue(in);
    if (constants.count(in)) {
      k.weights.push_back(Info(g, in));
      if (!k.view_only) {
        k.weight_bytes_read += Bytes(v);
        if (v && IsParameterType(v->elem_type) && i < param_inputs && v->elements() > 0) {
          k.parameters += v->elements();
        }
      }
    } else {
      k.inputs.push_back(Info(g, in));
      if (!k.view_only) k.activation_bytes_read += Bytes(v);
    }
  }
  for (const std::string& out : n.outputs) {
    if (out.empty()) continue;
    k.outputs.push_back(Info(g, out));
    if (!k.view_only) k.bytes_written += Bytes(g.FindValue(out));
  }
  if (k.view_only) return k;

  const std::string& op = n.op_type;
  const graph::Value* x = n.inputs.empty() ? nullptr : g.FindValue(n.inputs[0]);
  const graph::Value* y = n.outputs.empty() ? nullptr : g.FindValue(n.outputs[0]);
  const double y_elems = Elements(y);
  double fused_cost = 0;
  for (const std::string& f : n.fused_ops) {
    auto it = ElementwiseCost().find(f);
    fused_cost += it == ElementwiseCost().end() ? 1 : it->second;
  }
  auto input_value = [&](size_t i) -> const graph::Value* {
    return i < n.inputs.size() && !n.inputs[i].empty() ? g.FindValue(n.inputs[i]) : nullptr;
  };
  const bool has_bias = input_value(2) != nullptr;

  if (op == "Conv" || op == "FusedConv") {
    const graph::Value* w = input_value(1);
    if (w && w->shape_known() && w->shape.size() >= 2) {
      double per_out = 1;
      for (size_t i = 1; i < w->shape.size(); ++i) per_out *= static_cast<double>(w->shape[i]);
      k.macs = y_elems * per_out;
    }
    k.flops = 2 * k.macs + y_elems * ((has_bias ? 1 : 0) + fused_cost);
  } else if (op == "ConvTranspose") {
    const graph::Value* w = input_value(1);
    if (w && w->shape_known() && w->shape.size() >= 2) {
      double per_in = 1;
      for (size_t i = 1; i < w->shape.size(); ++i) per_in *= static_cast<double>(w->shape[i]);
      k.macs = Elements(x) * per_in;
    }
    k.flops = 2 * k.macs + y_elems * ((has_bias ? 1 : 0) + fused_cost);
  } else if (op == "Gemm" || op == "FusedGemm") {
    if (x && x->shape_known() && x->shape.size() == 2) {
      const double kdim = static_cast<double>(n.IntAttr("transA", 0) ? x->shape[0] : x->shape[1]);
      k.macs = y_elems * kdim;
    }
    k.flops = 2 * k.macs + y_elems * ((has_bias ? 1 : 0) + fused_cost);
  } else if (op == "MatMul" || op == "FusedMatMul") {
    if (x && x->shape_known() && !x->shape.empty()) {
      // The contracted dim K of A: last, or with FusedMatMul's transA (ORT's contrib op: A
      // stored [.., K, M]) the second last, or with transA and transBatchA ([K, .., M]) the first.
      const std::vector<int64_t>& s = x->shape;
      int64_t kdim = s.back();
      if (op == "FusedMatMul" && n.IntAttr("transA", 0) && s.size() >= 2) {
        kdim = n.IntAttr("transBatchA", 0) && s.size() >= 3 ? s.front() : s[s.size() - 2];
      }
      k.macs = y_elems * static_cast<double>(kdim);
    }
    k.flops = 2 * k.macs + y_elems * fused_cost;
  } else if (IsRecurrent(n)) {
    // ONNX LSTM / GRU / RNN (operator spec equations). Each time step, batch row and direction
    // runs the input and the recurrent GEMM: MACs = seq × batch × (elements(W) + elements(R)),
    // W [dirs, gates·H, I], R [dirs, gates·H, H]. Per hidden unit and step, the gate biases
    // (2 per gate), activations and cell update at ElementwiseCost's rates (Sigmoid 4, Tanh 4):
    // LSTM 8 + 16 + 8 = 32, GRU 6 + 12 + 4 = 22, RNN 2 + 4 = 6 FLOP. Family kOther: roofline.
    const graph::Value* w = input_value(1);
    const graph::Value* r = input_value(2);
    if (x && x->shape_known() && x->shape.size() == 3 && w && w->shape_known() && w->shape.size() == 3 && r &&
        r->shape_known() && r->shape.size() == 3) {
      const bool batch_first = n.IntAttr("layout", 0) == 1;
      const double seq = static_cast<double>(x->shape[batch_first ? 1 : 0]);
      const double batch = static_cast<double>(x->shape[batch_first ? 0 : 1]);
      k.macs = seq * batch * (Elements(w) + Elements(r));
      const double per_unit = op == "LSTM" ? 32 : op == "GRU" ? 22 : 6;
      k.flops = 2 * k.macs + seq * batch * static_cast<double>(r->shape[0] * r->shape[2]) * per_unit;
    } else {
      k.flops = y_elems;
    }
  } else if (op == "Einsum") {
    // Output elements × the extent of the summed letters (graph/shape_values.h).
    std::vector<const std::vector<int64_t>*> in;
    for (const std::string& name : n.inputs) {
      const graph::Value* v = g.FindValue(name);
      in.push_back(v && v->shape_known() ? &v->shape : nullptr);
    }
    std::string eq;
    if (auto it = n.attributes.find("equation"); it != n.attributes.end()) eq = it->second.s;
    if (std::find(in.begin(), in.end(), nullptr) == in.end()) {
      if (auto e = graph::ComputeEinsumShape(eq, in)) {
        k.macs = y_elems * static_cast<double>(e->contracted);
      }
    }
    k.flops = 2 * k.macs;
  } else if (k.family == KernelFamily::kElementwise) {
    k.flops = y_elems * (ElementwiseCost().at(op) + fused_cost);
  } else if (k.family == KernelFamily::kPooling) {
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
      double window = 1;
      for (int64_t d : n.IntsAttr("kernel_shape")) window *= static_cast<double>(d);
      k.flops = y_elems * window;
    } else {
      k.flops = Elements(x);
    }
  } else if (k.family == KernelFamily::kNormalization) {
    k.flops = Elements(x) * NormalizationCost().at(op);
  } else if (k.family == KernelFamily::kDataMovement) {
    k.flops = 0;
  } else {
    k.flops = y_elems;  // unknown op: 1 FLOP per output element (conservative, with a warning)
  }
  return k;
}

}  // namespace hase::kernels
