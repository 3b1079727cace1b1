#include "hase/service/api_server.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <set>
#include <string_view>

#include <limits>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "hase/service/guarded_server.h"
#include "hase/service/live_plan.h"
#include "hase/service/request_json.h"
#include "hase/service/task_json.h"
#include "hase/service/whatif.h"

namespace hase::service {
namespace {

// A queued task its team's quota held back in the last pass (docs/teams.md). The plan made
// after that pass says so too, with the predicted start (why.kind "quota"); until that plan is
// published (why.kind "pending") or where it disagrees, the pass's hold is what `why` says.
void AttachQuotaHold(nlohmann::json& task, const std::optional<sched::QuotaHold>& hold) {
  if (!hold) return;
  if (task.contains("why") && task["why"].is_object() && task["why"].value("kind", "") == "quota") return;
  task["why"] = nlohmann::json{{"kind", "quota"},         {"team", hold->team},
                     {"used_gpus", hold->used_gpus}, {"guaranteed_gpus", hold->guaranteed_gpus},
                     {"max_gpus", hold->max_gpus}, {"text", hold->Text()}};
  task["reason"] = hold->Text();
}

using nlohmann::json;

int HttpStatusOf(const Status& s) {
  if (s.IsInvalidArgument() || s.IsParse() || s.IsUnsupported()) return 400;
  if (s.IsNotFound()) return 404;
  if (s.IsConflict()) return 409;
  if (s.IsIO()) return 503;  // the journal cannot be written (full disk): retry later
  return 500;
}

void SendJson(httplib::Response& res, int status, const json& j) {
  res.status = status;
  res.set_content(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, const Status& s, int status = 0) {
  if (!status && s.IsIO()) res.set_header("Retry-After", "10");
  SendJson(res, status ? status : HttpStatusOf(s),
           json{{"error", {{"code", CodeName(s.code())}, {"message", s.message()}, {"where", s.where()}, {"hint", s.hint()}}}});
}

// 403: an authenticated caller asked for something its token does not allow (api_auth.h).
void SendForbidden(httplib::Response& res, const std::string& message, const std::string& where,
                   const std::string& hint) {
  SendJson(res, 403, json{{"error", {{"code", "permission_denied"}, {"message", message}, {"where", where.substr(0, 128)},
                                     {"hint", hint}}}});
}

Result<int64_t> IdOf(const httplib::Request& req, const char* what = "task") {
  try {
    return std::stoll(req.matches[1].str());
  } catch (const std::exception&) {
    return Status::InvalidArgument(std::string("bad ") + what + " id '" + req.matches[1].str().substr(0, 32) + "'");
  }
}

// A GPU id: NotFound for one out of int range (no such GPU), never an exception (was a 500).
Result<int> GpuIdOf(const httplib::Request& req) {
  HASE_ASSIGN_OR_RETURN(int64_t id, IdOf(req, "GPU"));
  if (id > std::numeric_limits<int>::max()) return Status::NotFound("no GPU " + std::to_string(id));
  return static_cast<int>(id);
}

// A small POST body ({"exit_code":N}, {"reason":"..."}): empty is {}; anything but an object
// with the named fields is InvalidArgument naming what is wrong.
Result<json> SmallBody(const httplib::Request& req, std::initializer_list<std::string_view> fields) {
  HASE_ASSIGN_OR_RETURN(json body, ParseRequestJson(req.body.empty() ? std::string_view("{}") : req.body));
  if (!body.is_object()) {
    return Status::InvalidArgument("body must be a JSON object, not " + DescribeJsonValue(body), "body",
                                   "send {} or leave the body empty");
  }
  for (const auto& [key, value] : body.items()) {
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
      std::string known;
      for (std::string_view f : fields) known += (known.empty() ? "" : ", ") + std::string(f);
      return Status::InvalidArgument("unknown field", "field '" + key + "'", "the fields are: " + known);
    }
  }
  return body;
}

// ?limit= of a list endpoint: whole digits within 1..kMaxListLimit; absent = kDefaultListLimit.
// "-1", "abc", "1e3" and 10001 are InvalidArgument naming the range (they used to be clamped).
Result<size_t> ListLimitOf(const httplib::Request& req) {
  if (!req.has_param("limit")) return kDefaultListLimit;
  const std::string v = req.get_param_value("limit");
  size_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty() || n < 1 || n > kMaxListLimit) {
    return Status::InvalidArgument("limit must be a whole number from 1 to " + std::to_string(kMaxListLimit) +
                                       ", not '" + v.substr(0, 32) + "'",
                                   "query parameter 'limit'", "leave it out for the newest " +
                                                                  std::to_string(kDefaultListLimit));
  }
  return n;
}

json GpuJson(const GpuView& g) {
  json j = {{"id", g.id},
            {"node", g.node},
            {"index", g.index},
            {"label", g.label},
            {"mig_profile", g.mig_profile.empty() ? json(nullptr) : json(g.mig_profile)},
            {"type", g.type},
            {"health", g.failed ? "failed" : g.drained ? "drained" : "ok"},
            {"health_reason", g.failed || g.drained ? json(g.health_reason) : json(nullptr)},
            {"running", g.running},
            {"queued", g.queued},
            {"memory_mib", g.memory_mib},
            {"memory_used_mib", g.memory_used_mib},
            {"memory_used_source", g.memory_used_source},
            {"memory_hase_mib", g.memory_hase_mib},
            {"memory_foreign_mib", g.memory_foreign_mib},
            {"projected_finish_s", g.projected_finish_s},
            {"background_sm_active", g.background_sm},
            {"live_load_used", g.load_used}};
  if (g.live) {
    const LoadSnapshot& l = g.live->load;
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    j["live"] = {{"uuid", g.live->uuid},
                 {"model_name", g.live->model_name},
                 {"host_label", g.live->host_label},
                 {"mig_instances", g.live->mig_instances},
                 {"gpu_instance", g.live->key.gpu_instance >= 0 ? json(g.live->key.gpu_instance) : json(nullptr)},
                 {"age_s", l.age_s},
                 {"sm_active", opt(l.sm_active)},
                 {"sm_occupancy", opt(l.sm_occupancy)},
                 {"dram_active", opt(l.dram_active)},
                 {"pipe_tensor_active", opt(l.pipe_tensor_active)},
                 {"gr_engine_active", opt(l.gr_engine_active)},
                 {"gpu_util", opt(l.gpu_util)},
                 {"fb_used_mib", opt(l.fb_used_mib)},
                 {"fb_free_mib", opt(l.fb_free_mib)},
                 {"sm_clock_mhz", opt(l.sm_clock_mhz)},
                 {"effective_sm_active", l.EffectiveSmActive()}};
  } else {
    j["live"] = nullptr;
  }
  return j;
}

json WhyJson(const PlacementWhy& w) {
  auto time = [](double t) { return std::isfinite(t) ? json(t) : json(nullptr); };
  auto option = [&](const PlacementWhy::Option& o, bool alternative) {
    json j{{"gpu", o.gpu}, {"node", o.node}, {"type", o.type}, {"predicted_end_s", time(o.predicted_end_s)},
             {"calibration", o.calibration}, {"isolated_s", o.isolated_s},
             {"isolated_p10_s", o.isolated_p10_s > 0 ? json(o.isolated_p10_s) : json(nullptr)},
             {"isolated_p90_s", o.isolated_p90_s > 0 ? json(o.isolated_p90_s) : json(nullptr)}};
    if (w.priced) {
      j["predicted_start_s"] = time(o.predicted_start_s);
      j["inflicted_s"] = o.inflicted_s;
      j["cost_s"] = time(o.cost_s);
      j["score"] = o.score;
    }
    if (alternative) {
      j["slower_by_s"] = time(o.predicted_end_s - w.chosen.predicted_end_s);
      if (w.priced) {
        j["costlier_by_s"] = time(o.cost_s - w.chosen.cost_s);
        j["why_not"] = o.why_not;
      }
    }
    return j;
  };
  json alts = json::array();
  for (const PlacementWhy::Option& o : w.alternatives) alts.push_back(option(o, true));
  json out{{"decided_s", w.decided_s}, {"policy", w.policy},       {"priced", w.priced},
           {"objective", w.objective}, {"chosen", option(w.chosen, false)}, {"alternatives", alts}};
  if (w.moved) {
    out["moved"] = json{{"gpu", w.moved->gpu},   {"node", w.moved->node}, {"index", w.moved->index},
                        {"by", w.moved->by},     {"at_s", w.moved->at_s},
                        {"note", w.moved->by + " started it on this GPU of the chosen type; the prices hold"}};
  }
  return out;
}

}  // namespace

