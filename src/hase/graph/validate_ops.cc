#include "hase/graph/validate_ops.h"

#include <sstream>

namespace hase::graph {
namespace {

std::string Where(const std::string& path, const Node& n) {
  return path + ": node '" + n.name + "' (" + n.op_type + ")";
}

// Known element count of `name`, or -1.
int64_t Elements(const Graph& g, const std::string& name) {
  const Value* v = name.empty() ? nullptr : g.FindValue(name);
  if (v == nullptr) return -1;
  if (v->constant) return static_cast<int64_t>(v->constant->size());
  return v->shape_known() ? v->elements() : -1;
}

Status CheckResize(const Graph& g, const Node& n, const std::string& path) {
  if (g.opset("") < 11 || n.inputs.size() < 4) return Status::OK();
  const std::string& scales = n.inputs[2];
  const std::string& sizes = n.inputs[3];
  if (scales.empty() || sizes.empty() || Elements(g, scales) == 0) return Status::OK();
  return Status::InvalidArgument("Resize has both 'scales' and 'sizes' inputs", Where(path, n),
                                 "the ONNX spec allows only one of them; re-export the model "
                                 "(leave scales empty when sizes is given)");
}

Status CheckUpsample(const Graph& g, const Node& n, const std::string& path) {
  std::vector<double> scales;
  auto attr = n.attributes.find("scales");
  if (attr != n.attributes.end()) {
    scales.assign(attr->second.floats.begin(), attr->second.floats.end());
  } else if (n.inputs.size() >= 2) {
    const Value* v = g.FindValue(n.inputs[1]);
    if (v != nullptr && v->constant) scales = *v->constant;
  }
  for (size_t i = 0; i < scales.size(); ++i) {
    if (scales[i] < 1.0) {
      std::ostringstream msg;
      msg << "Upsample scale " << scales[i] << " on dim " << i << " is below 1";
      return Status::InvalidArgument(msg.str(), Where(path, n),
                                     "Upsample only enlarges (ONNX spec: scales >= 1); use Resize "
                                     "(opset >= 11) to shrink");
    }
  }
  return Status::OK();
}

// Shape of `name` when its rank is known, else nullptr.
const std::vector<int64_t>* Shape(const Graph& g, const std::string& name) {
  const Value* v = name.empty() ? nullptr : g.FindValue(name);
  return v != nullptr && v->has_shape ? &v->shape : nullptr;
}

// The contracted dims of Gemm (A: MxK or KxM with transA; B: KxN or NxK with transB) and MatMul
// (A: ...xK; B: K or ...xKxN) must agree when both are known. ONNX's shape inference does not
// compare them, so a model fed another input size than it was exported for (a Flatten into a
// fixed-size Gemm) passed with wrong FLOPs; ORT fails it at run time.
Status CheckInnerDims(const Graph& g, const Node& n, const std::string& path) {
  if (n.inputs.size() < 2) return Status::OK();
  const std::vector<int64_t>* a = Shape(g, n.inputs[0]);
  const std::vector<int64_t>* b = Shape(g, n.inputs[1]);
  if (a == nullptr || b == nullptr || a->empty() || b->empty()) return Status::OK();
  int64_t ka = -1, kb = -1;
  if (n.op_type == "Gemm") {
    if (a->size() != 2 || b->size() != 2) return Status::OK();
    ka = n.IntAttr("transA", 0) ? (*a)[0] : (*a)[1];
    kb = n.IntAttr("transB", 0) ? (*b)[1] : (*b)[0];
  } else {
    ka = a->back();
    kb = b->size() == 1 ? (*b)[0] : (*b)[b->size() - 2];
  }
  if (ka <= 0 || kb <= 0 || ka == kb) return Status::OK();
  std::ostringstream msg;
  msg << "inner dimensions differ: input '" << n.inputs[0] << "' has K = " << ka << ", input '" << n.inputs[1]
      << "' has K = " << kb;
  return Status::InvalidArgument(msg.str(), Where(path, n),
                                 "the model was exported for another input size: use the size it was "
                                 "exported for (--input-shape / input_size)");
}

}  // namespace

Status ValidateOps(const Graph& g, const std::string& path) {
  for (const Node& n : g.nodes()) {
    if (n.removed || !n.domain.empty()) continue;
    if (n.op_type == "Resize") HASE_RETURN_IF_ERROR(CheckResize(g, n, path));
    if (n.op_type == "Upsample") HASE_RETURN_IF_ERROR(CheckUpsample(g, n, path));
    if (n.op_type == "Gemm" || n.op_type == "MatMul") HASE_RETURN_IF_ERROR(CheckInnerDims(g, n, path));
  }
  return Status::OK();
}

}  // namespace hase::graph
