#include "hase/predict/runtime_profile.h"
#include "hase/service/task_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "hase/sched/task.h"
#include "hase/sched/task_limits.h"
#include "hase/service/request_json.h"

namespace hase::service {
namespace {

using nlohmann::json;

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(what, "task field '" + field + "'",
                                 "see POST /v1/tasks in docs/service.md");
}

// An integer field: a JSON number with no fractional part ("batch_size":"8" is refused: the
// REST API is typed; Kubernetes annotations, which are strings, are converted by the extender).
// Its range is sched::CheckTaskField's (the workload files' rules).
Result<int64_t> GetInt(const json& j, const char* field, int64_t def) {
  if (!j.contains(field) || j[field].is_null()) return def;
  const json& v = j[field];
  const std::string where = "task field '" + std::string(field) + "'";
  int64_t out = 0;
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_unsigned()) {  // above INT64_MAX: out of every range
    HASE_RETURN_IF_ERROR(sched::CheckTaskField(field, static_cast<double>(v.get<uint64_t>()), where));
    return Bad(field, "is out of range");
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
             std::floor(v.get<double>()) == v.get<double>()) {
    HASE_RETURN_IF_ERROR(sched::CheckTaskField(field, v.get<double>(), where));
    out = static_cast<int64_t>(v.get<double>());
  } else if (v.is_number_float()) {
    return Bad(field, "must be an integer, not " + DescribeJsonValue(v));
  } else {
    return Bad(field, "must be an integer (a JSON number), not " + DescribeJsonValue(v));
  }
  HASE_RETURN_IF_ERROR(sched::CheckTaskField(field, static_cast<double>(out), where));
  return out;
}

// The fields a task body may have (docs/service.md), with the longest string each may hold.
struct FieldSpec {
  const char* name;
  size_t max_length;  // strings only; 0 = not a string field
};
constexpr FieldSpec kFields[] = {
    {"key", 256},       {"name", 256},         {"model", 4096},     {"batch_size", 0},
    {"input_size", 0},  {"num_batches", 0},    {"samples", 0},      {"priority", 0},
    {"memory_mib", 0},  {"gpus", 0},           {"command", 65536},  {"pod", 512},
    {"runtime", 64},    {"input_shape", 64},   {"team", 64},      {"parallel_efficiency", 0}};

// Unknown keys (a misspelt "num_batchs" used to be ignored: the task ran 1 batch) and
// over-long strings are refused at the door.
Status CheckFields(const json& j) {
  for (const auto& [key, value] : j.items()) {
    const FieldSpec* spec = nullptr;
    for (const FieldSpec& f : kFields) {
      if (key == f.name) spec = &f;
    }
    if (spec == nullptr) {
      std::string known;
      for (const FieldSpec& f : kFields) known += (known.empty() ? "" : ", ") + std::string(f.name);
      return Status::InvalidArgument("unknown task field", "task field '" + key + "'",
                                     "the fields are: " + known);
    }
    if (spec->max_length > 0 && value.is_string() &&
        value.get_ref<const std::string&>().size() > spec->max_length) {
      return Bad(key, "is longer than " + std::to_string(spec->max_length) + " bytes");
    }
  }
  return Status::OK();
}

Result<std::string> GetString(const json& j, const char* field) {
  if (!j.contains(field) || j[field].is_null()) return std::string();
  if (!j[field].is_string()) return Bad(field, "must be a string, not " + DescribeJsonValue(j[field]));
  return j[field].get<std::string>();
}

json Or0(double v) { return v > 0 ? json(v) : json(nullptr); }

// "input_shape": the dims after the batch as "3x640x640" (as `hase kernels --input-shape`),
// 1–4 dims, each 1–65 536 (the input_size range). Absent or null: empty.
Result<std::vector<int64_t>> GetInputShape(const json& j) {
  if (!j.contains("input_shape") || j["input_shape"].is_null()) return std::vector<int64_t>{};
  const json& v = j["input_shape"];
  if (!v.is_string()) {
    return Bad("input_shape", "must be a string such as \"3x640x640\" (channels x height x width), not " +
                                  DescribeJsonValue(v));
  }
  Result<std::vector<int64_t>> dims = sched::ParseInputShapeText(v.get<std::string>());
  if (!dims.ok()) return Bad("input_shape", dims.status().message());
  return dims;
}

}  // namespace