ApiServer::ApiServer(Daemon& daemon, Extender& extender, ApiServerOptions options)
    : daemon_(daemon),
      extender_(extender),
      options_(std::move(options)),
      tokens_([&] {
        std::vector<ApiToken> all = options_.token_entries;
        const TokenSet admins(options_.tokens);
        for (const std::string& t : options_.tokens) all.push_back(*admins.Find(t));
        return std::make_shared<const TokenSet>(std::move(all));
      }()),
      extender_tokens_(options_.extender_tokens),
      server_(std::make_unique<GuardedServer>(options_.limits)) {
  GuardedServer& s = *server_;
  s.set_tcp_nodelay(true);  // small JSON answers: no Nagle + delayed-ACK stalls (~40 ms)
  // Bounded work per request (issue #15): a body over kMaxBodyBytes is refused with 413 before
  // it is parsed; connections and deadlines: GuardedServer.
  s.set_payload_max_length(kMaxBodyBytes);
  // One debug line per request (the decision log is the daemon's; see daemon.h).
  if (std::shared_ptr<spdlog::logger> log = daemon_.logger()) {
    s.set_logger([log](const httplib::Request& req, const httplib::Response& res) {
      log->debug("request method={} path={} status={} bytes_in={} bytes_out={} remote={}", req.method, req.path,
                 res.status, req.body.size(), res.body.size(), req.remote_addr);
    });
  }
  // Errors cpp-httplib answers itself (no route, a POST without Content-Length, a body over the
  // limit) get the same JSON error body as ours instead of an empty one.
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler's own error
    std::string msg = "request refused", hint;
    if (res.status == 404) {
      msg = "no such endpoint: " + req.method + " " + req.path.substr(0, 128);
      hint = "see docs/service.md for the REST API";
    } else if (res.status == 413) {
      // cpp-httplib caps a form-encoded body (curl -d's default Content-Type) at 8192 bytes
      // (CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH) before our limit applies.
      const bool form = req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0;
      msg = form ? "form-encoded request body over 8192 bytes"
                 : "request body over " + std::to_string(kMaxBodyBytes) + " bytes";
      if (form) hint = "send the JSON with -H 'Content-Type: application/json' (bodies up to " +
                       std::to_string(kMaxBodyBytes) + " bytes)";
    } else if (res.status == 400) {
      msg = "malformed request";
      hint = "a POST needs a Content-Length header: send a JSON body, '{}' when empty";
    }
    SendJson(res, res.status, json{{"error", {{"code", "http"}, {"message", msg}, {"where", req.path.substr(0, 128)}, {"hint", hint}}}});
  });
  // Every handler: not evictable from here on (GuardedServer::MarkBusy), then the access check.
  using Handler = httplib::Server::Handler;
  // Every change, and every refused request, goes to the audit log naming who (Audit).
  auto guard = [this](Access access, Handler h) {
    return [this, access, h = std::move(h)](const httplib::Request& req, httplib::Response& res) {
      GuardedServer::MarkBusy();
      const Caller who = CallerOf(req);
      if (!Allowed(access, req)) {
        res.set_header("WWW-Authenticate", "Bearer");
        SendJson(res, 401,
                 json{{"error",
                       {{"code", "unauthenticated"},  // lower case as CodeName's
                        {"message", "missing or wrong bearer token"},
                        {"where", req.path.substr(0, 64)},
                        {"hint", "send 'Authorization: Bearer <token>' with a token of --token-file"}}}});
        return Audit(who, req, res.status, "");
      }
      if (access == Access::kAdmin && !who.admin()) {
        SendForbidden(res, "token '" + who.name + "' of team " + who.team + " may not " + req.method + " " + req.path,
                      req.path, "GPUs, nodes and what-if are for admin tokens (api_auth.h)");
        return Audit(who, req, res.status, "");
      }
      h(req, res);
      // Changes, not reads: POST /v1/advise and the extender's filter / prioritize are
      // questions, and a 2xx heartbeat (every few seconds per outside task) changes no more than
      // a lease; their refusals are logged all the same.
      const bool refused = res.status == 401 || res.status == 403;
      const bool change = (access == Access::kMutate || access == Access::kAdmin ||
                           (access == Access::kExtender && req.path.size() >= 5 &&
                            req.path.compare(req.path.size() - 5, 5, "/bind") == 0)) &&
                          !(res.status / 100 == 2 && req.path.find("/heartbeat") != std::string::npos);
      if (change || refused) {
        std::string detail;
        if (req.method == "POST" && req.path == "/v1/tasks" && res.status / 100 == 2) {
          const json j = json::parse(res.body, nullptr, false);
          if (j.is_object() && j.contains("id")) {
            detail = "task " + j["id"].dump() + " team " + j.value("team", std::string("-"));
          }
        }
        Audit(who, req, res.status, detail);
      }
    };
  };
  // A team token acts on its own team's tasks only (api_auth.h): 403 naming both teams.
  auto may_touch = [this](const httplib::Request& req, httplib::Response& res, int64_t id, const char* action) {
    const Caller who = CallerOf(req);
    if (who.admin()) return true;
    std::optional<TaskRecord> r = daemon_.Get(id);
    if (!r || r->spec.team == who.team) return true;  // absent: the handler's 404
    SendForbidden(res,
                  "token '" + who.name + "' of team " + who.team + " may not " + action + " task " + std::to_string(id) +
                      " of team " + (r->spec.team.empty() ? std::string("(none)") : r->spec.team),
                  req.path, "a team's token reads, cancels and completes only its own team's tasks; use an admin token");
    return false;
  };
  // Route registration with the access each needs.
  auto get = [&](const std::string& p, Access a, Handler h) { s.Get(p, guard(a, std::move(h))); };
  auto post = [&](const std::string& p, Access a, Handler h) { s.Post(p, guard(a, std::move(h))); };
  auto del = [&](const std::string& p, Access a, Handler h) { s.Delete(p, guard(a, std::move(h))); };
  constexpr Access kRead = Access::kRead, kMutate = Access::kMutate, kAdmin = Access::kAdmin;
  post("/v1/tasks", kMutate, [this](const httplib::Request& req, httplib::Response& res) {
    Result<json> body = ParseRequestJson(req.body, "task body");
    if (!body.ok()) return SendError(res, body.status());
    Result<TaskSpec> spec = TaskSpecFromJson(*body);
    if (!spec.ok()) return SendError(res, spec.status());
    const Caller who = CallerOf(req);
    if (!who.admin()) {
      // A team's token submits as its team: no team named (nor a pod namespace of another
      // team) means its own; another team is refused.
      if (spec->team.empty() && spec->pod.empty()) spec->team = who.team;
      Result<std::string> team = daemon_.TeamOfSpec(*spec);
      if (!team.ok()) return SendError(res, team.status());
      if (*team != who.team) {
        return SendForbidden(res, "token '" + who.name + "' of team " + who.team + " may not submit as team " + *team,
                             "task field 'team'", "leave 'team' out (it is " + who.team + ") or use team " + who.team);
      }
    }
    Result<TaskStore::Inserted> ins = daemon_.Submit(*spec);
    if (!ins.ok()) return SendError(res, ins.status());
    if (!who.admin() && ins->record.spec.team != who.team) {  // an idempotency key of another team's task
      return SendForbidden(res, "key '" + ins->record.spec.key + "' names a task of another team", "task field 'key'",
                           "use a key of your own");
    }
    SendJson(res, ins->created ? 201 : 200, TaskRecordToJson(ins->record));
  });
  post("/v1/advise", kRead, [this](const httplib::Request& req, httplib::Response& res) {
    Result<json> body = ParseRequestJson(req.body, "task body");
    if (!body.ok()) return SendError(res, body.status());
    Result<TaskSpec> spec = TaskSpecFromJson(*body);
    if (!spec.ok()) return SendError(res, spec.status());
    Result<Advice> a = daemon_.Advise(*spec);
    if (!a.ok()) return SendError(res, a.status());
    SendJson(res, 200, json{{"gpu", a->gpu}, {"node", a->node}, {"index", a->index}, {"gpu_type", a->gpu_type},
                            {"native", a->native}, {"predicted_end_s", a->predicted_end_s},
                            {"input_shape", a->input_shape.empty() ? json(nullptr) : json(a->input_shape)}});
  });
  get("/v1/tasks", kRead, [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<TaskState> state;
    if (req.has_param("state")) {
      Result<TaskState> st = ParseTaskState(req.get_param_value("state"));
      if (!st.ok()) return SendError(res, st.status());
      state = *st;
    }
    Result<size_t> limit = ListLimitOf(req);
    if (!limit.ok()) return SendError(res, limit.status());
    json tasks = json::array();
    const std::shared_ptr<const LiveQueuePlan> plan = daemon_.Plan();
    const Caller who = CallerOf(req);
    const std::optional<std::string> team = who.admin() ? std::nullopt : std::optional<std::string>(who.team);
    for (const TaskRecord& r : daemon_.List(state, *limit, team)) {
      tasks.push_back(TaskRecordToJson(r));
      AttachPlan(tasks.back(), r.id, r.state == TaskState::kQueued, plan.get());
      if (r.state == TaskState::kQueued) AttachQuotaHold(tasks.back(), daemon_.QuotaHoldOf(r.id));
    }
    SendJson(res, 200, json{{"tasks", tasks}});
  });
  get(R"(/v1/tasks/(\d+))", kRead, [this, may_touch](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> id = IdOf(req);
    if (!id.ok()) return SendError(res, id.status());
    if (!may_touch(req, res, *id, "read")) return;
    std::optional<TaskRecord> r = daemon_.Get(*id);
    if (!r) return SendError(res, Status::NotFound("no task " + std::to_string(*id)));
    json j = TaskRecordToJson(*r);
    // Why this GPU: predicted completion there and on the runner-up GPUs (null before a
    // placement and after a restart: the record lives in memory).
    std::optional<PlacementWhy> why = daemon_.WhyOf(*id);
    j["why"] = why ? WhyJson(*why) : json(nullptr);
    // A queued task: its planned GPU, start and end, and why it is not running (live_plan.h).
    AttachPlan(j, *id, r->state == TaskState::kQueued, daemon_.Plan().get());
    if (r->state == TaskState::kQueued) AttachQuotaHold(j, daemon_.QuotaHoldOf(*id));
    SendJson(res, 200, j);
  });
  auto cancel = [this, may_touch](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> id = IdOf(req);
    if (!id.ok()) return SendError(res, id.status());
    if (!may_touch(req, res, *id, "cancel")) return;
    Result<TaskRecord> r = daemon_.Cancel(*id);
    if (!r.ok()) return SendError(res, r.status());  // 409 conflict: the task has ended
    SendJson(res, 200, TaskRecordToJson(*r));
  };
  del(R"(/v1/tasks/(\d+))", kMutate, cancel);
  post(R"(/v1/tasks/(\d+)/cancel)", kMutate, cancel);
  post(R"(/v1/tasks/(\d+)/complete)", kMutate, [this, may_touch](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> id = IdOf(req);
    if (!id.ok()) return SendError(res, id.status());
    if (!may_touch(req, res, *id, "complete")) return;
    Result<json> body = SmallBody(req, {"exit_code"});
    if (!body.ok()) return SendError(res, body.status());
    const json code = body->value("exit_code", json(0));
    if (!code.is_number_integer() || code.get<int64_t>() < std::numeric_limits<int>::min() ||
        code.get<int64_t>() > std::numeric_limits<int>::max()) {
      return SendError(res, Status::InvalidArgument("must be an integer, not " + DescribeJsonValue(code), "field 'exit_code'",
                                                    "the process's exit status, 0 for success"));
    }
    Result<TaskRecord> r = daemon_.Complete(*id, code.get<int>());
    if (!r.ok()) return SendError(res, r.status());  // 409 conflict: the task has ended
    SendJson(res, 200, TaskRecordToJson(*r));
  });
  // Teams (docs/teams.md): each team's quota, GPUs in use, queued tasks and usage.
  get("/v1/usage", kRead, [this](const httplib::Request&, httplib::Response& res) {
    const sched::TeamConfig& teams = daemon_.teams();
    json out = json::array();
    for (const TeamUsageView& u : daemon_.Usage()) {
      out.push_back(json{{"team", u.team},
                         {"guaranteed_gpus", u.guaranteed_gpus},
                         {"max_gpus", u.max_gpus < 0 ? json(nullptr) : json(u.max_gpus)},
                         {"shares", u.shares},
                         {"slurm_account", u.slurm_account.empty() ? json(nullptr) : json(u.slurm_account)},
                         {"namespaces", u.namespaces},
                         {"gpus_in_use", u.gpus_in_use},
                         {"queued", u.queued},
                         {"held", u.held},
                         {"usage", {{"equivalent_s", u.usage_eq_s},
                                    {"raw_equivalent_s", u.raw_eq_s},
                                    {"gpu_s", u.gpu_s},
                                    {"fair_share", u.fair_share}}}});
    }
    SendJson(res, 200, json{{"teams_enabled", teams.enabled()},
                            {"reference", teams.fair_share.reference},
                            {"half_life_s", teams.fair_share.half_life_s},
                            {"default_team", teams.enabled() ? json(teams.default_team) : json(nullptr)},
                            {"teams", out}});
  });
  get("/v1/queue", kRead, [this](const httplib::Request& req, httplib::Response& res) {
    const std::shared_ptr<const LiveQueuePlan> plan = daemon_.Plan();
    if (!plan) {
      return SendError(res, Status::NotFound("no plan yet", "/v1/queue",
                                             "the daemon plans after its first pass; retry in a second"), 503);
    }
    json out = QueuePlanJson(*plan, plan->planned_at_s);
    const Caller who = CallerOf(req);
    if (!who.admin()) {  // a team's token sees its own tasks (the totals stay the cluster's)
      std::set<int64_t> own;
      for (const TaskRecord& r : daemon_.List(std::nullopt, kMaxListLimit, who.team)) own.insert(r.id);
      for (const char* list : {"tasks", "placed"}) {
        json kept = json::array();
        for (json& t : out[list]) {
          if (own.count(t["id"].get<int64_t>())) kept.push_back(std::move(t));
        }
        out[list] = std::move(kept);
      }
      out["team"] = who.team;
    }
    SendJson(res, 200, out);
  });
  // What-if (whatif.h): the plan with GPUs added, drained or tasks submitted, on a copy of the
  // live state; nothing changes. It costs the daemon two plans' CPU, so with --token-file it
  // takes the token that changes need (kMutate), also on loopback.
  post("/v1/whatif", kAdmin, [this](const httplib::Request& req, httplib::Response& res) {
    Result<json> body = ParseRequestJson(req.body.empty() ? std::string_view("{}") : std::string_view(req.body),
                                         "what-if body");
    if (!body.ok()) return SendError(res, body.status());
    Result<WhatIf> w = WhatIfFromJson(*body);
    if (!w.ok()) return SendError(res, w.status());
    Result<WhatIfResult> r = daemon_.PlanWhatIf(*w);
    if (!r.ok()) return SendError(res, r.status());
    SendJson(res, 200, WhatIfJson(*r));
  });
    get("/v1/gpus", kRead, [this](const httplib::Request&, httplib::Response& res) {
    json gpus = json::array();
    for (const GpuView& g : daemon_.Gpus()) gpus.push_back(GpuJson(g));
    SendJson(res, 200, json{{"policy", daemon_.policy_name()}, {"gpus", gpus}});
  });
  // {"reason":"XID 48"} or nothing.
  auto reason_of = [](const httplib::Request& req) -> Result<std::string> {
    HASE_ASSIGN_OR_RETURN(json body, SmallBody(req, {"reason"}));
    if (!body.contains("reason") || body["reason"].is_null()) return std::string();
    if (!body["reason"].is_string()) {
      return Status::InvalidArgument("must be a string, not " + DescribeJsonValue(body["reason"]), "field 'reason'");
    }
    return body["reason"].get<std::string>();
  };
  post(R"(/v1/gpus/(\d+)/fail)", kAdmin, [this, reason_of](const httplib::Request& req, httplib::Response& res) {
    Result<int> gpu = GpuIdOf(req);
    if (!gpu.ok()) return SendError(res, gpu.status());
    Result<std::string> reason = reason_of(req);
    if (!reason.ok()) return SendError(res, reason.status());
    Result<int> n = daemon_.MarkGpuFailed(*gpu, *reason);
    if (!n.ok()) return SendError(res, n.status());
    SendJson(res, 200, json{{"requeued", *n}});
  });
  post(R"(/v1/gpus/(\d+)/recover)", kAdmin, [this](const httplib::Request& req, httplib::Response& res) {
    Result<int> gpu = GpuIdOf(req);
    if (!gpu.ok()) return SendError(res, gpu.status());
    Status st = daemon_.RecoverGpu(*gpu);
    if (!st.ok()) return SendError(res, st);
    SendJson(res, 200, json{{"recovered", true}});
  });
  post(R"(/v1/nodes/([^/]+)/fail)", kAdmin, [this, reason_of](const httplib::Request& req, httplib::Response& res) {
    Result<std::string> reason = reason_of(req);
    if (!reason.ok()) return SendError(res, reason.status());
    Result<int> n = daemon_.MarkNodeFailed(req.matches[1].str(), *reason);
    if (!n.ok()) return SendError(res, n.status());
    SendJson(res, 200, json{{"requeued", *n}});
  });
  // {"reason": "...", "requeue": false}: drained GPUs take nothing new; running tasks finish
  // unless requeue (then stopped and re-queued, as fail does).
  auto drain_of = [](const httplib::Request& req) -> Result<std::pair<std::string, bool>> {
    HASE_ASSIGN_OR_RETURN(json body, SmallBody(req, {"reason", "requeue"}));
    std::pair<std::string, bool> out{"", false};
    if (body.contains("reason") && !body["reason"].is_null()) {
      if (!body["reason"].is_string()) {
        return Status::InvalidArgument("must be a string, not " + DescribeJsonValue(body["reason"]), "field 'reason'");
      }
      out.first = body["reason"].get<std::string>();
    }
    if (body.contains("requeue") && !body["requeue"].is_null()) {
      if (!body["requeue"].is_boolean()) {
        return Status::InvalidArgument("must be true or false, not " + DescribeJsonValue(body["requeue"]),
                                       "field 'requeue'",
                                       "false (default): running tasks finish; true: they are stopped and re-queued");
      }
      out.second = body["requeue"].get<bool>();
    }
    return out;
  };
  post(R"(/v1/gpus/(\d+)/drain)", kAdmin, [this, drain_of](const httplib::Request& req, httplib::Response& res) {
    Result<int> gpu = GpuIdOf(req);
    if (!gpu.ok()) return SendError(res, gpu.status());
    Result<std::pair<std::string, bool>> d = drain_of(req);
    if (!d.ok()) return SendError(res, d.status());
    Result<int> n = daemon_.DrainGpu(*gpu, d->first, d->second);
    if (!n.ok()) return SendError(res, n.status());
    SendJson(res, 200, json{{"drained", 1}, {"requeued", *n}});
  });
  post(R"(/v1/nodes/([^/]+)/drain)", kAdmin, [this, drain_of](const httplib::Request& req, httplib::Response& res) {
    Result<std::pair<std::string, bool>> d = drain_of(req);
    if (!d.ok()) return SendError(res, d.status());
    const std::string node = req.matches[1].str();
    Result<int> n = daemon_.DrainNode(node, d->first, d->second);
    if (!n.ok()) return SendError(res, n.status());
    int gpus = 0;
    for (const GpuView& g : daemon_.Gpus()) gpus += g.node == node;
    SendJson(res, 200, json{{"drained", gpus}, {"requeued", *n}});
  });
  post(R"(/v1/gpus/(\d+)/resume)", kAdmin, [this](const httplib::Request& req, httplib::Response& res) {
    Result<int> gpu = GpuIdOf(req);
    if (!gpu.ok()) return SendError(res, gpu.status());
    Status st = daemon_.RecoverGpu(*gpu);
    if (!st.ok()) return SendError(res, st);
    SendJson(res, 200, json{{"resumed", 1}});
  });
  auto node_resume = [this](const httplib::Request& req, httplib::Response& res) {
    Result<int> n = daemon_.RecoverNode(req.matches[1].str());
    if (!n.ok()) return SendError(res, n.status());
    SendJson(res, 200, json{{"resumed", *n}});
  };
  post(R"(/v1/nodes/([^/]+)/resume)", kAdmin, node_resume);
  post(R"(/v1/nodes/([^/]+)/recover)", kAdmin, node_resume);
  post(R"(/v1/tasks/(\d+)/heartbeat)", kMutate, [this, may_touch](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> id = IdOf(req);
    if (!id.ok()) return SendError(res, id.status());
    if (!may_touch(req, res, *id, "renew the lease of")) return;
    Result<double> until = daemon_.Heartbeat(*id);
    if (!until.ok()) return SendError(res, until.status());
    SendJson(res, 200, json{{"id", *id}, {"lease_expires_s", std::isfinite(*until) ? json(*until) : json(nullptr)}});
  });
  get("/metrics", kRead, [this](const httplib::Request&, httplib::Response& res) {
    const GuardedServer::Stats c = server_->stats();
    const std::string http =
        "# HELP hase_http_connections Open API connections.\n# TYPE hase_http_connections gauge\n"
        "hase_http_connections " + std::to_string(c.open) + "\n"
        "# HELP hase_http_connections_closed_total API connections closed by a bound (guarded_server.h).\n"
        "# TYPE hase_http_connections_closed_total counter\n"
        "hase_http_connections_closed_total{why=\"evicted\"} " + std::to_string(c.evicted) + "\n"
        "hase_http_connections_closed_total{why=\"refused\"} " + std::to_string(c.refused) + "\n"
        "hase_http_connections_closed_total{why=\"deadline\"} " + std::to_string(c.timed_out) + "\n";
    res.set_content(daemon_.MetricsText() + http, "text/plain; version=0.0.4; charset=utf-8");
  });
  get("/healthz", Access::kPublic, [this](const httplib::Request& req, httplib::Response& res) {
    DaemonHealth h = daemon_.Health();
    if (options_.more_health) {
      for (std::string& r : options_.more_health()) {
        h.degraded = true;
        h.reasons.push_back(std::move(r));
      }
    }
    json out{{"status", h.degraded ? "degraded" : "ok"}};
    if (Allowed(Access::kRead, req)) out["reasons"] = h.reasons;  // names hosts, paths, errors
    SendJson(res, 200, out);
  });
  auto verb = [this](Result<json> (Extender::*fn)(std::string_view)) {
    return [this, fn](const httplib::Request& req, httplib::Response& res) {
      Result<json> out = (extender_.*fn)(req.body);
      if (!out.ok()) return SendError(res, out.status());
      SendJson(res, 200, *out);
    };
  };
  for (const char* prefix : {"", "/extender", "/extender/[^/]+"}) {
    post(std::string(prefix) + "/filter", Access::kExtender, verb(&Extender::Filter));
    post(std::string(prefix) + "/prioritize", Access::kExtender, verb(&Extender::Prioritize));
    post(std::string(prefix) + "/bind", Access::kExtender, verb(&Extender::Bind));
  }
}

