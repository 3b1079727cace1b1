#include "fuzz_targets.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "hase/graph/onnx_loader.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/sched/workload_file.h"
#include "hase/service/task_json.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/prom_text.h"

namespace hase::fuzz {

Status FuzzOnnxModel(std::string_view bytes, const std::string& scratch_dir) {
  const std::string path = scratch_dir + "/fuzz.onnx";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  graph::LoadOptions o;
  o.batch = 2;
  Result<graph::LoadedGraph> g = graph::LoadOnnxGraph(path, o);
  return g.ok() ? Status::OK() : g.status();
}

Status FuzzPromText(std::string_view bytes) {
  Result<telemetry::PromParseResult> r = telemetry::ParsePromText(bytes);
  if (!r.ok()) return r.status();
  telemetry::GroupResult g = telemetry::GroupDcgmSamples(r->samples, "node", 1.7e9, {});
  (void)g;
  return Status::OK();
}

Status FuzzClusterYaml(std::string_view bytes) {
  static const Result<GpuCatalog> catalog = GpuCatalog::Builtin();
  if (!catalog.ok()) return catalog.status();
  Result<sched::Cluster> c = sched::ParseClusterYaml(bytes, "fuzz.yaml", *catalog);
  return c.ok() ? c->Validate() : c.status();
}

Status FuzzWorkload(std::string_view bytes) {
  Result<std::vector<sched::Task>> y = sched::ParseWorkloadYaml(bytes, "fuzz.yaml");
  Result<std::vector<sched::Task>> c = sched::ParseWorkloadCsv(bytes, "fuzz.csv");
  if (!c.ok() && (c.status().IsInternal() || c.status().message().empty())) return c.status();
  return y.ok() ? Status::OK() : y.status();  // most inputs are YAML; CSV needs only be clean
}

Status FuzzTaskJson(std::string_view bytes) {
  nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("body is not JSON");
  Result<service::TaskSpec> spec = service::TaskSpecFromJson(j);
  if (!spec.ok()) return spec.status();
  // What the daemon journals and answers: must serialise whatever text it holds.
  (void)service::TaskSpecToJson(*spec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return Status::OK();
}

}  // namespace hase::fuzz
