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

}  // namespace

Status ValidateOps(const Graph& g, const std::string& path) {
  for (const Node& n : g.nodes()) {
    if (n.removed || !n.domain.empty()) continue;
    if (n.op_type == "Resize") HASE_RETURN_IF_ERROR(CheckResize(g, n, path));
    if (n.op_type == "Upsample") HASE_RETURN_IF_ERROR(CheckUpsample(g, n, path));
  }
  return Status::OK();
}

}  // namespace hase::graph
