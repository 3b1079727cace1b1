#include "hase/sched/team_config.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "hase/sched/cluster_file.h"
#include "hase/sched/yaml_reader.h"

namespace hase::sched {
namespace {

constexpr const char* kTeamKeys[] = {"name", "guaranteed_gpus", "max_gpus", "shares", "slurm_account", "namespaces"};
constexpr const char* kFairShareKeys[] = {"half_life_s", "reference"};
constexpr const char* kPreemptionKeys[] = {"enabled", "max_per_task", "min_run_s"};
constexpr const char* kHint = "see docs/teams.md for the schema";

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

template <size_t N>
Status KnownKeys(const YAML::Node& map, const char* const (&keys)[N], const std::string& what,
                 const std::string& where) {
  if (!map.IsMap()) return Status::InvalidArgument("'" + what + "' must be a map", yaml::At(where, map), kHint);
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>("");
    if (std::find(std::begin(keys), std::end(keys), key) == std::end(keys)) {
      return Status::InvalidArgument(fmt::format("unknown {} key '{}'", what, key), yaml::At(where, kv.first),
                                     fmt::format("keys: {}", fmt::join(keys, ", ")));
    }
  }
  return Status::OK();
}

}  // namespace

int TeamConfig::Find(const std::string& name) const {
  const std::string& n = name.empty() ? default_team : name;
  for (size_t i = 0; i < teams.size(); ++i) {
    if (teams[i].name == n) return static_cast<int>(i);
  }
  return -1;
}

std::string TeamConfig::TeamOfNamespace(const std::string& ns) const {
  for (const TeamQuota& t : teams) {
    if (std::find(t.namespaces.begin(), t.namespaces.end(), ns) != t.namespaces.end()) return t.name;
  }
  return "";
}

