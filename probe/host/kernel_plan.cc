#include "kernel_plan.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

namespace hase::probe {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

int64_t Attr(const Kernel& k, const std::string& name, size_t i, int64_t dflt) {
  auto it = k.attributes.find(name);
  if (it == k.attributes.end() || it->second.size() <= i) return dflt;
  return it->second[i];
}

int64_t Product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

// Normalises a possibly negative axis against `rank`.
int64_t Axis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < 0) axis += r;
  return std::clamp<int64_t>(axis, 0, r > 0 ? r - 1 : 0);
}

// All operands in order: activations, then initializers.
std::vector<const TensorInfo*> Operands(const Kernel& k) {
  std::vector<const TensorInfo*> ops;
  for (const auto& t : k.inputs) ops.push_back(&t);
  for (const auto& t : k.weights) ops.push_back(&t);
  return ops;
}

bool MathDType(DType t) { return t == DType::kFloat || t == DType::kFloat16; }

std::string Where(const Kernel& k) { return fmt::format("kernel {} ({})", k.index, k.type); }

// Activation chain from op names, marking unknown names as approximate.
std::vector<EltOp> Chain(const std::vector<std::string>& names, KernelPlan* plan) {
  std::vector<EltOp> ops;
  for (const auto& n : names) {
    bool known = false;
    EltOp op = EltOpFromName(n, &known);
    if (!known) {
      plan->approximate = true;
      plan->note += (plan->note.empty() ? "" : "; ") + ("op " + n + " timed as a copy");
    }
    ops.push_back(op);
  }
  return ops;
}

std::string FusedSuffix(const Kernel& k) {
  std::string s;
  for (const auto& f : k.fused_ops) s += "_" + Lower(f);
  return s;
}

Status PlanConv(const Kernel& k, KernelPlan* plan) {
  if (k.inputs.empty() || k.weights.empty() || k.outputs.empty()) {
    return Status::InvalidArgument("conv needs an input, a weight and an output", Where(k));
  }
  const auto& x = k.inputs[0].shape;
  const auto& wt = k.weights[0].shape;
  const auto& y = k.outputs[0].shape;
  ConvDims& d = plan->conv;
  if (x.size() == 4 && wt.size() == 4 && y.size() == 4) {
    d.n = x[0]; d.c = x[1]; d.h = x[2]; d.w = x[3];
    d.k = wt[0]; d.r = wt[2]; d.s = wt[3];
    d.stride_h = Attr(k, "strides", 0, 1); d.stride_w = Attr(k, "strides", 1, 1);
    d.dilation_h = Attr(k, "dilations", 0, 1); d.dilation_w = Attr(k, "dilations", 1, 1);
    d.pad_h = Attr(k, "pads", 0, 0); d.pad_w = Attr(k, "pads", 1, 0);
    if (Attr(k, "pads", 2, d.pad_h) != d.pad_h || Attr(k, "pads", 3, d.pad_w) != d.pad_w) {
      plan->approximate = true;
      plan->note = "asymmetric pads: cuDNN pads both sides by the begin pad";
    }
  } else if (x.size() == 3 && wt.size() == 3 && y.size() == 3) {  // 1-D conv as H = 1
    d.n = x[0]; d.c = x[1]; d.h = 1; d.w = x[2];
    d.k = wt[0]; d.r = 1; d.s = wt[2];
    d.stride_w = Attr(k, "strides", 0, 1);
    d.dilation_w = Attr(k, "dilations", 0, 1);
    d.pad_w = Attr(k, "pads", 0, 0);
  } else if (x.size() == 5) {
    return Status::Unsupported("3-D convolution", Where(k), "the probe times 1-D and 2-D convs");
  } else {
    return Status::InvalidArgument("conv input/weight/output are not all 4-D (or 3-D)", Where(k));
  }
  d.groups = Attr(k, "group", 0, 1);
  if (d.groups <= 0 || d.c % d.groups != 0) {
    return Status::InvalidArgument("group does not divide input channels", Where(k));
  }
  d.p = (d.h + 2 * d.pad_h - d.dilation_h * (d.r - 1) - 1) / d.stride_h + 1;
  d.q = (d.w + 2 * d.pad_w - d.dilation_w * (d.s - 1) - 1) / d.stride_w + 1;
  d.bias = k.weights.size() > 1;
  std::vector<std::string> rest;
  for (const auto& f : k.fused_ops) {
    if (f == "Add" && k.inputs.size() > 1 && !d.residual) d.residual = true;
    else if (f == "Relu" && !d.relu && d.epilogue.empty()) d.relu = true;
    else rest.push_back(f);
  }
  d.epilogue = Chain(rest, plan);
  plan->backend = Backend::kCudnnConv;
  const bool depthwise = d.groups > 1 && d.groups == d.c;
  std::string base = d.groups == 1 ? "conv2d" : depthwise ? "depthwise_conv2d" : "grouped_conv2d";
  if (x.size() == 3) base = d.groups == 1 ? "conv1d" : "grouped_conv1d";
  plan->op = base + FusedSuffix(k);
  return Status::OK();
}

