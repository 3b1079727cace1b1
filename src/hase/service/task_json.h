// JSON forms of TaskSpec and TaskRecord: the REST API's bodies and the journal's spec column.
//
// Submit body (POST /v1/tasks), every field but "model" optional:
//   {"key":"client-42","name":"r50","model":"resnet50","batch_size":8,
//    "input_shape":"3x224x224" | "input_size":224 (neither: the model's own; both must agree),
//    "num_batches":100 | "samples":800,"priority":0,"memory_mib":0,"command":"python run.py"}
// A record adds "id","state","gpu":{"id","node","index"} (null when unplaced), "times":
// {"submitted_s","placed_s","started_s","ended_s"}, "predicted":{"start_s","end_s",
// "isolated_ms","runtime_s"}, "actual":{"runtime_s"} (null until ended), "exit_code",
// "reason", "attempts".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"
#include "hase/service/task_record.h"

namespace hase::service {

// Decodes a submit body. Errors: InvalidArgument naming the field (missing model, a
// non-positive batch size, samples and num_batches both given, wrong types).
Result<TaskSpec> TaskSpecFromJson(const nlohmann::json& j);
nlohmann::json TaskSpecToJson(const TaskSpec& spec);
nlohmann::json TaskRecordToJson(const TaskRecord& r);
// How `sent` differs from `stored`, field by field in TaskSpecToJson's terms, for people:
// `batch_size 8 before, 16 now; command "a" before, "b" now`. "" when they are the same task
// (a "samples" body and the "num_batches" it comes to are the same).
std::string TaskSpecDifference(const TaskSpec& stored, const TaskSpec& sent);

}  // namespace hase::service