std::string TeamConfig::Names() const {
  std::string out;
  for (const TeamQuota& t : teams) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

Status TeamConfig::CheckAgainst(const Cluster& cluster) const {
  int64_t sum = 0;
  for (const TeamQuota& t : teams) sum += t.guaranteed_gpus;
  if (sum > static_cast<int64_t>(cluster.gpus.size())) {
    return Status::InvalidArgument(
        fmt::format("the teams' guaranteed_gpus add up to {}, the cluster has {} GPUs", sum, cluster.gpus.size()),
        "teams", "lower the guarantees: they must all fit at once (Kueue: nominal quotas within the cohort)");
  }
  return Status::OK();
}

Status TeamConfig::CheckTasks(const std::vector<Task>& tasks) const {
  if (!enabled()) return Status::OK();
  for (const Task& t : tasks) {
    if (TeamOf(t) < 0) {
      return Status::InvalidArgument(fmt::format("task {} names team '{}', which the cluster's teams do not list",
                                                 t.name, t.team),
                                     "workload", "teams: " + Names());
    }
  }
  return Status::OK();
}

Result<TeamConfig> ParseTeamConfig(std::string_view text, const std::string& where) {
  HASE_RETURN_IF_ERROR(yaml::CheckAliases(text, where));
  HASE_ASSIGN_OR_RETURN(YAML::Node root, yaml::Load(text, where));
  TeamConfig c;
  if (!root.IsMap()) return c;
  HASE_ASSIGN_OR_RETURN(auto def, yaml::Field<std::string>(root, "default_team", where));
  if (def) {
    if (!ValidName(*def)) {
      return Status::InvalidArgument("default_team '" + *def + "' is not a team name ([A-Za-z0-9_.-], 1-64)",
                                     yaml::At(where, root["default_team"]), kHint);
    }
    c.default_team = *def;
  }
  if (const YAML::Node fs = root["fair_share"]; fs && !fs.IsNull()) {
    HASE_RETURN_IF_ERROR(KnownKeys(fs, kFairShareKeys, "fair_share", where));
    HASE_ASSIGN_OR_RETURN(auto h, yaml::Field<double>(fs, "half_life_s", where));
    HASE_ASSIGN_OR_RETURN(auto ref, yaml::Field<std::string>(fs, "reference", where));
    if (h) {
      if (!(*h >= 0) || *h > 1e9) {
        return Status::InvalidArgument("half_life_s must be in [0, 1e9] seconds (0 = no decay)",
                                       yaml::At(where, fs["half_life_s"]), kHint);
      }
      c.fair_share.half_life_s = *h;
    }
    if (ref) c.fair_share.reference = *ref;
  }
  if (const YAML::Node pr = root["preemption"]; pr && !pr.IsNull()) {
    HASE_RETURN_IF_ERROR(KnownKeys(pr, kPreemptionKeys, "preemption", where));
    HASE_ASSIGN_OR_RETURN(auto en, yaml::Field<bool>(pr, "enabled", where));
    HASE_ASSIGN_OR_RETURN(auto n, yaml::Field<int>(pr, "max_per_task", where));
    HASE_ASSIGN_OR_RETURN(auto m, yaml::Field<double>(pr, "min_run_s", where));
    c.preemption.enabled = en.value_or(false);
    if (n) {
      if (*n < 0 || *n > 1000) {
        return Status::InvalidArgument("max_per_task must be in [0, 1000]", yaml::At(where, pr["max_per_task"]), kHint);
      }
      c.preemption.max_per_task = *n;
    }
    if (m) {
      if (!(*m >= 0) || *m > 1e9) {
        return Status::InvalidArgument("min_run_s must be in [0, 1e9] seconds", yaml::At(where, pr["min_run_s"]), kHint);
      }
      c.preemption.min_run_s = *m;
    }
  }
  const YAML::Node list = root["teams"];
  if (!list || list.IsNull()) return c;
  if (!list.IsSequence() || list.size() == 0) {
    return Status::InvalidArgument("'teams' must be a non-empty list", yaml::At(where, list), kHint);
  }
  std::map<std::string, std::string> ns_owner;
  for (const YAML::Node& e : list) {
    const std::string at = yaml::At(where, e);
    HASE_RETURN_IF_ERROR(KnownKeys(e, kTeamKeys, "team", where));
    TeamQuota q;
    HASE_ASSIGN_OR_RETURN(auto name, yaml::Field<std::string>(e, "name", where));
    HASE_ASSIGN_OR_RETURN(auto g, yaml::Field<int>(e, "guaranteed_gpus", where));
    HASE_ASSIGN_OR_RETURN(auto mx, yaml::Field<int>(e, "max_gpus", where));
    HASE_ASSIGN_OR_RETURN(auto sh, yaml::Field<double>(e, "shares", where));
    HASE_ASSIGN_OR_RETURN(auto acct, yaml::Field<std::string>(e, "slurm_account", where));
    if (!name || !ValidName(*name)) {
      return Status::InvalidArgument("a team needs a 'name' of 1-64 characters [A-Za-z0-9_.-]", at, kHint);
    }
    if (c.Find(*name) >= 0) {
      return Status::InvalidArgument("team '" + *name + "' is listed twice", at, kHint);
    }
    q.name = *name;
    q.guaranteed_gpus = g.value_or(0);
    if (q.guaranteed_gpus < 0 || q.guaranteed_gpus > 100000) {
      return Status::InvalidArgument("guaranteed_gpus must be in [0, 100000]", at, kHint);
    }
    if (mx) {
      if (*mx < q.guaranteed_gpus || *mx < 1) {
        return Status::InvalidArgument(
            fmt::format("max_gpus {} is below guaranteed_gpus {} (or below 1)", *mx, q.guaranteed_gpus), at, kHint);
      }
      q.max_gpus = *mx;
    }
    q.shares = sh.value_or(1.0);
    if (!(q.shares > 0) || q.shares > 1e6) return Status::InvalidArgument("shares must be in (0, 1e6]", at, kHint);
    q.slurm_account = acct.value_or("");
    if (const YAML::Node ns = e["namespaces"]; ns && !ns.IsNull()) {
      if (!ns.IsSequence()) return Status::InvalidArgument("'namespaces' must be a list", yaml::At(where, ns), kHint);
      for (const YAML::Node& n : ns) {
        const std::string s = n.as<std::string>("");
        if (s.empty()) return Status::InvalidArgument("an empty namespace", yaml::At(where, n), kHint);
        auto [it, fresh] = ns_owner.emplace(s, q.name);
        if (!fresh) {
          return Status::InvalidArgument(
              fmt::format("namespace '{}' is mapped to teams '{}' and '{}'", s, it->second, q.name),
              yaml::At(where, n), "a namespace belongs to one team");
        }
        q.namespaces.push_back(s);
      }
    }
    c.teams.push_back(std::move(q));
  }
  if (c.Find("") < 0) {
    TeamQuota d;
    d.name = c.default_team;  // guaranteed 0, no maximum: borrows only what others leave idle
    c.teams.push_back(d);
  }
  return c;
}

Result<TeamConfig> LoadTeamConfig(const std::string& path) {
  HASE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseTeamConfig(text, path);
}

}  // namespace hase::sched
