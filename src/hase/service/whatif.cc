#include "hase/service/whatif.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "hase/base/iso_time.h"
#include "hase/service/request_json.h"
#include "hase/service/task_json.h"

namespace hase::service {
namespace {

using nlohmann::json;

Status Bad(const std::string& where, const std::string& what, const std::string& hint = "") {
  return Status::InvalidArgument(what, where, hint.empty() ? "see POST /v1/whatif in docs/service.md" : hint);
}

Status OnlyFields(const json& j, const std::string& where, std::initializer_list<const char*> fields) {
  for (const auto& [key, value] : j.items()) {
    if (std::none_of(fields.begin(), fields.end(), [&](const char* f) { return key == f; })) {
      std::string known;
      for (const char* f : fields) known += (known.empty() ? "" : ", ") + std::string(f);
      return Bad(where + " field '" + key + "'", "unknown field", "the fields are: " + known);
    }
  }
  return Status::OK();
}

Result<const json*> ArrayField(const json& j, const char* field) {
  if (!j.contains(field) || j[field].is_null()) return nullptr;
  if (!j[field].is_array()) return Bad(std::string("field '") + field + "'", "must be an array, not " + DescribeJsonValue(j[field]));
  return &j[field];
}

Result<std::string> NonEmptyString(const json& v, const std::string& where) {
  if (!v.is_string() || v.get<std::string>().empty()) {
    return Bad(where, "must be a non-empty string, not " + DescribeJsonValue(v));
  }
  return v.get<std::string>();
}

Result<WhatIfGpus> GpusFromJson(const json& g, const std::string& where) {
  if (!g.is_object()) return Bad(where, "must be an object {\"type\",\"count\",\"node\"}, not " + DescribeJsonValue(g));
  HASE_RETURN_IF_ERROR(OnlyFields(g, where, {"type", "count", "node", "max_tasks"}));
  WhatIfGpus out;
  if (!g.contains("type")) return Bad(where + " field 'type'", "is required (a GPU type such as \"A100-SXM4-40GB\")");
  HASE_ASSIGN_OR_RETURN(out.type, NonEmptyString(g["type"], where + " field 'type'"));
  if (g.contains("count") && !g["count"].is_null()) {
    HASE_ASSIGN_OR_RETURN(int64_t n, IntegerFromStringOrNumber(g["count"], where + " field 'count'"));
    if (n < 1 || n > kMaxWhatIfGpus) {
      return Bad(where + " field 'count'", fmt::format("must be from 1 to {}, not {}", kMaxWhatIfGpus, n));
    }
    out.count = static_cast<int>(n);
  }
  if (g.contains("node") && !g["node"].is_null()) {
    HASE_ASSIGN_OR_RETURN(out.node, NonEmptyString(g["node"], where + " field 'node'"));
  }
  if (g.contains("max_tasks") && !g["max_tasks"].is_null()) {
    HASE_ASSIGN_OR_RETURN(int64_t n, IntegerFromStringOrNumber(g["max_tasks"], where + " field 'max_tasks'"));
    if (n < 1 || n > 64) return Bad(where + " field 'max_tasks'", fmt::format("must be from 1 to 64, not {}", n));
    out.max_tasks = static_cast<int>(n);
  }
  return out;
}

}  // namespace

Result<WhatIf> WhatIfFromJson(const json& j) {
  if (!j.is_object()) return Bad("body", "what-if body must be a JSON object, not " + DescribeJsonValue(j));
  HASE_RETURN_IF_ERROR(OnlyFields(j, "body", {"add_gpus", "drain_nodes", "drain_gpus", "submit"}));
  WhatIf w;
  HASE_ASSIGN_OR_RETURN(const json* add, ArrayField(j, "add_gpus"));
  int64_t added = 0;
  if (add) {
    for (size_t i = 0; i < add->size(); ++i) {
      HASE_ASSIGN_OR_RETURN(WhatIfGpus g, GpusFromJson((*add)[i], fmt::format("add_gpus[{}]", i)));
      added += g.count;
      if (added > kMaxWhatIfGpus) {
        return Bad("field 'add_gpus'", fmt::format("adds more than {} GPUs", kMaxWhatIfGpus));
      }
      w.add_gpus.push_back(std::move(g));
    }
  }
  HASE_ASSIGN_OR_RETURN(const json* nodes, ArrayField(j, "drain_nodes"));
  if (nodes) {
    for (size_t i = 0; i < nodes->size(); ++i) {
      HASE_ASSIGN_OR_RETURN(std::string n, NonEmptyString((*nodes)[i], fmt::format("drain_nodes[{}]", i)));
      w.drain_nodes.push_back(std::move(n));
    }
  }
  HASE_ASSIGN_OR_RETURN(const json* gpus, ArrayField(j, "drain_gpus"));
  if (gpus) {
    for (size_t i = 0; i < gpus->size(); ++i) {
      const json& v = (*gpus)[i];
      if (v.is_number_integer()) {
        w.drain_gpus.push_back(std::to_string(v.get<int64_t>()));
      } else {
        HASE_ASSIGN_OR_RETURN(std::string s, NonEmptyString(v, fmt::format("drain_gpus[{}]", i)));
        w.drain_gpus.push_back(std::move(s));
      }
    }
  }
  HASE_ASSIGN_OR_RETURN(const json* submit, ArrayField(j, "submit"));
  if (submit) {
    if (submit->size() > static_cast<size_t>(kMaxWhatIfTasks)) {
      return Bad("field 'submit'", fmt::format("has {} tasks; at most {}", submit->size(), kMaxWhatIfTasks));
    }
    for (size_t i = 0; i < submit->size(); ++i) {
      Result<TaskSpec> s = TaskSpecFromJson((*submit)[i]);
      if (!s.ok()) return s.status().WithContext(fmt::format("submit[{}]", i));
      w.submit.push_back(std::move(*s));
    }
  }
  return w;
}

json WhatIfToJson(const WhatIf& w) {
  json add = json::array();
  for (const WhatIfGpus& g : w.add_gpus) {
    json x{{"type", g.type}, {"count", g.count}, {"node", g.node}};
    if (g.max_tasks > 0) x["max_tasks"] = g.max_tasks;
    add.push_back(std::move(x));
  }
  json submit = json::array();
  for (const TaskSpec& s : w.submit) submit.push_back(TaskSpecToJson(s));
  return json{{"add_gpus", add}, {"drain_nodes", w.drain_nodes}, {"drain_gpus", w.drain_gpus}, {"submit", submit}};
}

json WhatIfJson(const WhatIfResult& r) {
  json out = QueuePlanJson(*r.plan, r.plan->planned_at_s);
  const std::set<int64_t> submitted(r.submitted.begin(), r.submitted.end());
  const std::set<int64_t> requeued(r.requeued.begin(), r.requeued.end());
  for (json& t : out["tasks"]) {
    const int64_t id = t["id"].get<int64_t>();
    if (submitted.count(id)) t["whatif"] = true;
    if (requeued.count(id)) t["requeued"] = true;
  }
  for (json& p : out["placed"]) {
    auto it = r.placed_models.find(p["id"].get<int64_t>());
    if (it != r.placed_models.end()) p["model"] = it->second;
  }
  json added = json::array(), drained = json::array();
  for (const PlanGpu& g : r.added) added.push_back(PlanGpuJson(g));
  for (const PlanGpu& g : r.drained) drained.push_back(PlanGpuJson(g));
  const double base = r.baseline ? r.baseline->eta_s : r.plan->eta_s;
  const double change = r.plan->eta_s - base;
  out["whatif"] = json{{"added_gpus", added},
                       {"drained_gpus", drained},
                       {"submitted", r.submitted},
                       {"requeued", r.requeued},
                       {"baseline_eta_s", std::isfinite(base) ? json(base) : json(nullptr)},
                       {"baseline_eta", IsoUtc(base)},
                       {"eta_change_s", std::isfinite(change) ? json(change) : json(nullptr)}};
  return out;
}

}  // namespace hase::service
