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
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hase/base/iso_time.h"
#include "hase/base/seconds_text.h"
#include "hase/service/api_auth.h"

namespace hase::cli {
namespace {

using nlohmann::json;

struct QueueFlags {
  std::string url = "http://127.0.0.1:8080";
  std::string token_file;
  std::string format = "table";
};

// GET `path` as JSON. Errors: IO (unreachable), the server's own error (code, message, hint)
// for a non-2xx answer, Parse for a body that is not JSON.
Result<json> GetJson(httplib::Client& client, const QueueFlags& f, const std::string& path) {
  httplib::Result res = client.Get(path);
  if (!res) {
    return Status::IO(fmt::format("cannot reach hase at {}: {}", f.url, httplib::to_string(res.error())), "--url",
                      "start `hase serve`, or pass --url http://HOST:PORT of a running one");
  }
  json body = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (res->status / 100 != 2) {
    std::string msg = fmt::format("GET {} answered HTTP {}", path, res->status);
    std::string hint;
    if (body.is_object() && body.contains("error") && body["error"].is_object()) {
      msg += ": " + body["error"].value("message", std::string());
      hint = body["error"].value("hint", std::string());
    }
    if (res->status == 401) return Status::InvalidArgument(msg, "--token-file", "pass --token-file with a token of the server's --token-file");
    if (res->status == 404) return Status::NotFound(msg, f.url, hint.empty() ? "is this a hase serve of this version?" : hint);
    return Status::IO(msg, f.url, hint);
  }
  if (body.is_discarded()) return Status::Parse("GET " + path + ": the answer is not JSON", f.url);
  return body;
}

double Num(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

std::string GpuText(const json& g) {
  if (!g.is_object()) return "-";
  std::string s = fmt::format("{}/{}", g.value("node", std::string("?")), g.value("index", -1));
  if (g.contains("type")) s += " " + g["type"].get<std::string>();
  return s;
}

int Run(const QueueFlags& f) {
  if (f.format != "table" && f.format != "json") {
    return Fail(Status::InvalidArgument("must be table or json, not '" + f.format + "'", "--format"));
  }
  httplib::Client client(f.url);
  if (!client.is_valid() || (f.url.rfind("http://", 0) != 0 && f.url.rfind("https://", 0) != 0)) {
    return Fail(Status::InvalidArgument("'" + f.url + "' is not a URL", "--url", "write it as http://HOST:PORT"));
  }
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  if (!f.token_file.empty()) {
    Result<std::vector<std::string>> tokens = service::LoadTokenFile(f.token_file);
    if (!tokens.ok()) return Fail(tokens.status().WithContext("--token-file"));
    client.set_bearer_token_auth(tokens->front());
  }
  Result<json> q = GetJson(client, f, "/v1/queue");
  if (!q.ok()) return Fail(q.status());
  json placed_tasks = json::array();
  for (const char* state : {"running", "bound"}) {
    Result<json> l = GetJson(client, f, std::string("/v1/tasks?limit=10000&state=") + state);
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
  const double eta = Num(*q, "eta_s");
  const double at = Num(*q, "planned_at_s");
  out += fmt::format("queue: {} queued, {} running, {} bound; drains at {} (in {}), planned at {} by {}{}\n",
                     (*q).value("queued", 0), (*q).value("running", 0), (*q).value("bound", 0), IsoUtc(eta),
                     SecondsText(eta - at), IsoUtc(at), (*q)["plan"].value("policy", std::string("?")),
                     (*q)["plan"].value("complete", true) ? "" : " (partly extrapolated: plan budget reached)");
  if (const int n = (*q).value("unplanned", 0); n > 0) {
    out += fmt::format("{} queued task(s) have no start: see REASON\n", n);
  }
  const json& cp = (*q)["critical_path"];
  if (!cp["tasks"].empty()) {
    std::string chain;
    for (const json& s : cp["tasks"]) chain += (chain.empty() ? "" : " -> ") + std::to_string(s["task"].get<int64_t>());
    out += fmt::format("critical path: GPU {}: tasks {} (ends {})\n", GpuText(cp["gpu"]), chain, IsoUtc(eta));
  }
  out += fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24} {}\n", "ID", "MODEL", "STATE", "GPU", "START", "END",
                     "REASON");
  auto row = [&](int64_t id, const std::string& model, const std::string& state, const std::string& gpu,
                 double start, double end, const std::string& reason) {
    out += fmt::format("{:>6}  {:<18} {:<8} {:<24} {:<24} {:<24} {}\n", id, model.substr(0, 18), state, gpu,
                       IsoUtc(start), IsoUtc(end), reason);
  };
  for (const json& t : placed_tasks) {
    const int64_t id = t["id"].get<int64_t>();
    auto p = plan_of.find(id);
    const json& gpu = p != plan_of.end() ? p->second["gpu"] : t["gpu"];
    double start = Num(t["times"], "started_s");
    if (!(start > 0)) start = Num(t["predicted"], "start_s");
    const double end = p != plan_of.end() ? Num(p->second, "end_s") : Num(t["predicted"], "end_s");
    row(id, t.value("model", std::string()), t.value("state", std::string()), GpuText(gpu), start, end, "");
  }
  for (const json& t : (*q)["tasks"]) {
    const json& pr = t["predicted"];
    row(t["id"].get<int64_t>(), t.value("model", std::string()), "queued", GpuText(pr["gpu"]),
        pr["start_s"].is_number() ? pr["start_s"].get<double>() : INFINITY,
        pr["end_s"].is_number() ? pr["end_s"].get<double>() : INFINITY, t["why"].value("text", std::string()));
  }
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