std::shared_ptr<const TokenSet> ApiServer::tokens() const {
  std::lock_guard<std::mutex> lock(tokens_mu_);
  return tokens_;
}

ApiServer::Caller ApiServer::CallerOf(const httplib::Request& req) const {
  Caller c;
  const std::string authorization = req.get_header_value("Authorization");
  const std::string_view bearer = TokenSet::FromAuthorization(authorization);
  if (bearer.empty()) return c;
  const std::shared_ptr<const TokenSet> set = tokens();
  if (const ApiToken* t = set->Find(bearer)) {
    c.name = t->name;
    c.team = t->team;
  } else {
    c.name = "unknown-token";
  }
  return c;
}

void ApiServer::Audit(const Caller& who, const httplib::Request& req, int status, const std::string& detail) const {
  json line{{"who", who.name},
            {"team", who.team.empty() ? json(nullptr) : json(who.team)},
            {"role", who.name == "anonymous" || who.name == "unknown-token" ? "none" : (who.admin() ? "admin" : "team")},
            {"method", req.method},
            {"path", req.path.substr(0, 128)},
            {"status", status},
            {"remote", req.remote_addr}};
  if (!detail.empty()) line["detail"] = detail;
  const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
  if (options_.audit) {
    options_.audit->info("{}", text);
  } else if (std::shared_ptr<spdlog::logger> log = daemon_.logger()) {
    log->info("audit {}", text);
  }
}

