// `hase queue [--url URL] [--token-file F] [--format table|json]`: the live queue of a running
// `hase serve`, like `squeue --start`: one row per running, bound and queued task with its GPU,
// (predicted) start and end in ISO 8601 UTC, and why a queued task is not running; a header
// with the queue's predicted drain time and critical path. Reads GET /v1/queue and
// GET /v1/tasks?state=running|bound (docs/service.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/plan_table.h"
#include "cli/rest_client.h"
#include "hase/base/iso_time.h"
#include "hase/base/seconds_text.h"

namespace hase::cli {
namespace {

using nlohmann::json;

struct QueueFlags {
  std::string url = "http://127.0.0.1:8080";
  std::string token_file;
  std::string format = "table";
};

int Run(const QueueFlags& f) {
  if (f.format != "table" && f.format != "json") {
    return Fail(Status::InvalidArgument("must be table or json, not '" + f.format + "'", "--format"));
  }
  Result<std::unique_ptr<RestClient>> client = RestClient::Open(f.url, f.token_file, "--url", 30);
  if (!client.ok()) return Fail(client.status());
  const std::string old_daemon = "is this a hase serve of this version?";
  Result<json> q = (*client)->Get("/v1/queue", old_daemon);
  if (!q.ok()) return Fail(q.status());
  json placed_tasks = json::array();
  for (const char* state : {"running", "bound"}) {
    Result<json> l = (*client)->Get(std::string("/v1/tasks?limit=10000&state=") + state, old_daemon);
    if (!l.ok()) return Fail(l.status());
    for (const json& t : (*l)["tasks"]) placed_tasks.push_back(t);
  }
  std::sort(placed_tasks.begin(), placed_tasks.end(),
            [](const json& a, const json& b) { return a["id"].get<int64_t>() < b["id"].get<int64_t>(); });
  if (f.format == "json") {
    json out = *q;
    out["placed_tasks"] = placed_tasks;
    std::printf("%s\n", out.dump(2, ' ', false, json::error_handler_t::replace).c_str());
    return 0;
  }
  // The plan's view of placed tasks (predicted end as of the last pass, GPU type).
  std::map<int64_t, json> plan_of;
  for (const json& p : (*q)["placed"]) plan_of[p["id"].get<int64_t>()] = p;
  std::string out;
  const double eta = JsonNumber(*q, "eta_s");
  const double at = JsonNumber(*q, "planned_at_s");
  out += fmt::format("queue: {} queued, {} running, {} bound; drains at {} (in {}), planned at {} by {}{}\n",
                     (*q).value("queued", 0), (*q).value("running", 0), (*q).value("bound", 0), IsoUtc(eta),
                     SecondsText(eta - at), IsoUtc(at), (*q)["plan"].value("policy", std::string("?")),
                     (*q)["plan"].value("complete", true) ? "" : " (partly extrapolated: plan budget reached)");
  if (const int n = (*q).value("unplanned", 0); n > 0) {
    out += fmt::format("{} queued task(s) have no start: see REASON\n", n);
  }
  out += CriticalPathLine(*q);
  std::vector<PlacedRow> placed;
  for (const json& t : placed_tasks) {
    PlacedRow r;
    r.id = t["id"].get<int64_t>();
    auto p = plan_of.find(r.id);
    r.model = t.value("model", std::string());
    r.state = t.value("state", std::string());
    r.gpu = p != plan_of.end() && !t["gpu"].contains("indices") ? p->second["gpu"] : t["gpu"];  // k GPUs: all
    r.start_s = JsonNumber(t["times"], "started_s");
    if (!(r.start_s > 0)) r.start_s = JsonNumber(t["predicted"], "start_s");
    r.end_s = p != plan_of.end() ? JsonNumber(p->second, "end_s") : JsonNumber(t["predicted"], "end_s");
    placed.push_back(r);
  }
  out += PlanRowsText(placed, *q);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

Command AddQueueCommand(CLI::App& parent) {
  auto flags = std::make_shared<QueueFlags>();
  Command c;
  c.app = parent.add_subcommand(
      "queue", "show a running `hase serve`'s queue: per task its GPU, predicted start and end, and why it waits");
  c.app->add_option("--url", flags->url, "the daemon's REST address")->capture_default_str();
  c.app->add_option("--token-file", flags->token_file, "bearer token file (as `hase serve --token-file`)");
  c.app->add_option("--format", flags->format, "table or json")->capture_default_str();
  c.run = [flags] { return Run(*flags); };
  return c;
}

}  // namespace hase::cli
