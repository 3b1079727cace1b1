#include "hase/kernels/kernel_list_format.h"

#include <map>
#include <sstream>

#include <fmt/format.h>

namespace hase {
namespace {

using nlohmann::json;

std::string ShapeText(const std::vector<int64_t>& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

json TensorJson(const TensorInfo& t) {
  return json{{"name", t.name}, {"shape", t.shape}, {"dtype", DTypeName(t.dtype)},
              {"bytes", t.bytes()}};
}

json TensorsJson(const std::vector<TensorInfo>& ts) {
  json a = json::array();
  for (const auto& t : ts) a.push_back(TensorJson(t));
  return a;
}

DType DTypeFromName(const std::string& s) {
  for (DType d : {DType::kFloat, DType::kUint8, DType::kInt8, DType::kInt32, DType::kInt64,
                  DType::kBool, DType::kFloat16, DType::kDouble, DType::kBFloat16}) {
    if (s == DTypeName(d)) return d;
  }
  return DType::kUndefined;
}

KernelFamily FamilyFromName(const std::string& s) {
  for (KernelFamily f : {KernelFamily::kConv, KernelFamily::kGroupedConv, KernelFamily::kGemm,
                         KernelFamily::kElementwise, KernelFamily::kPooling,
                         KernelFamily::kNormalization, KernelFamily::kDataMovement}) {
    if (s == KernelFamilyName(f)) return f;
  }
  return KernelFamily::kOther;
}

// Bytes per dtype: {"float": {"activations_read": …, "weights_read": …, "written": …}}.
json ByDtype(const Kernel& k) {
  std::map<std::string, std::array<int64_t, 3>> m;
  if (!k.view_only) {
    for (const auto& t : k.inputs) m[DTypeName(t.dtype)][0] += t.bytes();
    for (const auto& t : k.weights) m[DTypeName(t.dtype)][1] += t.bytes();
    for (const auto& t : k.outputs) m[DTypeName(t.dtype)][2] += t.bytes();
  }
  json j = json::object();
  for (const auto& [d, b] : m) {
    j[d] = {{"activations_read", b[0]}, {"weights_read", b[1]}, {"written", b[2]}};
  }
  return j;
}

std::vector<TensorInfo> TensorsFrom(const json& a) {
  std::vector<TensorInfo> out;
  for (const auto& t : a) {
    TensorInfo ti;
    ti.name = t.at("name").get<std::string>();
    ti.shape = t.at("shape").get<std::vector<int64_t>>();
    ti.dtype = DTypeFromName(t.at("dtype").get<std::string>());
    out.push_back(std::move(ti));
  }
  return out;
}

std::string AttrText(const Kernel& k) {
  std::string s;
  auto add = [&](const char* key, const char* label) {
    auto it = k.attributes.find(key);
    if (it == k.attributes.end() || it->second.empty()) return;
    std::string v;
    for (size_t i = 0; i < it->second.size(); ++i) v += (i ? "," : "") + std::to_string(it->second[i]);
    s += (s.empty() ? "" : " ") + std::string(label) + v;
  };
  add("kernel_shape", "k");
  add("strides", "s");
  add("pads", "p");
  add("dilations", "d");
  add("group", "g");
  return s;
}

}  // namespace

nlohmann::json KernelListToJson(const KernelList& list) {
  json doc;
  doc["schema"] = kKernelsJsonSchema;
  doc["schema_version"] = kKernelsJsonVersion;
  doc["model"] = list.model;
  doc["profile"] = list.profile;
  doc["batch"] = list.batch;
  doc["batch_validity"] = list.batch_validity;
  doc["ort_release"] = list.ort_release;
  doc["inputs"] = TensorsJson(list.graph_inputs);
  doc["outputs"] = TensorsJson(list.graph_outputs);
  doc["warnings"] = list.warnings;
  json ks = json::array();
  int64_t act = 0, wt = 0, wr = 0;
  std::map<std::string, std::pair<int, double>> by_family;
  for (const Kernel& k : list.kernels) {
    json a = json::object();
    for (const auto& [key, v] : k.attributes) a[key] = v;
    ks.push_back(json{
        {"index", k.index},
        {"type", k.type},
        {"op_type", k.op_type},
        {"fused_ops", k.fused_ops},
        {"family", KernelFamilyName(k.family)},
        {"source_nodes", k.source_nodes},
        {"inputs", TensorsJson(k.inputs)},
        {"weights", TensorsJson(k.weights)},
        {"outputs", TensorsJson(k.outputs)},
        {"attributes", a},
        {"macs", k.macs},
        {"flops", k.flops},
        {"activation_bytes_read", k.activation_bytes_read},
        {"weight_bytes_read", k.weight_bytes_read},
        {"bytes_written", k.bytes_written},
        {"dram_bytes", k.dram_bytes()},
        {"bytes_by_dtype", ByDtype(k)},
        {"parameters", k.parameters},
        {"view_only", k.view_only},
        {"cpu_placed", k.cpu_placed},
        {"arithmetic_intensity", k.arithmetic_intensity()},
    });
    act += k.activation_bytes_read;
    wt += k.weight_bytes_read;
    wr += k.bytes_written;
    auto& f = by_family[KernelFamilyName(k.family)];
    f.first += 1;
    f.second += k.flops;
  }
  doc["kernels"] = ks;
  json fam = json::object();
  for (const auto& [name, v] : by_family) fam[name] = {{"kernels", v.first}, {"flops", v.second}};
  doc["totals"] = {
      {"kernels", list.kernels.size()},       {"macs", list.total_macs()},
      {"flops", list.total_flops()},          {"parameters", list.total_parameters()},
      {"activation_bytes_read", act},         {"weight_bytes_read", wt},
      {"bytes_written", wr},                  {"dram_bytes", list.total_dram_bytes()},
      {"by_family", fam},
  };
  return doc;
}

Result<KernelList> KernelListFromJson(const std::string& text) {
  try {
    const json doc = json::parse(text);
    if (doc.at("schema").get<std::string>() != kKernelsJsonSchema) {
      return Status::Parse("not a hase.kernels document (schema '" +
                           doc.at("schema").get<std::string>() + "')");
    }
    const int version = doc.at("schema_version").get<int>();
    if (version > kKernelsJsonVersion) {
      return Status::Parse("hase.kernels schema_version " + std::to_string(version) +
                               " is newer than this build understands (" +
                               std::to_string(kKernelsJsonVersion) + ")",
                           "", "upgrade hase");
    }
    KernelList l;
    l.model = doc.at("model").get<std::string>();
    l.profile = doc.at("profile").get<std::string>();
    l.batch = doc.at("batch").get<int64_t>();
    l.graph_inputs = TensorsFrom(doc.at("inputs"));
    l.graph_outputs = TensorsFrom(doc.at("outputs"));
    l.warnings = doc.value("warnings", std::vector<std::string>{});
    l.batch_validity = doc.value("batch_validity", std::string("valid at any batch size"));
    l.ort_release = doc.value("ort_release", std::string());
    for (const auto& kj : doc.at("kernels")) {
      Kernel k;
      k.index = kj.at("index").get<int>();
      k.type = kj.at("type").get<std::string>();
      k.op_type = kj.at("op_type").get<std::string>();
      k.fused_ops = kj.at("fused_ops").get<std::vector<std::string>>();
      k.family = FamilyFromName(kj.at("family").get<std::string>());
      k.source_nodes = kj.at("source_nodes").get<std::vector<std::string>>();
      k.inputs = TensorsFrom(kj.at("inputs"));
      k.weights = TensorsFrom(kj.at("weights"));
      k.outputs = TensorsFrom(kj.at("outputs"));
      for (const auto& [key, v] : kj.at("attributes").items()) {
        k.attributes[key] = v.get<std::vector<int64_t>>();
      }
      k.macs = kj.at("macs").get<double>();
      k.flops = kj.at("flops").get<double>();
      k.activation_bytes_read = kj.at("activation_bytes_read").get<int64_t>();
      k.weight_bytes_read = kj.at("weight_bytes_read").get<int64_t>();
      k.bytes_written = kj.at("bytes_written").get<int64_t>();
      k.parameters = kj.at("parameters").get<int64_t>();
      k.view_only = kj.at("view_only").get<bool>();
      k.cpu_placed = kj.value("cpu_placed", false);  // added after version 1 shipped
      l.kernels.push_back(std::move(k));
    }
    return l;
  } catch (const std::exception& e) {
    return Status::Parse(std::string("bad hase.kernels JSON: ") + e.what());
  }
}

namespace {

// RFC 4180: quote fields holding ',' or '"'.
std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string KernelListToCsv(const KernelList& list) {
  std::ostringstream o;
  o << "index,type,op_type,family,source_nodes,input_shapes,output_shapes,kernel_shape,strides,"
       "pads,dilations,group,macs,flops,activation_bytes_read,weight_bytes_read,bytes_written,"
       "parameters,view_only,cpu_placed\n";
  auto ints = [](const Kernel& k, const char* key) {
    auto it = k.attributes.find(key);
    if (it == k.attributes.end()) return std::string();
    return ShapeText(it->second);
  };
  for (const Kernel& k : list.kernels) {
    std::vector<std::string> in, out;
    for (const auto& t : k.inputs) in.push_back(ShapeText(t.shape));
    for (const auto& t : k.outputs) out.push_back(ShapeText(t.shape));
    o << k.index << ',' << Csv(k.type) << ',' << k.op_type << ',' << KernelFamilyName(k.family)
      << ',' << Csv(Join(k.source_nodes, ";")) << ',' << Join(in, ";") << ',' << Join(out, ";")
      << ',' << ints(k, "kernel_shape") << ',' << ints(k, "strides") << ',' << ints(k, "pads")
      << ',' << ints(k, "dilations") << ',' << ints(k, "group") << ','
      << fmt::format("{:.0f},{:.0f}", k.macs, k.flops) << ',' << k.activation_bytes_read << ','
      << k.weight_bytes_read << ',' << k.bytes_written << ',' << k.parameters << ','
      << (k.view_only ? "true" : "false") << ',' << (k.cpu_placed ? "true" : "false") << '\n';
  }
  return o.str();
}

std::string KernelListToTable(const KernelList& list) {
  std::string o = fmt::format("model {}  profile {}  batch {}\n", list.model, list.profile, list.batch);
  o += fmt::format("{:>4}  {:<26} {:<28} {:<18} {:<18} {:<24} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
                   "#", "type", "source", "input", "output", "attributes", "MFLOP", "act rd KB",
                   "wt rd KB", "written KB", "params");
  for (const Kernel& k : list.kernels) {
    std::string src = k.source_nodes.empty() ? "" : k.source_nodes[0];
    if (k.source_nodes.size() > 1) src += fmt::format(" +{}", k.source_nodes.size() - 1);
    if (src.size() > 28) src = src.substr(0, 25) + "...";
    const std::string in = k.inputs.empty() ? "-" : ShapeText(k.inputs[0].shape);
    const std::string out = k.outputs.empty() ? "-" : ShapeText(k.outputs[0].shape);
    o += fmt::format("{:>4}  {:<26} {:<28} {:<18} {:<18} {:<24} {:>10.2f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10}{}\n",
                     k.index, k.type, src, in, out, AttrText(k), k.flops / 1e6,
                     k.activation_bytes_read / 1024.0, k.weight_bytes_read / 1024.0,
                     k.bytes_written / 1024.0, k.parameters, k.view_only ? "  (view)" : "");
  }
  int64_t act = 0, wt = 0, wr = 0;
  for (const Kernel& k : list.kernels) {
    act += k.activation_bytes_read;
    wt += k.weight_bytes_read;
    wr += k.bytes_written;
  }
  o += fmt::format(
      "total: {} kernels, {:.3f} GMAC, {:.3f} GFLOP, {:.3f} M parameters, DRAM {:.1f} MB "
      "(activations read {:.1f} MB, weights read {:.1f} MB, written {:.1f} MB)\n",
      list.kernels.size(), list.total_macs() / 1e9, list.total_flops() / 1e9,
      list.total_parameters() / 1e6, list.total_dram_bytes() / 1e6, act / 1e6, wt / 1e6, wr / 1e6);
  return o;
}

}  // namespace hase
