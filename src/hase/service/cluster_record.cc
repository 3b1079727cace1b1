#include "hase/service/cluster_record.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace hase::service {
namespace {

std::string PathIn(const std::string& dir) { return (std::filesystem::path(dir) / "cluster.json").string(); }

}  // namespace

ClusterRecord ClusterRecord::Of(const sched::Cluster& cluster) {
  ClusterRecord r;
  for (const sched::Gpu& g : cluster.gpus) {
    r.gpus_.push_back({g.node, g.index, g.mig_slot, cluster.types[g.type].name});
  }
  return r;
}

Result<std::optional<ClusterRecord>> ClusterRecord::Load(const std::string& dir) {
  const std::string path = PathIn(dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<ClusterRecord>();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  const auto bad = [&] {
    return Status::Parse("not a cluster record (a JSON object with a \"gpus\" array of {node, index, mig_slot, type})",
                         path, "hase serve rewrites it at start; remove it to match the journal by node and index");
  };
  if (j.is_discarded() || !j.is_object() || !j.contains("gpus") || !j["gpus"].is_array()) return bad();
  ClusterRecord r;
  for (const nlohmann::json& g : j["gpus"]) {
    if (!g.is_object() || !g.contains("node") || !g["node"].is_string() || !g.contains("index") ||
        !g["index"].is_number_integer() || !g.contains("type") || !g["type"].is_string()) {
      return bad();
    }
    r.gpus_.push_back({g["node"].get<std::string>(), g["index"].get<int>(), g.value("mig_slot", -1),
                       g["type"].get<std::string>()});
  }
  return std::optional<ClusterRecord>(std::move(r));
}

Status ClusterRecord::Save(const std::string& dir) const {
  nlohmann::json gpus = nlohmann::json::array();
  for (const RecordedGpu& g : gpus_) {
    gpus.push_back({{"node", g.node}, {"index", g.index}, {"mig_slot", g.mig_slot}, {"type", g.type}});
  }
  const std::string path = PathIn(dir), tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << nlohmann::json{{"gpus", gpus}}.dump(1) << "\n";
    out.flush();
    if (!out) return Status::IO("cannot write the cluster record", tmp, "is the disk full?");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IO("cannot write the cluster record: " + ec.message(), path);
  return Status::OK();
}

int ResolveGpu(const sched::Cluster& now, const ClusterRecord* before, int old_id, const std::string& node,
               int index) {
  const int n = static_cast<int>(now.gpus.size());
  if (before != nullptr && old_id >= 0 && old_id < static_cast<int>(before->gpus().size())) {
    const RecordedGpu& was = before->gpus()[old_id];
    for (int g = 0; g < n; ++g) {
      const sched::Gpu& gpu = now.gpus[g];
      if (gpu.node == was.node && gpu.index == was.index && gpu.mig_slot == was.mig_slot) {
        return now.types[gpu.type].name == was.type ? g : -1;
      }
    }
    return -1;
  }
  if (old_id >= 0 && old_id < n && now.gpus[old_id].node == node && now.gpus[old_id].index == index) return old_id;
  int found = -1;
  for (int g = 0; g < n; ++g) {
    if (now.gpus[g].node != node || now.gpus[g].index != index) continue;
    if (found >= 0) return -1;  // several MIG instances: which one is unknown without the record
    found = g;
  }
  return found;
}

}  // namespace hase::service