Status PlanPool(const Kernel& k, KernelPlan* plan) {
  if (k.inputs.empty() || k.outputs.empty() || k.inputs[0].shape.size() != 4) {
    return Status::Unsupported("pooling other than 2-D [N, C, H, W]", Where(k));
  }
  const auto& x = k.inputs[0].shape;
  PoolDims& d = plan->pool;
  d.n = x[0]; d.c = x[1]; d.h = x[2]; d.w = x[3];
  const bool global = k.op_type.rfind("Global", 0) == 0;
  d.max = k.op_type.find("Max") != std::string::npos;
  if (global) {
    d.r = d.h; d.s = d.w;
  } else {
    d.r = Attr(k, "kernel_shape", 0, 1); d.s = Attr(k, "kernel_shape", 1, 1);
    d.stride_h = Attr(k, "strides", 0, 1); d.stride_w = Attr(k, "strides", 1, 1);
    d.pad_h = Attr(k, "pads", 0, 0); d.pad_w = Attr(k, "pads", 1, 0);
    d.count_include_pad = Attr(k, "count_include_pad", 0, 0) != 0;
    if (Attr(k, "pads", 2, d.pad_h) != d.pad_h || Attr(k, "pads", 3, d.pad_w) != d.pad_w) {
      plan->approximate = true;
      plan->note = "asymmetric pads: cuDNN pads both sides by the begin pad";
    }
  }
  d.p = (d.h + 2 * d.pad_h - d.r) / d.stride_h + 1;
  d.q = (d.w + 2 * d.pad_w - d.s) / d.stride_w + 1;
  plan->backend = Backend::kCudnnPool;
  plan->op = Lower(k.op_type) + FusedSuffix(k);
  return Status::OK();
}

