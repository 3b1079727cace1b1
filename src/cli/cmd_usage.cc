// `hase usage [--url URL] [--token-file F] [--format table|json]`: the teams of a running
// `hase serve` (docs/teams.md), like `sshare`: per team its guaranteed / maximum GPUs, GPUs in
// use, queued (and held at its maximum) tasks, usage in reference-equivalent GPU-seconds
// (decayed and raw), plain GPU-seconds and fair-share factor. Reads GET /v1/usage.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/rest_client.h"

namespace hase::cli {
namespace {

using nlohmann::json;

struct UsageFlags {
  std::string url = "http://127.0.0.1:8080";
  std::string token_file;
  std::string format = "table";
};

double Num(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0; }

int Run(const UsageFlags& f) {
  if (f.format != "table" && f.format != "json") {
    return Fail(Status::InvalidArgument("must be table or json, not '" + f.format + "'", "--format"));
  }
  Result<std::unique_ptr<RestClient>> client = RestClient::Open(f.url, f.token_file, "--url", 30);
  if (!client.ok()) return Fail(client.status());
  Result<json> u = (*client)->Get("/v1/usage", "is this a hase serve with teams (docs/teams.md)?");
  if (!u.ok()) return Fail(u.status());
  if (f.format == "json") {
    std::printf("%s\n", u->dump(2, ' ', false, json::error_handler_t::replace).c_str());
    return 0;
  }
  if (!u->value("teams_enabled", false)) {
    std::printf("no teams configured (hase serve --teams FILE, docs/teams.md)\n");
    return 0;
  }
  const std::string ref = u->value("reference", std::string("reference"));
  std::string out = fmt::format("usage in {}-equivalent GPU-seconds, half-life {} s\n", ref, Num(*u, "half_life_s"));
  out += fmt::format("{:<14} {:>9} {:>6} {:>7} {:>5} {:>12} {:>12} {:>10} {:>10}\n", "TEAM", "GUAR/MAX", "IN USE",
                     "QUEUED", "HELD", "EQ S (DECAY)", "EQ S (RAW)", "GPU S", "FAIRSHARE");
  for (const json& t : (*u)["teams"]) {
    const std::string max = t["max_gpus"].is_null() ? "-" : std::to_string(t["max_gpus"].get<int>());
    out += fmt::format("{:<14} {:>9} {:>6} {:>7} {:>5} {:>12.1f} {:>12.1f} {:>10.1f} {:>10.4f}\n",
                       t.value("team", std::string()), fmt::format("{}/{}", t.value("guaranteed_gpus", 0), max),
                       t.value("gpus_in_use", 0), t.value("queued", 0), t.value("held", 0),
                       Num(t["usage"], "equivalent_s"), Num(t["usage"], "raw_equivalent_s"), Num(t["usage"], "gpu_s"),
                       Num(t["usage"], "fair_share"));
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

Command AddUsageCommand(CLI::App& parent) {
  auto flags = std::make_shared<UsageFlags>();
  Command c;
  c.app = parent.add_subcommand("usage", "show a running `hase serve`'s teams: quota, GPUs in use, usage in "
                                         "A100-equivalent GPU-seconds, fair share");
  c.app->add_option("--url", flags->url, "the daemon's REST address")->capture_default_str();
  c.app->add_option("--token-file", flags->token_file, "bearer token file (as `hase serve --token-file`)");
  c.app->add_option("--format", flags->format, "table or json")->capture_default_str();
  c.run = [flags] { return Run(*flags); };
  return c;
}

}  // namespace hase::cli
