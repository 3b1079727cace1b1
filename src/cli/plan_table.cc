#include "cli/plan_table.h"

#include <cmath>

#include <fmt/format.h>

#include "hase/base/iso_time.h"

namespace hase::cli {

using nlohmann::json;

double JsonNumber(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

std::string PlanGpuText(const json& g) {
  if (!g.is_object()) return "-";
  std::string s = fmt::format("{}/{}", g.value("node", std::string("?")), g.value("index", -1));
  if (g.contains("indices") && g["indices"].is_array() && g["indices"].size() > 1) {  // a k-GPU task: "a/0+1"
    s = g.value("node", std::string("?")) + "/";
    for (size_t i = 0; i < g["indices"].size(); ++i) s += (i ? "+" : "") + std::to_string(g["indices"][i].get<int>());
  }
  if (g.contains("type")) s += " " + g["type"].get<std::string>();
  return s;
}

std::string CriticalPathLine(const json& q) {
  const json& cp = q["critical_path"];
  if (!cp.is_object() || cp["tasks"].empty()) return "";
  std::string chain;
  for (const json& s : cp["tasks"]) chain += (chain.empty() ? "" : " -> ") + std::to_string(s["task"].get<int64_t>());
  return fmt::format("critical path: GPU {}: tasks {} (ends {})\n", PlanGpuText(cp["gpu"]), chain,
                     IsoUtc(JsonNumber(q, "eta_s")));
}

std::string PlanRowsText(const std::vector<PlacedRow>& placed, const json& q) {
  std::string out = fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24} {}\n", "ID", "MODEL", "STATE", "GPU", "START",
                                "END", "REASON");
  auto row = [&](int64_t id, const std::string& model, const std::string& state, const std::string& gpu, double start,
                 double end, const std::string& reason) {
    out += fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24} {}\n", id, model.substr(0, 18), state, gpu,
                       IsoUtc(start), IsoUtc(end), reason);
  };
  for (const PlacedRow& p : placed) row(p.id, p.model, p.state, PlanGpuText(p.gpu), p.start_s, p.end_s, "");
  for (const json& t : q["tasks"]) {
    const json& pr = t["predicted"];
    row(t["id"].get<int64_t>(), t.value("model", std::string()), t.value("whatif", false) ? "what-if" : "queued",
        PlanGpuText(pr["gpu"]), pr["start_s"].is_number() ? pr["start_s"].get<double>() : INFINITY,
        pr["end_s"].is_number() ? pr["end_s"].get<double>() : INFINITY, t["why"].value("text", std::string()));
  }
  return out;
}

}  // namespace hase::cli