Result<size_t> ApiServer::ReloadTokens() {
  if (options_.token_file.empty()) {
    return Status::InvalidArgument("no token file to reload", "--token-file", "start hase serve with --token-file FILE");
  }
  HASE_ASSIGN_OR_RETURN(std::vector<ApiToken> entries, LoadApiTokens(options_.token_file));
  HASE_RETURN_IF_ERROR(CheckTokenTeams(entries, daemon_.teams(), options_.token_file));
  auto set = std::make_shared<const TokenSet>(std::move(entries));
  const size_t n = set->size();
  std::lock_guard<std::mutex> lock(tokens_mu_);
  tokens_ = std::move(set);
  return n;
}

bool ApiServer::Allowed(Access access, const httplib::Request& req) const {
  if (access == Access::kPublic) return true;
  const std::shared_ptr<const TokenSet> set = tokens();
  const std::string authorization = req.get_header_value("Authorization");
  const std::string_view bearer = TokenSet::FromAuthorization(authorization);
  if (!bearer.empty() && set->Contains(bearer)) {
    // Team tokens and admin tokens may call the extender only through admin rights.
    return access != Access::kExtender || set->Find(bearer)->admin();
  }
  if (access == Access::kExtender) {
    // /extender/<token>/<verb>: kube-scheduler can set a URL prefix but no header.
    constexpr std::string_view kPrefix = "/extender/";
    std::string_view path = req.path;
    if (path.substr(0, kPrefix.size()) == kPrefix) {
      path.remove_prefix(kPrefix.size());
      const size_t slash = path.find('/');
      if (slash != std::string_view::npos) {
        const std::string_view token = path.substr(0, slash);
        if (extender_tokens_.Contains(token)) return true;
        if (const ApiToken* t = set->Find(token); t && t->admin()) return true;
      }
    }
  }
  if (set->empty()) return loopback_;  // no tokens: loopback only (Bind), open to local clients
  // Beyond loopback reading needs a token too; so it does on loopback once teams have tokens
  // (a team's tasks are not open to every local user).
  return access == Access::kRead && loopback_ && !set->has_team_tokens();
}