Status PlanGemm(const Kernel& k, KernelPlan* plan) {
  if (k.inputs.empty() || k.outputs.empty() || (k.inputs.size() < 2 && k.weights.empty())) {
    return Status::InvalidArgument("gemm needs A, B and an output", Where(k));
  }
  std::vector<int64_t> a = k.inputs[0].shape;
  const bool b_is_input = k.inputs.size() > 1;
  std::vector<int64_t> b = b_is_input ? k.inputs[1].shape : k.weights[0].shape;
  const size_t first_bias = b_is_input ? 0 : 1;
  GemmDims& d = plan->gemm;
  d.trans_a = Attr(k, "transA", 0, 0) != 0;
  d.trans_b = Attr(k, "transB", 0, 0) != 0;
  if (a.size() == 1) a.insert(a.begin(), 1);  // [K] → [1, K]
  if (b.size() == 1) b.push_back(1);          // [K] → [K, 1]
  if (a.size() < 2 || b.size() < 2) return Status::InvalidArgument("gemm operand rank", Where(k));
  d.m = d.trans_a ? a[a.size() - 1] : a[a.size() - 2];
  d.k = d.trans_a ? a[a.size() - 2] : a[a.size() - 1];
  d.n = d.trans_b ? b[b.size() - 2] : b[b.size() - 1];
  const int64_t a_batch = Product(a, 0, a.size() - 2);
  const int64_t b_batch = Product(b, 0, b.size() - 2);
  if (b_batch == 1) {  // B shared: fold A's batch into M (a linear layer)
    d.m *= a_batch;
    d.batch = 1;
    d.b_batched = false;
  } else {
    d.batch = std::max(a_batch, b_batch);
    d.a_batched = a_batch > 1;
    d.b_batched = true;
  }
  d.bias = k.weights.size() > first_bias;
  d.epilogue = Chain(k.fused_ops, plan);
  plan->backend = Backend::kCublasGemm;
  if (k.op_type == "Gemm" || k.op_type == "FusedGemm") {
    plan->op = (b_is_input ? "gemm" : "linear") + FusedSuffix(k);
  } else {
    plan->op = (d.batch > 1 ? "bmm" : b_is_input ? "matmul" : "linear") + FusedSuffix(k);
  }
  return Status::OK();
}

void PlanCopy(const Kernel& k, KernelPlan* plan, const std::string& why) {
  plan->backend = Backend::kCopy;
  plan->ops.clear();
  plan->operand_elements.clear();
  for (const TensorInfo* t : Operands(k)) plan->operand_elements.push_back(t->elements());
  if (!plan->operand_elements.empty()) {
    plan->in_elem_bytes = std::max<int64_t>(1, DTypeSize(k.inputs.empty() ? k.weights[0].dtype
                                                                          : k.inputs[0].dtype));
  }
  plan->out_elem_bytes = std::max<int64_t>(1, DTypeSize(k.outputs[0].dtype));
  plan->out_elements = k.outputs[0].elements();
  if (!why.empty()) {
    plan->approximate = true;
    plan->note += (plan->note.empty() ? "" : "; ") + why;
  }
}

Status PlanElementwise(const Kernel& k, KernelPlan* plan) {
  std::vector<std::string> names = {k.op_type};
  names.insert(names.end(), k.fused_ops.begin(), k.fused_ops.end());
  plan->ops = Chain(names, plan);
  for (const TensorInfo* t : Operands(k)) plan->operand_elements.push_back(t->elements());
  plan->out_elements = k.outputs[0].elements();
  plan->backend = Backend::kElementwise;
  plan->op = Lower(k.op_type) + FusedSuffix(k);
  return Status::OK();
}

Status PlanNorm(const Kernel& k, KernelPlan* plan) {
  if (k.inputs.empty()) return Status::InvalidArgument("normalisation without input", Where(k));
  const auto& x = k.inputs[0].shape;
  const int64_t elements = k.inputs[0].elements();
  plan->out_elements = k.outputs[0].elements();
  plan->op = Lower(k.op_type) + FusedSuffix(k);
  if (k.op_type == "BatchNormalization") {
    plan->backend = Backend::kBatchNorm;
    plan->channels = x.size() > 1 ? x[1] : 1;
    plan->inner = x.size() > 2 ? Product(x, 2, x.size()) : 1;
    plan->rows = elements / std::max<int64_t>(1, plan->inner);
    plan->op = "batchnorm" + FusedSuffix(k);
    return Status::OK();
  }
  plan->backend = Backend::kRowNorm;
  if (k.op_type == "InstanceNormalization" || k.op_type == "GroupNormalization") {
    plan->inner = x.size() > 2 ? Product(x, 2, x.size()) : 1;
    if (k.op_type == "GroupNormalization" && x.size() > 1) {
      plan->inner *= x[1] / std::max<int64_t>(1, Attr(k, "num_groups", 0, x[1]));
    }
  } else if (k.op_type == "LayerNormalization" || k.op_type == "SimplifiedLayerNormalization" ||
             k.op_type == "SkipLayerNormalization") {
    const int64_t axis = Axis(Attr(k, "axis", 0, -1), x.size());
    plan->inner = Product(x, axis, x.size());
    plan->op = "layernorm" + FusedSuffix(k);
  } else {  // Softmax, LogSoftmax and other reductions over one axis
    const int64_t axis = Axis(Attr(k, "axis", 0, -1), x.size());
    plan->inner = x.empty() ? 1 : x[axis];
    if (axis != static_cast<int64_t>(x.size()) - 1 && k.op_type.find("Softmax") != std::string::npos) {
      plan->approximate = true;
      plan->note = "softmax over a non-last axis timed as rows over a contiguous axis";
    }
  }
  plan->inner = std::max<int64_t>(1, plan->inner);
  plan->rows = elements / plan->inner;
  return Status::OK();
}

