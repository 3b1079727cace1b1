#include "cli/simulate_from.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/plan_table.h"
#include "cli/rest_client.h"
#include "hase/base/iso_time.h"
#include "hase/base/seconds_text.h"
#include "hase/predict/latency_calibration.h"
#include "hase/sched/task.h"
#include "hase/sched/workload_file.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/sched/cluster_file.h"
#include "hase/service/api_server.h"
#include "hase/service/daemon.h"
#include "hase/service/instance_lock.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/predict/runtime_profile.h"
#include "hase/sim/predictor_oracle.h"

namespace hase::cli {
namespace {

using nlohmann::json;

// A workload file's task as a POST /v1/tasks body (its arrival time is not sent: the what-if
// submits every task now).
json TaskBody(const sched::Task& t) {
  json b{{"name", t.name}, {"model", t.model}, {"batch_size", t.batch_size}, {"num_batches", t.num_batches},
         {"priority", t.priority}};
  if (!t.input_shape.empty()) {
    b["input_shape"] = sched::InputShapeText(t.input_shape);
  } else if (t.input_size > 0) {
    b["input_size"] = t.input_size;
  }
  if (t.memory_mib > 0) b["memory_mib"] = t.memory_mib;
  if (!t.runtime.empty()) b["runtime"] = t.runtime;
  return b;
}

// POST /v1/whatif. Errors: IO (unreachable, 5xx), InvalidArgument (401, 400), NotFound (404:
// an unknown node, GPU or type; or a daemon without /v1/whatif), Parse (not JSON).
Result<json> PostWhatIf(const SimulateFromFlags& f, const json& body) {
  HASE_ASSIGN_OR_RETURN(std::unique_ptr<RestClient> client, RestClient::Open(f.url, f.token_file, "--from", 120));
  const std::string text = body.dump();
  if (text.size() > service::kMaxBodyBytes) {
    return Status::InvalidArgument(
        fmt::format("the what-if request is {:.1f} MiB ({} tasks to submit); the daemon takes at most {} MiB",
                    text.size() / 1048576.0, body["submit"].size(), service::kMaxBodyBytes >> 20),
        "--workload", "submit fewer tasks (about 9 000 fit), or use --from-state DIR offline");
  }
  return client->Post("/v1/whatif", text, "is this a hase serve with POST /v1/whatif?");
}

// The answer as `hase queue` prints the live plan, with a what-if header.
std::string Table(const json& q) {
  std::string out;
  const json& w = q["whatif"];
  std::vector<std::string> changes;
  if (!w["added_gpus"].empty()) {
    std::string s;
    for (const json& g : w["added_gpus"]) s += (s.empty() ? "" : ", ") + PlanGpuText(g);
    changes.push_back(fmt::format("added {} GPU(s): {}", w["added_gpus"].size(), s));
  }
  if (!w["drained_gpus"].empty()) {
    std::string s;
    for (const json& g : w["drained_gpus"]) s += (s.empty() ? "" : ", ") + PlanGpuText(g);
    changes.push_back(fmt::format("drained {} GPU(s): {}", w["drained_gpus"].size(), s));
  }
  if (!w["requeued"].empty()) changes.push_back(fmt::format("{} bound task(s) back in the queue", w["requeued"].size()));
  if (!w["submitted"].empty()) {
    changes.push_back(fmt::format("submitted {} task(s) (ids {}..{})", w["submitted"].size(),
                                  w["submitted"].front().get<int64_t>(), w["submitted"].back().get<int64_t>()));
  }
  std::string all;
  for (const std::string& c : changes) all += (all.empty() ? "" : "; ") + c;
  out += "what-if: " + (all.empty() ? std::string("no change") : all) + "\n";
  const double eta = JsonNumber(q, "eta_s"), base = JsonNumber(w, "baseline_eta_s"), change = JsonNumber(w, "eta_change_s");
  const double at = JsonNumber(q, "planned_at_s");
  out += fmt::format("queue ETA: {} (in {}); without the change {} (in {}): {}\n", IsoUtc(eta),
                     SecondsText(eta - at), IsoUtc(base), SecondsText(base - at),
                     std::isfinite(change) ? fmt::format("{:+.1f} s", change) : std::string("n/a"));
  out += fmt::format("queue: {} queued, {} running, {} bound; planned at {} by {}{}\n", q.value("queued", 0),
                     q.value("running", 0), q.value("bound", 0), IsoUtc(at), q["plan"].value("policy", std::string("?")),
                     q["plan"].value("complete", true) ? "" : " (partly extrapolated: plan budget reached)");
  if (const int n = q.value("unplanned", 0); n > 0) out += fmt::format("{} queued task(s) have no start: see REASON\n", n);
  out += CriticalPathLine(q);
  std::vector<PlacedRow> placed;
  for (const json& p : q["placed"]) {
    placed.push_back({p["id"].get<int64_t>(), p.value("model", std::string()), p.value("state", std::string()), p["gpu"],
                      JsonNumber(p, "start_s"), JsonNumber(p, "end_s")});
  }
  out += PlanRowsText(placed, q);
  return out;
}

}  // namespace

Result<service::WhatIfGpus> ParseAddGpus(const std::string& text) {
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument("'" + text + "': " + what, "--add-gpus",
                                   "write TYPE:COUNT[@NODE], e.g. A100-SXM4-40GB:4@new-0");
  };
  service::WhatIfGpus g;
  std::string rest = text;
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    g.node = rest.substr(at + 1);
    rest = rest.substr(0, at);
    if (g.node.empty()) return bad("the node after '@' is empty");
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string n = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    int count = 0;
    size_t used = 0;
    try {
      count = std::stoi(n, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (n.empty() || used != n.size() || count < 1 || count > service::kMaxWhatIfGpus) {
      return bad(fmt::format("COUNT must be a whole number from 1 to {}, not '{}'", service::kMaxWhatIfGpus, n));
    }
    g.count = count;
  }
  if (rest.empty()) return bad("the GPU type is empty");
  g.type = rest;
  return g;
}

namespace {

// The request body from the flags (the workload's tasks as POST /v1/tasks bodies).
Result<json> RequestBody(const SimulateFromFlags& f) {
  if (f.format != "table" && f.format != "json") {
    return Status::InvalidArgument("must be table or json, not '" + f.format + "'", "--format");
  }
  service::WhatIf w;
  for (const std::string& a : f.add_gpus) {
    HASE_ASSIGN_OR_RETURN(service::WhatIfGpus g, ParseAddGpus(a));
    w.add_gpus.push_back(std::move(g));
  }
  w.drain_nodes = f.drain_nodes;
  w.drain_gpus = f.drain_gpus;
  json body = service::WhatIfToJson(w);
  if (!f.workload.empty()) {
    HASE_ASSIGN_OR_RETURN(std::vector<sched::Task> tasks, sched::LoadWorkloadFile(f.workload));
    for (const sched::Task& t : tasks) body["submit"].push_back(TaskBody(t));
  }
  return body;
}

int Print(const SimulateFromFlags& f, const json& answer) {
  if (f.format == "json") {
    std::printf("%s\n", answer.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    std::fputs(Table(answer).c_str(), stdout);
  }
  return 0;
}

// A fresh directory under the system's temporary directory; removed with it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / fmt::format("hase-whatif-{:x}", (uint64_t{rd()} << 32) | rd());
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

int RunSimulateFrom(const SimulateFromFlags& f) {
  Result<json> body = RequestBody(f);
  if (!body.ok()) return Fail(body.status());
  Result<json> answer = PostWhatIf(f, *body);
  if (!answer.ok()) return Fail(answer.status());
  return Print(f, *answer);
}

int RunSimulateFromState(const SimulateFromFlags& f) {
  Result<json> body = RequestBody(f);
  if (!body.ok()) return Fail(body.status());
  Result<service::WhatIf> w = service::WhatIfFromJson(*body);
  if (!w.ok()) return Fail(w.status());
  const std::filesystem::path db = std::filesystem::path(f.state_dir) / "hase.db";
  if (!std::filesystem::is_regular_file(db)) {
    return Fail(Status::NotFound("no journal " + db.string(), "--from-state",
                                 "give the --state directory of a stopped `hase serve`; for a running one use --from URL"));
  }
  if (const auto holder = service::InstanceLock::ReadHolder(f.state_dir);
      holder && !holder->released && holder->expires_s > telemetry::WallClockSeconds()) {
    // Read-only and safe (a copy of the journal), but the running daemon's own plan is better.
    std::fprintf(stderr,
                 "hase: warning: --from-state %s: a hase serve holds it (%s); this plans from a copy of its journal "
                 "as of now; for the daemon's live state use --from http://%s\n",
                 f.state_dir.c_str(), holder->Describe(telemetry::WallClockSeconds()).c_str(), holder->listen.c_str());
  }
  if (f.cluster.empty()) {
    return Fail(Status::InvalidArgument("--from-state needs the daemon's cluster file", "--config",
                                        "pass --config CLUSTER.yaml, the file `hase serve --config` had"));
  }
  Result<GpuCatalog> catalog = GpuCatalog::Load(f.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  Result<sched::Cluster> cluster = sched::LoadClusterFile(f.cluster, *catalog);
  if (!cluster.ok()) return Fail(cluster.status());
  sim::PredictorOracleOptions po;
  po.models_dir = f.models;
  if (Status s = sim::SetRuntimeAndPrecision(f.runtime, f.precision, po); !s.ok()) return Fail(s);
  {
    auto cal = LoadCalibrationFlag(f.calibration);
    if (!cal.ok()) return Fail(cal.status());
    po.calibration = std::make_shared<const LatencyCalibration>(std::move(*cal));
  }
  auto oracle = std::make_shared<sim::PredictorOracle>(*catalog, po);
  // The journal is copied: recovery and the first pass write to the copy, never to DIR.
  TempDir tmp;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::filesystem::path from = db.string() + suffix;
    if (!std::filesystem::exists(from)) continue;
    std::error_code ec;
    std::filesystem::copy_file(from, tmp.path / ("hase.db" + std::string(suffix)), ec);
    if (ec) return Fail(Status::IO("cannot copy " + from.string() + ": " + ec.message(), "--from-state"));
  }
  service::DaemonOptions o;
  o.state_dir = tmp.path.string();
  o.policy = f.policy;
  o.objective = f.objective;
  o.store.synchronous_full = false;
  o.default_runtime = FindRuntime(f.runtime)->name;
  o.catalog = std::make_shared<const GpuCatalog>(*catalog);
  o.tick_s = 3600;
  Result<std::unique_ptr<service::Daemon>> d = service::Daemon::Create(*std::move(cluster), oracle, o, nullptr);
  if (!d.ok()) return Fail(d.status());
  if (Status s = (*d)->Start(); !s.ok()) return Fail(s.WithContext("--from-state"));
  // As a restart: recovery, then the first pass (its plan marks it done).
  for (int i = 0; i < 6000 && !(*d)->Plan(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Result<service::WhatIfResult> r = (*d)->PlanWhatIf(*w);
  (*d)->Stop();
  if (!r.ok()) return Fail(r.status());
  return Print(f, service::WhatIfJson(*r));
}

}  // namespace hase::cli
