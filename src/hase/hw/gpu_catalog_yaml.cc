// The one adapter between yaml-cpp and GpuCatalog: converts YAML exceptions to Status.
#include <yaml-cpp/yaml.h>

#include <utility>

#include "hase/hw/gpu_catalog.h"

namespace hase {
namespace {

std::string At(const std::string& where, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.line >= 0 ? where + ":" + std::to_string(m.line + 1) : where;
}

// Reads a required scalar field; an error names the file, line and entry.
template <typename T>
Status Get(const YAML::Node& entry, const char* key, const std::string& where, T* out) {
  const YAML::Node v = entry[key];
  if (!v || v.IsNull()) {
    return Status::InvalidArgument(std::string("missing field '") + key + "'", At(where, entry),
                                   "see docs/gpu-catalog.md for the schema");
  }
  try {
    *out = v.as<T>();
  } catch (const YAML::Exception&) {
    return Status::InvalidArgument(std::string("field '") + key + "' has the wrong type",
                                   At(where, v), "see docs/gpu-catalog.md for the schema");
  }
  return Status::OK();
}

// The optional `mig:` block of an entry (docs/gpu-catalog.md, "MIG").
Status ParseMig(const YAML::Node& m, const std::string& w, GpuSpec& g) {
  if (!m.IsMap()) return Status::InvalidArgument("'mig' must be a map", At(w, m));
  MigGeometry& geo = g.mig;
  HASE_RETURN_IF_ERROR(Get(m, "compute_slices", w, &geo.compute_slices));
  HASE_RETURN_IF_ERROR(Get(m, "memory_slices", w, &geo.memory_slices));
  HASE_RETURN_IF_ERROR(Get(m, "source", w, &geo.source));
  if (geo.compute_slices < 1 || geo.memory_slices < 1) {
    return Status::InvalidArgument("mig compute_slices and memory_slices must be >= 1", At(w, m));
  }
  const YAML::Node ps = m["profiles"];
  if (!ps || !ps.IsSequence() || ps.size() == 0) {
    return Status::InvalidArgument("'mig' needs a non-empty 'profiles' list", At(w, m));
  }
  for (const YAML::Node& pn : ps) {
    if (!pn.IsMap()) return Status::InvalidArgument("a MIG profile must be a map", At(w, pn));
    MigProfile p;
    HASE_RETURN_IF_ERROR(Get(pn, "name", w, &p.name));
    HASE_RETURN_IF_ERROR(Get(pn, "compute_slices", w, &p.compute_slices));
    HASE_RETURN_IF_ERROR(Get(pn, "memory_slices", w, &p.memory_slices));
    HASE_RETURN_IF_ERROR(Get(pn, "sms", w, &p.sms));
    HASE_RETURN_IF_ERROR(Get(pn, "memory_gib", w, &p.memory_gib));
    HASE_RETURN_IF_ERROR(Get(pn, "max_instances", w, &p.max_instances));
    if (p.compute_slices < 1 || p.compute_slices > geo.compute_slices || p.memory_slices < 1 ||
        p.memory_slices > geo.memory_slices || p.sms < 1 || p.sms > g.sms || !(p.memory_gib > 0) ||
        p.memory_gib > g.memory_gib || p.max_instances < 1 ||
        p.max_instances > geo.compute_slices) {
      return Status::InvalidArgument(
          "MIG profile '" + p.name + "' does not fit its GPU (slices in 1..the GPU's, sms in "
          "1..sms, memory_gib in (0, memory_gib], max_instances in 1..compute_slices)",
          At(w, pn));
    }
    if (geo.Find(p.name) != nullptr) {
      return Status::InvalidArgument("duplicate MIG profile '" + p.name + "'", At(w, pn));
    }
    geo.profiles.push_back(std::move(p));
  }
  return Status::OK();
}

Result<GpuSpec> ParseEntry(const YAML::Node& e, const std::string& where) {
  if (!e.IsMap()) return Status::InvalidArgument("GPU entry is not a map", At(where, e));
  GpuSpec g;
  HASE_RETURN_IF_ERROR(Get(e, "id", where, &g.id));
  const std::string w = where + " (" + g.id + ")";
  HASE_RETURN_IF_ERROR(Get(e, "name", w, &g.name));
  if (e["aliases"]) {
    if (!e["aliases"].IsSequence()) {
      return Status::InvalidArgument("'aliases' must be a list", At(w, e["aliases"]));
    }
    for (const auto& a : e["aliases"]) g.aliases.push_back(a.as<std::string>());
  }
  HASE_RETURN_IF_ERROR(Get(e, "architecture", w, &g.architecture));
  HASE_RETURN_IF_ERROR(Get(e, "chip", w, &g.chip));
  HASE_RETURN_IF_ERROR(Get(e, "compute_capability", w, &g.compute_capability));
  HASE_RETURN_IF_ERROR(Get(e, "sms", w, &g.sms));
  HASE_RETURN_IF_ERROR(Get(e, "boost_clock_mhz", w, &g.boost_clock_mhz));
  // Optional clock facts (0 = unknown); see docs/gpu-catalog.md.
  for (auto [key, out] : {std::pair{"base_clock_mhz", &g.base_clock_mhz},
                          std::pair{"fp32_sustained_clock_mhz", &g.fp32_sustained_clock_mhz}}) {
    if (e[key] && !e[key].IsNull()) HASE_RETURN_IF_ERROR(Get(e, key, w, out));
  }
  HASE_RETURN_IF_ERROR(Get(e, "fp32_tflops", w, &g.fp32_tflops));
  HASE_RETURN_IF_ERROR(Get(e, "fp16_tflops", w, &g.fp16_tflops));
  HASE_RETURN_IF_ERROR(Get(e, "tensor_fp16_tflops", w, &g.tensor_fp16_tflops));
  HASE_RETURN_IF_ERROR(Get(e, "memory_gib", w, &g.memory_gib));
  HASE_RETURN_IF_ERROR(Get(e, "memory_type", w, &g.memory_type));
  HASE_RETURN_IF_ERROR(Get(e, "memory_bandwidth_gbps", w, &g.memory_bandwidth_gbps));
  HASE_RETURN_IF_ERROR(Get(e, "l2_mib", w, &g.l2_mib));
  HASE_RETURN_IF_ERROR(Get(e, "pcie_gen", w, &g.pcie_gen));
  HASE_RETURN_IF_ERROR(Get(e, "pcie_lanes", w, &g.pcie_lanes));
  HASE_RETURN_IF_ERROR(Get(e, "interconnect", w, &g.interconnect));
  HASE_RETURN_IF_ERROR(Get(e, "tdp_w", w, &g.tdp_w));
  HASE_RETURN_IF_ERROR(Get(e, "source", w, &g.source));
  if (g.sms <= 0 || g.boost_clock_mhz <= 0 || g.fp32_tflops <= 0 ||
      g.memory_bandwidth_gbps <= 0 || g.memory_gib <= 0) {
    return Status::InvalidArgument(
        "sms, boost_clock_mhz, fp32_tflops, memory_gib and memory_bandwidth_gbps must be > 0",
        At(w, e));
  }
  if (g.fp16_tflops < 0 || g.tensor_fp16_tflops < 0 || g.l2_mib < 0 || g.tdp_w < 0) {
    return Status::InvalidArgument("peaks, L2 and TDP must not be negative", At(w, e));
  }
  if (g.base_clock_mhz < 0 || g.base_clock_mhz > g.boost_clock_mhz ||
      g.fp32_sustained_clock_mhz < 0 || g.fp32_sustained_clock_mhz > g.boost_clock_mhz) {
    return Status::InvalidArgument(
        "base_clock_mhz and fp32_sustained_clock_mhz must lie in 0..boost_clock_mhz", At(w, e),
        "omit a clock that is not known");
  }
  if (e["mig"] && !e["mig"].IsNull()) HASE_RETURN_IF_ERROR(ParseMig(e["mig"], w, g));
  return g;
}

}  // namespace

Result<GpuCatalog> GpuCatalog::FromYaml(std::string_view yaml_text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    return Status::Parse(e.msg, where + ":" + std::to_string(e.mark.line + 1),
                         "fix the YAML syntax");
  } catch (const YAML::Exception& e) {
    return Status::Parse(e.what(), where);
  }
  if (!root.IsMap() || !root["gpus"] || !root["gpus"].IsSequence()) {
    return Status::InvalidArgument("GPU catalog must be a map with a 'gpus:' list", where,
                                   "see docs/gpu-catalog.md");
  }
  if (root["format"] && root["format"].as<std::string>("") != "hase-gpu-catalog/1") {
    return Status::InvalidArgument(
        "unsupported catalog format '" + root["format"].as<std::string>("?") + "'", where,
        "expected 'format: hase-gpu-catalog/1'");
  }
  std::vector<GpuSpec> gpus;
  for (const auto& e : root["gpus"]) {
    auto g = ParseEntry(e, where);
    if (!g.ok()) return g.status();
    for (const auto& other : gpus) {
      if (other.id == g->id) {
        return Status::InvalidArgument("duplicate GPU id '" + g->id + "'", At(where, e));
      }
    }
    gpus.push_back(std::move(g).value());
  }
  if (gpus.empty()) return Status::InvalidArgument("GPU catalog has no entries", where);
  GpuCatalog cat(std::move(gpus));
  HASE_RETURN_IF_ERROR(cat.BuildIndex(where));
  return cat;
}

}  // namespace hase