Status PlanDataMovement(const Kernel& k, KernelPlan* plan) {
  plan->op = Lower(k.op_type) + FusedSuffix(k);
  const auto& y = k.outputs[0].shape;
  if (k.op_type == "Concat" && !k.inputs.empty() && k.weights.empty()) {
    const int64_t axis = Axis(Attr(k, "axis", 0, 0), y.size());
    plan->backend = Backend::kConcat;
    plan->outer = Product(y, 0, axis);
    for (const auto& t : k.inputs) plan->concat_inner.push_back(Product(t.shape, axis, t.shape.size()));
    plan->out_elements = k.outputs[0].elements();
    return Status::OK();
  }
  if (k.op_type == "Split" && k.inputs.size() == 1 && !k.outputs.empty()) {
    const auto& x = k.inputs[0].shape;
    const int64_t axis = Axis(Attr(k, "axis", 0, 0), x.size());
    plan->backend = Backend::kSplit;
    plan->outer = Product(x, 0, axis);
    for (const auto& t : k.outputs) plan->concat_inner.push_back(Product(t.shape, axis, t.shape.size()));
    plan->out_elements = k.inputs[0].elements();
    return Status::OK();
  }
  if (k.op_type == "Transpose" && k.inputs.size() == 1 && k.inputs[0].shape.size() <= 6) {
    plan->backend = Backend::kTranspose;
    plan->in_shape = k.inputs[0].shape;
    const size_t rank = plan->in_shape.size();
    auto it = k.attributes.find("perm");
    if (it != k.attributes.end() && it->second.size() == rank) {
      plan->perm = it->second;
    } else {
      for (size_t i = 0; i < rank; ++i) plan->perm.push_back(static_cast<int64_t>(rank - 1 - i));
    }
    plan->out_elements = k.outputs[0].elements();
    return Status::OK();
  }
  PlanCopy(k, plan, "");
  return Status::OK();
}

}  // namespace

const char* BackendName(Backend b) {
  switch (b) {
    case Backend::kSkip: return "skip";
    case Backend::kCudnnConv: return "cudnn_conv";
    case Backend::kCudnnPool: return "cudnn_pool";
    case Backend::kCublasGemm: return "cublas_gemm";
    case Backend::kElementwise: return "elementwise";
    case Backend::kBatchNorm: return "batchnorm";
    case Backend::kRowNorm: return "row_norm";
    case Backend::kConcat: return "concat";
    case Backend::kSplit: return "split";
    case Backend::kTranspose: return "transpose";
    case Backend::kCopy: return "copy";
  }
  return "skip";
}

bool IsBinary(EltOp op) { return op >= EltOp::kAdd && op <= EltOp::kMin; }