Result<TaskSpec> TaskSpecFromJson(const json& j) {
  if (!j.is_object()) {
    return Status::InvalidArgument("task body must be a JSON object, not " + DescribeJsonValue(j), "body",
                                   "see POST /v1/tasks in docs/service.md");
  }
  HASE_RETURN_IF_ERROR(CheckFields(j));
  TaskSpec s;
  HASE_ASSIGN_OR_RETURN(s.key, GetString(j, "key"));
  HASE_ASSIGN_OR_RETURN(s.name, GetString(j, "name"));
  HASE_ASSIGN_OR_RETURN(s.model, GetString(j, "model"));
  if (s.model.empty()) return Bad("model", "is required (a zoo name such as \"resnet50\")");
  // The daemon opens the model: confine it to the model directory (--models / the latency
  // table). A path ("../../etc/passwd", "/dev/zero.onnx") is refused; a custom model is put in
  // the model directory and named by its file stem.
  const bool bare = s.model.find_first_of("/\\") == std::string::npos && s.model[0] != '.' &&
                    std::all_of(s.model.begin(), s.model.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                             c == '-' || c == '.';
                    });
  if (!bare) {
    return Bad("model", "must be a model name from the daemon's model directory (letters, "
                        "digits, '_', '-', '.'; no path)");
  }
  HASE_ASSIGN_OR_RETURN(s.batch_size, GetInt(j, "batch_size", 1));
  HASE_ASSIGN_OR_RETURN(s.input_size, GetInt(j, "input_size", 0));
  HASE_ASSIGN_OR_RETURN(s.input_shape, GetInputShape(j));
  if (s.input_size > 0 && !s.input_shape.empty() &&
      (s.input_shape.size() < 2 || s.input_shape[s.input_shape.size() - 1] != s.input_size ||
       s.input_shape[s.input_shape.size() - 2] != s.input_size)) {
    return Bad("input_size", "is " + std::to_string(s.input_size) + " but input_shape is " +
                                 sched::InputShapeText(s.input_shape) + "; give one of them");
  }
  const bool has_batches = j.contains("num_batches") && !j["num_batches"].is_null();
  const bool has_samples = j.contains("samples") && !j["samples"].is_null();
  if (has_batches && has_samples) return Bad("samples", "give either samples or num_batches, not both");
  if (has_samples) {
    HASE_ASSIGN_OR_RETURN(int64_t samples, GetInt(j, "samples", 1));
    s.num_batches = (samples + s.batch_size - 1) / s.batch_size;
  } else {
    HASE_ASSIGN_OR_RETURN(s.num_batches, GetInt(j, "num_batches", 1));
  }
  HASE_ASSIGN_OR_RETURN(int64_t prio, GetInt(j, "priority", 0));
  s.priority = static_cast<int>(prio);
  if (j.contains("memory_mib") && !j["memory_mib"].is_null()) {
    if (!j["memory_mib"].is_number()) {
      return Bad("memory_mib", "must be a number (MiB), not " + DescribeJsonValue(j["memory_mib"]));
    }
    HASE_RETURN_IF_ERROR(sched::CheckTaskField("memory_mib", j["memory_mib"].get<double>(),
                                               "task field 'memory_mib'"));
    s.memory_mib = j["memory_mib"].get<double>();
  }
  HASE_ASSIGN_OR_RETURN(int64_t gpus, GetInt(j, "gpus", 1));
  s.gpus = static_cast<int>(gpus);
  if (j.contains("parallel_efficiency") && !j["parallel_efficiency"].is_null()) {
    if (!j["parallel_efficiency"].is_number()) {
      return Bad("parallel_efficiency", "must be a number (0.01-1), not " + DescribeJsonValue(j["parallel_efficiency"]));
    }
    if (s.gpus == 1) return Bad("parallel_efficiency", "is given but gpus is 1: give \"gpus\": K (K > 1) with it");
    HASE_RETURN_IF_ERROR(sched::CheckTaskField("parallel_efficiency", j["parallel_efficiency"].get<double>(),
                                               "task field 'parallel_efficiency'"));
    s.parallel_efficiency = j["parallel_efficiency"].get<double>();
  }
  HASE_ASSIGN_OR_RETURN(s.command, GetString(j, "command"));
  HASE_ASSIGN_OR_RETURN(s.pod, GetString(j, "pod"));
  HASE_ASSIGN_OR_RETURN(s.runtime, GetString(j, "runtime"));
  HASE_ASSIGN_OR_RETURN(s.team, GetString(j, "team"));
  for (char c : s.team) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return Bad("team", "must be a team name (letters, digits, '_', '-', '.'), as listed by GET /v1/usage");
    }
  }
  if (!s.runtime.empty()) {
    Result<RuntimeProfile> rt = FindRuntime(s.runtime);
    if (!rt.ok()) return Bad("runtime", "is not a runtime: " + rt.status().hint());
    s.runtime = rt->name;
  }
  return s;
}

