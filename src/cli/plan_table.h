// The live plan as people read it: `hase queue` (GET /v1/queue) and `hase simulate --from`
// (POST /v1/whatif) print the same rows — per task its GPU (node/index type), (predicted) start
// and end in ISO 8601 UTC, and why a queued task is not running — and the same critical path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hase::cli {

// j[key] as a number; NaN when absent or not a number.
double JsonNumber(const nlohmann::json& j, const char* key);
// A plan GPU object ({"node","index","type"}) as "node/index TYPE"; "-" for null.
std::string PlanGpuText(const nlohmann::json& gpu);

// One running or bound task's row (queued tasks come from the plan itself).
struct PlacedRow {
  int64_t id = 0;
  std::string model, state;
  nlohmann::json gpu;  // plan GPU object
  double start_s = 0, end_s = 0;  // wall s
};

// "critical path: GPU a/0 A100-SXM4-40GB: tasks 1 -> 2 -> 3 (ends <ISO>)\n", or "" when the
// plan's critical path is empty.
std::string CriticalPathLine(const nlohmann::json& queue);
// The table: a header, `placed` rows, then one row per task of queue["tasks"] (state "queued",
// or "what-if" for a task a what-if submitted).
std::string PlanRowsText(const std::vector<PlacedRow>& placed, const nlohmann::json& queue);

}  // namespace hase::cli