EltOp EltOpFromName(const std::string& name, bool* known) {
  static const std::map<std::string, EltOp> kOps = {
      {"Identity", EltOp::kIdentity}, {"Cast", EltOp::kIdentity},
      {"Add", EltOp::kAdd}, {"Sum", EltOp::kAdd}, {"Sub", EltOp::kSub}, {"Mul", EltOp::kMul},
      {"Div", EltOp::kDiv}, {"Pow", EltOp::kPow}, {"Max", EltOp::kMax}, {"Min", EltOp::kMin},
      {"Relu", EltOp::kRelu}, {"Sigmoid", EltOp::kSigmoid}, {"Tanh", EltOp::kTanh},
      {"Clip", EltOp::kClip}, {"LeakyRelu", EltOp::kLeakyRelu},
      {"HardSigmoid", EltOp::kHardSigmoid}, {"HardSwish", EltOp::kHardSwish},
      {"Erf", EltOp::kErf}, {"Gelu", EltOp::kGelu}, {"FastGelu", EltOp::kGelu},
      {"BiasGelu", EltOp::kGelu}, {"QuickGelu", EltOp::kGelu}, {"Exp", EltOp::kExp},
      {"Log", EltOp::kLog}, {"Sqrt", EltOp::kSqrt}, {"Reciprocal", EltOp::kReciprocal},
      {"Neg", EltOp::kNeg}, {"Abs", EltOp::kAbs}, {"Softplus", EltOp::kSoftplus},
      {"Silu", EltOp::kSilu}, {"Swish", EltOp::kSilu}};
  auto it = kOps.find(name);
  *known = it != kOps.end();
  return *known ? it->second : EltOp::kIdentity;
}

Result<KernelPlan> PlanKernel(const Kernel& k) {
  KernelPlan plan;
  if (k.view_only) {
    plan.backend = Backend::kSkip;
    plan.op = Lower(k.op_type);
    plan.note = "view-only: the runtime aliases the buffer";
    return plan;
  }
  if (k.outputs.empty() || k.outputs[0].elements() == 0) {
    plan.backend = Backend::kSkip;
    plan.op = Lower(k.op_type);
    plan.note = "no output elements";
    return plan;
  }
  plan.dtype = k.outputs[0].dtype;
  Status st;
  const bool math = MathDType(plan.dtype) &&
                    (k.inputs.empty() || MathDType(k.inputs[0].dtype));
  switch (k.family) {
    case KernelFamily::kConv:
    case KernelFamily::kGroupedConv:
      st = math ? PlanConv(k, &plan) : Status::Unsupported("conv on " +
                                                           std::string(DTypeName(plan.dtype)),
                                                           Where(k));
      break;
    case KernelFamily::kGemm:
      st = math ? PlanGemm(k, &plan) : Status::Unsupported("gemm on " +
                                                           std::string(DTypeName(plan.dtype)),
                                                           Where(k));
      break;
    case KernelFamily::kPooling:
      if (math) st = PlanPool(k, &plan);
      else PlanCopy(k, &plan, "non-float pooling timed as a copy");
      break;
    case KernelFamily::kElementwise:
      if (math) st = PlanElementwise(k, &plan);
      else PlanCopy(k, &plan, std::string(DTypeName(plan.dtype)) + " elementwise timed as a copy");
      if (plan.op.empty()) plan.op = Lower(k.op_type) + FusedSuffix(k);
      break;
    case KernelFamily::kNormalization:
      if (math) st = PlanNorm(k, &plan);
      else PlanCopy(k, &plan, "non-float normalisation timed as a copy");
      if (plan.op.empty()) plan.op = Lower(k.op_type) + FusedSuffix(k);
      break;
    case KernelFamily::kDataMovement:
      st = PlanDataMovement(k, &plan);
      break;
    case KernelFamily::kOther:
      PlanCopy(k, &plan, "family other timed as a copy of its operands and output");
      plan.op = Lower(k.op_type) + FusedSuffix(k);
      break;
  }
  if (!st.ok()) return st;
  return plan;
}

}  // namespace hase::probe