json TaskSpecToJson(const TaskSpec& s) {
  json j{{"key", s.key},           {"name", s.name},        {"model", s.model},
              {"batch_size", s.batch_size},
              {"input_size", s.input_size > 0 ? json(s.input_size) : json(nullptr)},
              {"input_shape", s.input_shape.empty() ? json(nullptr) : json(sched::InputShapeText(s.input_shape))},
              {"num_batches", s.num_batches}, {"priority", s.priority},
              {"memory_mib", s.memory_mib}, {"gpus", s.gpus},    {"command", s.command},
              {"pod", s.pod}, {"runtime", s.runtime.empty() ? json(nullptr) : json(s.runtime)}};
  if (!s.team.empty()) j["team"] = s.team;  // absent without teams: journal rows as before
  if (s.parallel_efficiency != 1.0) j["parallel_efficiency"] = s.parallel_efficiency;  // likewise
  return j;
}

std::string TaskSpecDifference(const TaskSpec& stored, const TaskSpec& sent) {
  // A row journalled before input_shape existed ("input_size":224 alone) is the 3x224x224 task.
  auto normal = [](TaskSpec s) {
    if (s.input_shape.empty() && s.input_size > 0) s.input_shape = {3, s.input_size, s.input_size};
    return s;
  };
  const json a = TaskSpecToJson(normal(stored)), b = TaskSpecToJson(normal(sent));
  std::string out;
  auto shown = [](const json& v) {
    std::string d = v.dump(-1, ' ', false, json::error_handler_t::replace);
    return d.size() > 40 ? d.substr(0, 40) + "..." : d;
  };
  for (const auto& [field, before] : a.items()) {
    const json& now = b.contains(field) ? b[field] : json(nullptr);
    if (before == now) continue;
    out += (out.empty() ? "" : "; ") + field + " " + shown(before) + " before, " + shown(now) + " now";
  }
  return out;
}

json TaskRecordToJson(const TaskRecord& r) {
  json j = TaskSpecToJson(r.spec);
  j["id"] = r.id;
  if (r.spec.name.empty()) j["name"] = "task-" + std::to_string(r.id);
  j["state"] = TaskStateName(r.state);
  j["gpu"] = r.gpu < 0 ? json(nullptr) : json{{"id", r.gpu}, {"node", r.node}, {"index", r.gpu_index}};
  if (!r.gang.empty()) {  // a k-GPU task: all its GPUs (sched/gang.h)
    j["gpu"]["ids"] = r.gang;
    j["gpu"]["indices"] = r.gang_indices;
  }
  j["times"] = {{"submitted_s", Or0(r.submitted_s)},
                {"placed_s", Or0(r.placed_s)},
                {"started_s", Or0(r.started_s)},
                {"ended_s", Or0(r.ended_s)}};
  j["predicted"] = r.gpu < 0 ? json(nullptr)
                             : json{{"start_s", r.predicted_start_s},
                                    {"end_s", r.predicted_end_s},
                                    {"isolated_ms", r.predicted_isolated_ms},
                                    {"runtime_s", r.predicted_end_s - r.predicted_start_s}};
  j["actual"] = (r.started_s > 0 && r.ended_s > 0) ? json{{"runtime_s", r.ended_s - r.started_s}}
                                                   : json(nullptr);
  j["exit_code"] = (r.state == TaskState::kSucceeded || r.state == TaskState::kFailed) ? json(r.exit_code)
                                                                                      : json(nullptr);
  j["reason"] = r.reason;
  j["attempts"] = r.attempts;
  return j;
}

}  // namespace hase::service
