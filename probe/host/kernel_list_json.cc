#include "kernel_list_json.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hase::probe {
namespace {

using json = nlohmann::json;

// docs/kernels-json.md (src/hase/kernels/kernel_list_format.h: kKernelsJsonSchema/Version).
constexpr char kSchema[] = "hase.kernels";
constexpr int kSchemaVersion = 1;

Result<DType> ParseDType(const json& j, const std::string& where) {
  if (j.is_number_integer()) return static_cast<DType>(j.get<int32_t>());
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    for (int v : {0, 1, 2, 3, 6, 7, 9, 10, 11, 16}) {
      if (s == DTypeName(static_cast<DType>(v))) return static_cast<DType>(v);
    }
    if (s == "float32") return DType::kFloat;
  }
  return Status::InvalidArgument("unknown dtype " + j.dump(), where,
                                 "use the ONNX spelling (float, float16, int64, …)");
}

Result<KernelFamily> ParseFamily(const json& j, const std::string& where) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    for (int v = 0; v <= static_cast<int>(KernelFamily::kOther); ++v) {
      if (s == KernelFamilyName(static_cast<KernelFamily>(v))) return static_cast<KernelFamily>(v);
    }
  }
  return Status::InvalidArgument("unknown kernel family " + j.dump(), where);
}

Result<TensorInfo> ParseTensor(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument("tensor is not an object", where);
  TensorInfo t;
  t.name = j.value("name", "");
  if (!j.contains("shape") || !j["shape"].is_array()) {
    return Status::InvalidArgument("tensor without a shape array", where + ": " + t.name);
  }
  for (const auto& d : j["shape"]) {
    if (!d.is_number_integer()) {
      return Status::InvalidArgument("shape has a non-integer dim " + d.dump(),
                                     where + ": " + t.name, "bind the batch size (--batch)");
    }
    t.shape.push_back(d.get<int64_t>());
  }
  if (j.contains("dtype")) {
    HASE_ASSIGN_OR_RETURN(t.dtype, ParseDType(j["dtype"], where + ": " + t.name));
  }
  return t;
}

Result<std::vector<TensorInfo>> ParseTensors(const json& k, const char* key,
                                             const std::string& where) {
  std::vector<TensorInfo> out;
  if (!k.contains(key)) return out;
  if (!k[key].is_array()) return Status::InvalidArgument(std::string(key) + " is not an array", where);
  for (const auto& t : k[key]) {
    HASE_ASSIGN_OR_RETURN(TensorInfo ti, ParseTensor(t, where + ": " + key));
    out.push_back(std::move(ti));
  }
  return out;
}

double Number(const json& k, const char* key) {
  auto it = k.find(key);
  return it != k.end() && it->is_number() ? it->get<double>() : 0.0;
}

Result<Kernel> ParseKernel(const json& j, int position, const std::string& file) {
  const std::string where = fmt::format("{}: kernels[{}]", file, position);
  if (!j.is_object()) return Status::InvalidArgument("kernel is not an object", where);
  Kernel k;
  k.index = j.value("index", position);
  k.op_type = j.value("op_type", "");
  k.type = j.value("type", k.op_type);
  if (k.op_type.empty()) return Status::InvalidArgument("kernel without op_type", where);
  if (j.contains("fused_ops")) {
    for (const auto& f : j["fused_ops"]) {
      if (f.is_string()) k.fused_ops.push_back(f.get<std::string>());
    }
  }
  if (!j.contains("family")) return Status::InvalidArgument("kernel without family", where);
  HASE_ASSIGN_OR_RETURN(k.family, ParseFamily(j["family"], where));
  if (j.contains("source_nodes")) {
    for (const auto& n : j["source_nodes"]) {
      if (n.is_string()) k.source_nodes.push_back(n.get<std::string>());
    }
  }
  HASE_ASSIGN_OR_RETURN(k.inputs, ParseTensors(j, "inputs", where));
  HASE_ASSIGN_OR_RETURN(k.weights, ParseTensors(j, "weights", where));
  HASE_ASSIGN_OR_RETURN(k.outputs, ParseTensors(j, "outputs", where));
  if (j.contains("attributes") && j["attributes"].is_object()) {
    for (const auto& [name, v] : j["attributes"].items()) {
      std::vector<int64_t> ints;
      if (v.is_number_integer()) ints.push_back(v.get<int64_t>());
      else if (v.is_array()) {
        for (const auto& e : v) {
          if (e.is_number_integer()) ints.push_back(e.get<int64_t>());
        }
        if (ints.size() != v.size()) continue;  // not an integer list (floats, strings)
      } else {
        continue;
      }
      k.attributes[name] = std::move(ints);
    }
  }
  k.macs = Number(j, "macs");
  k.flops = Number(j, "flops");
  k.activation_bytes_read = static_cast<int64_t>(Number(j, "activation_bytes_read"));
  k.weight_bytes_read = static_cast<int64_t>(Number(j, "weight_bytes_read"));
  k.bytes_written = static_cast<int64_t>(Number(j, "bytes_written"));
  k.parameters = static_cast<int64_t>(Number(j, "parameters"));
  k.view_only = j.value("view_only", false);
  return k;
}

}  // namespace

Result<KernelList> ParseKernelListJson(std::string_view text, const std::string& where) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return Status::Parse(fmt::format("not JSON at byte {}: {}", e.byte, e.what()), where,
                         "pass the output of `hase kernels MODEL --format json`");
  }
  if (!doc.is_object() || !doc.contains("kernels") || !doc["kernels"].is_array()) {
    return Status::InvalidArgument("no \"kernels\" array", where,
                                   "pass the output of `hase kernels MODEL --format json`");
  }
  try {
    if (doc.contains("schema") && doc["schema"] != kSchema) {
      return Status::Parse("not a hase.kernels document (schema " + doc["schema"].dump() + ")",
                           where, "pass the output of `hase kernels MODEL --format json`");
    }
    if (doc.value("schema_version", kSchemaVersion) > kSchemaVersion) {
      return Status::Parse(fmt::format("hase.kernels schema_version {} is newer than this probe "
                                       "understands ({})",
                                       doc["schema_version"].get<int>(), kSchemaVersion),
                           where, "rebuild hase-probe from the same hase checkout");
    }
    KernelList list;
    list.model = doc.value("model", "");
    list.profile = doc.value("profile", "");
    list.batch = doc.value("batch", static_cast<int64_t>(1));
    HASE_ASSIGN_OR_RETURN(list.graph_inputs, ParseTensors(doc, "inputs", where));
    HASE_ASSIGN_OR_RETURN(list.graph_outputs, ParseTensors(doc, "outputs", where));
    int i = 0;
    for (const auto& kj : doc["kernels"]) {
      HASE_ASSIGN_OR_RETURN(Kernel k, ParseKernel(kj, i, where));
      list.kernels.push_back(std::move(k));
      ++i;
    }
    return list;
  } catch (const json::exception& e) {  // a value of the wrong type under a known key
    return Status::InvalidArgument(std::string("wrong JSON type: ") + e.what(), where);
  }
}

Result<KernelList> LoadKernelListJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IO("cannot read", path, "check the path");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseKernelListJson(ss.str(), path);
}

}  // namespace hase::probe
