#include "hase/service/task_json.h"

#include <cmath>

namespace hase::service {
namespace {

using nlohmann::json;

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(what, "task field '" + field + "'",
                                 "see POST /v1/tasks in docs/service.md");
}

Result<int64_t> GetInt(const json& j, const char* field, int64_t def, int64_t min) {
  if (!j.contains(field) || j[field].is_null()) return def;
  const json& v = j[field];
  int64_t out = 0;
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) {
    out = static_cast<int64_t>(v.get<double>());
  } else if (v.is_string()) {  // Kubernetes annotations are strings; accept "8" too
    try {
      size_t n = 0;
      out = std::stoll(v.get<std::string>(), &n);
      if (n != v.get<std::string>().size()) return Bad(field, "is not an integer");
    } catch (const std::exception&) {
      return Bad(field, "is not an integer");
    }
  } else {
    return Bad(field, "is not an integer");
  }
  if (out < min) return Bad(field, "must be >= " + std::to_string(min));
  return out;
}

Result<std::string> GetString(const json& j, const char* field) {
  if (!j.contains(field) || j[field].is_null()) return std::string();
  if (!j[field].is_string()) return Bad(field, "is not a string");
  return j[field].get<std::string>();
}

json Or0(double v) { return v > 0 ? json(v) : json(nullptr); }

}  // namespace

Result<TaskSpec> TaskSpecFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("task body is not a JSON object");
  TaskSpec s;
  HASE_ASSIGN_OR_RETURN(s.key, GetString(j, "key"));
  HASE_ASSIGN_OR_RETURN(s.name, GetString(j, "name"));
  HASE_ASSIGN_OR_RETURN(s.model, GetString(j, "model"));
  if (s.model.empty()) return Bad("model", "is required (a zoo name such as \"resnet50\" or an ONNX path)");
  HASE_ASSIGN_OR_RETURN(s.batch_size, GetInt(j, "batch_size", 1, 1));
  HASE_ASSIGN_OR_RETURN(s.input_size, GetInt(j, "input_size", 224, 1));
  const bool has_batches = j.contains("num_batches") && !j["num_batches"].is_null();
  const bool has_samples = j.contains("samples") && !j["samples"].is_null();
  if (has_batches && has_samples) return Bad("samples", "give either samples or num_batches, not both");
  if (has_samples) {
    HASE_ASSIGN_OR_RETURN(int64_t samples, GetInt(j, "samples", 1, 1));
    s.num_batches = (samples + s.batch_size - 1) / s.batch_size;
  } else {
    HASE_ASSIGN_OR_RETURN(s.num_batches, GetInt(j, "num_batches", 1, 1));
  }
  HASE_ASSIGN_OR_RETURN(int64_t prio, GetInt(j, "priority", 0, -1000000));
  s.priority = static_cast<int>(prio);
  if (j.contains("memory_mib") && !j["memory_mib"].is_null()) {
    if (!j["memory_mib"].is_number() || j["memory_mib"].get<double>() < 0) {
      return Bad("memory_mib", "must be a number >= 0 (MiB)");
    }
    s.memory_mib = j["memory_mib"].get<double>();
  }
  HASE_ASSIGN_OR_RETURN(int64_t gpus, GetInt(j, "gpus", 1, 1));
  s.gpus = static_cast<int>(gpus);
  HASE_ASSIGN_OR_RETURN(s.command, GetString(j, "command"));
  HASE_ASSIGN_OR_RETURN(s.pod, GetString(j, "pod"));
  return s;
}

json TaskSpecToJson(const TaskSpec& s) {
  return json{{"key", s.key},           {"name", s.name},        {"model", s.model},
              {"batch_size", s.batch_size}, {"input_size", s.input_size},
              {"num_batches", s.num_batches}, {"priority", s.priority},
              {"memory_mib", s.memory_mib}, {"gpus", s.gpus},    {"command", s.command},
              {"pod", s.pod}};
}

json TaskRecordToJson(const TaskRecord& r) {
  json j = TaskSpecToJson(r.spec);
  j["id"] = r.id;
  if (r.spec.name.empty()) j["name"] = "task-" + std::to_string(r.id);
  j["state"] = TaskStateName(r.state);
  j["gpu"] = r.gpu < 0 ? json(nullptr) : json{{"id", r.gpu}, {"node", r.node}, {"index", r.gpu_index}};
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
