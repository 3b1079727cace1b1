#include "hase/sched/cluster_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "hase/sched/yaml_reader.h"

namespace hase::sched {
namespace {

constexpr int kDefaultMaxTasks = 4;
constexpr double kMibPerGib = 1024.0;

struct MigItem {
  const GpuSpec* spec = nullptr;  // derived instance type
  int gi = -1;
};

// Parses and checks an entry's `mig:` list against the parent type (see cluster_file.h).
Result<std::vector<MigItem>> ParseMig(const YAML::Node& list, const GpuSpec& parent,
                                      const std::string& where, const GpuCatalog& catalog) {
  if (!list.IsSequence() || list.size() == 0) {
    return Status::InvalidArgument("'mig' must be a non-empty list of MIG profiles",
                                   yaml::At(where, list), "e.g. mig: [3g.20gb, 2g.10gb, 1g.5gb]");
  }
  if (!parent.mig.supported()) {
    return Status::InvalidArgument(parent.id + " has no MIG", yaml::At(where, list),
                                   "MIG instances need an A30, A100, H100 or H200 type");
  }
  std::vector<MigItem> items;
  int compute = 0, memory = 0;
  std::map<std::string, int> per_profile;
  std::set<int> gis;
  for (const YAML::Node& it : list) {
    std::string profile;
    MigItem item;
    if (it.IsScalar()) {
      profile = it.as<std::string>();
    } else if (it.IsMap()) {
      HASE_RETURN_IF_ERROR(yaml::CheckKeys(it, {"profile", "gi"}, "mig item", where));
      HASE_ASSIGN_OR_RETURN(auto p, yaml::Field<std::string>(it, "profile", where));
      HASE_ASSIGN_OR_RETURN(auto gi, yaml::Field<int>(it, "gi", where));
      if (!p) {
        return Status::InvalidArgument("a mig item without 'profile'", yaml::At(where, it),
                                       "write a profile name or {profile: 1g.5gb, gi: 7}");
      }
      profile = *p;
      if (gi) {
        if (*gi < 0 || !gis.insert(*gi).second) {
          return Status::InvalidArgument(fmt::format("gi {} is negative or given twice on one GPU", *gi),
                                         yaml::At(where, it["gi"]), "gi is the GPU_I_ID nvidia-smi mig -lgi lists");
        }
        item.gi = *gi;
      }
    } else {
      return Status::InvalidArgument("a mig item must be a profile name or {profile, gi}",
                                     yaml::At(where, it));
    }
    Result<const GpuSpec*> d = catalog.FindMig(parent.id, profile);
    if (!d.ok()) return d.status().WithContext(yaml::At(where, it));
    item.spec = *d;
    const MigProfile& p = *parent.mig.Find(profile);
    compute += p.compute_slices;
    memory += p.memory_slices;
    if (++per_profile[p.name] > p.max_instances) {
      return Status::InvalidArgument(
          fmt::format("{} holds at most {} {} instance(s)", parent.id, p.max_instances, p.name),
          yaml::At(where, it), "MIG User Guide, Supported MIG Profiles");
    }
    items.push_back(item);
  }
  if (compute > parent.mig.compute_slices || memory > parent.mig.memory_slices) {
    return Status::InvalidArgument(
        fmt::format("MIG instances need {} compute and {} memory slices; {} has {} and {}", compute,
                    memory, parent.id, parent.mig.compute_slices, parent.mig.memory_slices),
        yaml::At(where, list), "drop or shrink an instance (valid profiles: " + parent.mig.ProfileNames() + ")");
  }
  return items;
}

int TypeIndexFor(const GpuSpec& g, Cluster& c) {
  int type_index = c.TypeIndex(g.id);
  if (type_index < 0) {
    c.types.push_back({g.id, g.memory_gib * kMibPerGib, g.fp32_tflops, g.memory_bandwidth_gbps, g.mig_profile});
    type_index = static_cast<int>(c.types.size()) - 1;
  }
  return type_index;
}

Status AddGpus(const YAML::Node& spec, const std::string& node_name, const std::string& where,
               int node_max_tasks, const GpuCatalog& catalog, Cluster& c) {
  if (!spec.IsMap()) {
    return Status::InvalidArgument("a gpus entry must be a map {type, count}",
                                   yaml::At(where, spec));
  }
  HASE_RETURN_IF_ERROR(yaml::CheckKeys(spec, {"type", "count", "memory_mib", "max_tasks", "mig"}, "gpu", where));
  HASE_ASSIGN_OR_RETURN(auto type, yaml::Field<std::string>(spec, "type", where));
  if (!type) {
    return Status::InvalidArgument("gpus entry without 'type'", yaml::At(where, spec),
                                   "give a catalog GPU type, e.g. type: A100-SXM4-40GB");
  }
  HASE_ASSIGN_OR_RETURN(auto count, yaml::Field<int>(spec, "count", where));
  HASE_ASSIGN_OR_RETURN(auto memory, yaml::Field<double>(spec, "memory_mib", where));
  HASE_ASSIGN_OR_RETURN(auto max_tasks, yaml::Field<int>(spec, "max_tasks", where));
  const int n = count.value_or(1);
  if (n < 1 || n > kMaxClusterGpus || c.gpus.size() + n > static_cast<size_t>(kMaxClusterGpus)) {
    return Status::InvalidArgument(
        fmt::format("count must be >= 1 and the cluster at most {} GPUs", kMaxClusterGpus),
        yaml::At(where, spec["count"]), "split the fleet into several hase instances");
  }
  Result<const GpuSpec*> found = catalog.Find(*type);
  if (!found.ok()) return found.status().WithContext(yaml::At(where, spec["type"]));
  const GpuSpec& g = **found;
  std::vector<MigItem> mig;
  if (spec["mig"] && !spec["mig"].IsNull()) {
    if (memory) {
      return Status::InvalidArgument("memory_mib cannot be combined with mig", yaml::At(where, spec["memory_mib"]),
                                     "each MIG instance has its profile's memory");
    }
    HASE_ASSIGN_OR_RETURN(mig, ParseMig(spec["mig"], g, where, catalog));
    if (c.gpus.size() + static_cast<size_t>(n) * mig.size() > static_cast<size_t>(kMaxClusterGpus)) {
      return Status::InvalidArgument(fmt::format("the cluster would have more than {} GPUs", kMaxClusterGpus),
                                     yaml::At(where, spec), "split the fleet into several hase instances");
    }
  }
  // A partitioned GPU adds only its instances' types (no Gpu of the parent type exists).
  const int type_index = mig.empty() ? TypeIndexFor(g, c) : -1;
  const double type_mem = g.memory_gib * kMibPerGib;
  if (memory && (*memory <= 0 || *memory > type_mem)) {
    return Status::InvalidArgument(
        fmt::format("memory_mib must be in (0, {:.0f}] for {}", type_mem, g.id),
        yaml::At(where, spec["memory_mib"]));
  }
  const int mt = max_tasks.value_or(node_max_tasks);
  if (mt < 1 || mt > kMaxTasksPerGpu) {
    return Status::InvalidArgument(fmt::format("max_tasks must be in 1..{}", kMaxTasksPerGpu),
                                   yaml::At(where, spec["max_tasks"]));
  }
  // GPUs of one node are added together: count this node's from the end (O(its GPUs), not
  // O(cluster) per entry, which made 10^5 nodes take minutes).
  int index = 0;
  for (auto it = c.gpus.rbegin(); it != c.gpus.rend() && it->node == node_name; ++it) {
    if (it->mig_slot <= 0) ++index;  // the instances of one GPU count once
  }
  for (int i = 0; i < n; ++i) {
    if (!mig.empty()) {
      const int physical = index++;
      for (size_t k = 0; k < mig.size(); ++k) {
        Gpu gpu;
        gpu.id = static_cast<int>(c.gpus.size());
        gpu.node = node_name;
        gpu.index = physical;
        gpu.type = TypeIndexFor(*mig[k].spec, c);
        gpu.memory_mib = mig[k].spec->memory_gib * kMibPerGib;
        gpu.max_tasks = mt;
        gpu.mig_profile = mig[k].spec->mig_profile;
        gpu.mig_slot = static_cast<int>(k);
        gpu.mig_gpu_instance = mig[k].gi;
        c.gpus.push_back(gpu);
      }
      continue;
    }
    Gpu gpu;
    gpu.id = static_cast<int>(c.gpus.size());
    gpu.node = node_name;
    gpu.index = index++;
    gpu.type = type_index;
    gpu.memory_mib = memory.value_or(type_mem);
    gpu.max_tasks = mt;
    c.gpus.push_back(gpu);
  }
  return Status::OK();
}

}  // namespace

Result<Cluster> ParseClusterYaml(std::string_view text, const std::string& where,
                                 const GpuCatalog& catalog) {
  if (text.size() > kMaxClusterFileBytes) {
    return Status::InvalidArgument(
        fmt::format("cluster file is {} bytes; at most {} are read", text.size(),
                    kMaxClusterFileBytes),
        where, "use node `count:` for identical nodes");
  }
  HASE_RETURN_IF_ERROR(yaml::CheckAliases(text, where));
  HASE_ASSIGN_OR_RETURN(YAML::Node root, yaml::Load(text, where));
  if (!root.IsMap()) {
    return Status::InvalidArgument("a cluster file must be a map with 'nodes'",
                                   yaml::At(where, root), "see examples/cluster.yaml");
  }
  // teams, default_team, fair_share, preemption: team_config.h reads them from the same file.
  HASE_RETURN_IF_ERROR(yaml::CheckKeys(
      root, {"name", "max_tasks_per_gpu", "nodes", "teams", "default_team", "fair_share", "preemption"}, "cluster",
      where));
  Cluster c;
  HASE_ASSIGN_OR_RETURN(auto name, yaml::Field<std::string>(root, "name", where));
  c.name = name.value_or("cluster");
  HASE_ASSIGN_OR_RETURN(auto max_tasks, yaml::Field<int>(root, "max_tasks_per_gpu", where));
  const int default_max = max_tasks.value_or(kDefaultMaxTasks);
  if (default_max < 1 || default_max > kMaxTasksPerGpu) {
    return Status::InvalidArgument(fmt::format("max_tasks_per_gpu must be in 1..{}", kMaxTasksPerGpu),
                                   yaml::At(where, root["max_tasks_per_gpu"]));
  }
  const YAML::Node nodes = root["nodes"];
  if (!nodes || !nodes.IsSequence()) {
    return Status::InvalidArgument("'nodes' must be a list", yaml::At(where, root),
                                   "see examples/cluster.yaml");
  }
  int nodes_seen = 0;
  std::set<std::string> node_names;
  for (const YAML::Node& node : nodes) {
    if (!node.IsMap()) {
      return Status::InvalidArgument("a node must be a map {name, gpus}", yaml::At(where, node));
    }
    HASE_RETURN_IF_ERROR(yaml::CheckKeys(node, {"name", "count", "max_tasks_per_gpu", "gpus"}, "node", where));
    HASE_ASSIGN_OR_RETURN(auto node_name, yaml::Field<std::string>(node, "name", where));
    if (!node_name) return Status::InvalidArgument("node without 'name'", yaml::At(where, node));
    if (!node_names.insert(*node_name).second) {
      return Status::InvalidArgument(fmt::format("node '{}' twice", *node_name), yaml::At(where, node),
                                     "give each node its own name (its GPUs are told apart by node and index)");
    }
    HASE_ASSIGN_OR_RETURN(auto count, yaml::Field<int>(node, "count", where));
    HASE_ASSIGN_OR_RETURN(auto node_max, yaml::Field<int>(node, "max_tasks_per_gpu", where));
    if (count && (*count < 1 || *count > kMaxClusterNodes)) {
      return Status::InvalidArgument(fmt::format("node count must be in 1..{}", kMaxClusterNodes),
                                     yaml::At(where, node["count"]));
    }
    const YAML::Node gpus = node["gpus"];
    if (!gpus) return Status::InvalidArgument("node without 'gpus'", yaml::At(where, node));
    for (int k = 0; k < count.value_or(1); ++k) {
      if (++nodes_seen > kMaxClusterNodes) {
        return Status::InvalidArgument(fmt::format("more than {} nodes", kMaxClusterNodes),
                                       yaml::At(where, node), "split the fleet");
      }
      const std::string n = count ? fmt::format("{}-{}", *node_name, k) : *node_name;
      if (gpus.IsSequence()) {
        for (const YAML::Node& spec : gpus) {
          HASE_RETURN_IF_ERROR(
              AddGpus(spec, n, where, node_max.value_or(default_max), catalog, c));
        }
      } else {
        HASE_RETURN_IF_ERROR(AddGpus(gpus, n, where, node_max.value_or(default_max), catalog, c));
      }
    }
  }
  HASE_RETURN_IF_ERROR(c.Validate().WithContext(where));
  return c;
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IO(fmt::format("cannot read file: {}", std::strerror(errno)), path,
                      "check the path");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<Cluster> LoadClusterFile(const std::string& path, const GpuCatalog& catalog) {
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseClusterYaml(text, path, catalog);
}

}  // namespace hase::sched