ApiServer::~ApiServer() { Stop(); }

Result<int> ApiServer::Bind(const std::string& host, int port) {
  loopback_ = IsLoopbackHost(host);
  if (!loopback_ && tokens()->empty()) {
    return Status::InvalidArgument(
        "refusing to listen on " + host + " without bearer tokens: anyone who reaches the port could submit, "
        "cancel and (with --executor) run commands",
        "--listen", "listen on 127.0.0.1, or give --token-file FILE (docs/service.md, Threat model)");
  }
  if (!options_.tls_cert.empty() || !options_.tls_key.empty()) {
    if (options_.tls_cert.empty() || options_.tls_key.empty()) {
      return Status::InvalidArgument("TLS needs both --tls-cert and --tls-key");
    }
    HASE_RETURN_IF_ERROR(server_->EnableTls(options_.tls_cert, options_.tls_key));
  }
  int bound = port == 0 ? server_->bind_to_any_port(host.c_str()) : (server_->bind_to_port(host.c_str(), port) ? port : -1);
  if (bound <= 0) {
    return Status::IO("cannot listen on " + host + ":" + std::to_string(port), "", "is the port in use?");
  }
  server_->WidenBacklog();
  return bound;
}

void ApiServer::Run() { server_->listen_after_bind(); }

void ApiServer::Start() {
  thread_ = std::thread([this] { Run(); });
  for (int i = 0; i < 400 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void ApiServer::Stop() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace hase::service
