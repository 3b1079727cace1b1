#include "hase/service/api_server.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "hase/service/task_json.h"

namespace hase::service {
namespace {

using nlohmann::json;

int HttpStatusOf(const Status& s) {
  if (s.IsInvalidArgument() || s.IsParse() || s.IsUnsupported()) return 400;
  if (s.IsNotFound()) return 404;
  return 500;
}

void SendJson(httplib::Response& res, int status, const json& j) {
  res.status = status;
  res.set_content(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, const Status& s, int status = 0) {
  SendJson(res, status ? status : HttpStatusOf(s),
           json{{"error", {{"code", CodeName(s.code())}, {"message", s.message()}, {"where", s.where()}, {"hint", s.hint()}}}});
}

Result<int64_t> IdOf(const httplib::Request& req) {
  try {
    return std::stoll(req.matches[1].str());
  } catch (const std::exception&) {
    return Status::InvalidArgument("bad task id '" + req.matches[1].str() + "'");
  }
}

json GpuJson(const GpuView& g) {
  json j = {{"id", g.id},
            {"node", g.node},
            {"index", g.index},
            {"type", g.type},
            {"health", g.failed ? "failed" : "ok"},
            {"running", g.running},
            {"queued", g.queued},
            {"memory_mib", g.memory_mib},
            {"memory_used_mib", g.memory_used_mib},
            {"projected_finish_s", g.projected_finish_s},
            {"background_sm_active", g.background_sm},
            {"live_load_used", g.load_used}};
  if (g.live) {
    const LoadSnapshot& l = g.live->load;
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    j["live"] = {{"uuid", g.live->uuid},
                 {"model_name", g.live->model_name},
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

}  // namespace

ApiServer::ApiServer(Daemon& daemon, Extender& extender)
    : daemon_(daemon), extender_(extender), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  s.set_tcp_nodelay(true);  // small JSON answers: no Nagle + delayed-ACK stalls (~40 ms)
  // Bounded work per request (issue #15): a body over kMaxBodyBytes is refused with 413 before
  // it is parsed; a read or write that stalls kIoTimeoutS ends the connection; kThreads
  // workers (cpp-httplib's default is 8, which 8 slow clients could hold).
  s.set_payload_max_length(kMaxBodyBytes);
  s.set_read_timeout(kIoTimeoutS, 0);
  s.set_write_timeout(kIoTimeoutS, 0);
  s.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  s.Post("/v1/tasks", [this](const httplib::Request& req, httplib::Response& res) {
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) return SendError(res, Status::InvalidArgument("body is not JSON"));
    Result<TaskSpec> spec = TaskSpecFromJson(body);
    if (!spec.ok()) return SendError(res, spec.status());
    Result<TaskStore::Inserted> ins = daemon_.Submit(*spec);
    if (!ins.ok()) return SendError(res, ins.status());
    SendJson(res, ins->created ? 201 : 200, TaskRecordToJson(ins->record));
  });
  s.Post("/v1/advise", [this](const httplib::Request& req, httplib::Response& res) {
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) return SendError(res, Status::InvalidArgument("body is not JSON"));
    Result<TaskSpec> spec = TaskSpecFromJson(body);
    if (!spec.ok()) return SendError(res, spec.status());
    Result<Advice> a = daemon_.Advise(*spec);
    if (!a.ok()) return SendError(res, a.status());
    SendJson(res, 200, json{{"gpu", a->gpu}, {"node", a->node}, {"index", a->index}, {"gpu_type", a->gpu_type},
                            {"native", a->native}, {"predicted_end_s", a->predicted_end_s}});
  });
  s.Get("/v1/tasks", [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<TaskState> state;
    if (req.has_param("state")) {
      Result<TaskState> st = ParseTaskState(req.get_param_value("state"));
      if (!st.ok()) return SendError(res, st.status());
      state = *st;
    }
    size_t limit = 100;
    if (req.has_param("limit")) {
      try {
        limit = std::min<size_t>(std::stoul(req.get_param_value("limit")), 10000);
      } catch (const std::exception&) {
        return SendError(res, Status::InvalidArgument("bad limit"));
      }
    }
    json tasks = json::array();
    for (const TaskRecord& r : daemon_.List(state, limit)) tasks.push_back(TaskRecordToJson(r));
    SendJson(res, 200, json{{"tasks", tasks}});
  });
  s.Get(R"(/v1/tasks/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> id = IdOf(req);
    if (!id.ok()) return SendError(res, id.status());
    std::optional<TaskRecord> r = daemon_.Get(*id);
    if (!r) return SendError(res, Status::NotFound("no task " + std::to_string(*id)));
    SendJson(res, 200, TaskRecordToJson(*r));
  });
  auto cancel = [this](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> id = IdOf(req);
    if (!id.ok()) return SendError(res, id.status());
    Result<TaskRecord> r = daemon_.Cancel(*id);
    if (!r.ok()) return SendError(res, r.status(), r.status().IsInvalidArgument() ? 409 : 0);
    SendJson(res, 200, TaskRecordToJson(*r));
  };
  s.Delete(R"(/v1/tasks/(\d+))", cancel);
  s.Post(R"(/v1/tasks/(\d+)/cancel)", cancel);
  s.Post(R"(/v1/tasks/(\d+)/complete)", [this](const httplib::Request& req, httplib::Response& res) {
    Result<int64_t> id = IdOf(req);
    if (!id.ok()) return SendError(res, id.status());
    json body = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) return SendError(res, Status::InvalidArgument("body is not a JSON object"));
    const json code = body.value("exit_code", json(0));
    if (!code.is_number_integer()) return SendError(res, Status::InvalidArgument("exit_code must be an integer"));
    Result<TaskRecord> r = daemon_.Complete(*id, code.get<int>());
    if (!r.ok()) return SendError(res, r.status(), r.status().IsInvalidArgument() ? 409 : 0);
    SendJson(res, 200, TaskRecordToJson(*r));
  });
  s.Get("/v1/gpus", [this](const httplib::Request&, httplib::Response& res) {
    json gpus = json::array();
    for (const GpuView& g : daemon_.Gpus()) gpus.push_back(GpuJson(g));
    SendJson(res, 200, json{{"policy", daemon_.policy_name()}, {"gpus", gpus}});
  });
  auto reason_of = [](const httplib::Request& req) {
    json body = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    return body.is_object() ? body.value("reason", std::string()) : std::string();
  };
  s.Post(R"(/v1/gpus/(\d+)/fail)", [this, reason_of](const httplib::Request& req, httplib::Response& res) {
    Result<int> n = daemon_.MarkGpuFailed(std::stoi(req.matches[1].str()), reason_of(req));
    if (!n.ok()) return SendError(res, n.status());
    SendJson(res, 200, json{{"requeued", *n}});
  });
  s.Post(R"(/v1/gpus/(\d+)/recover)", [this](const httplib::Request& req, httplib::Response& res) {
    Status st = daemon_.RecoverGpu(std::stoi(req.matches[1].str()));
    if (!st.ok()) return SendError(res, st);
    SendJson(res, 200, json{{"recovered", true}});
  });
  s.Post(R"(/v1/nodes/([^/]+)/fail)", [this, reason_of](const httplib::Request& req, httplib::Response& res) {
    Result<int> n = daemon_.MarkNodeFailed(req.matches[1].str(), reason_of(req));
    if (!n.ok()) return SendError(res, n.status());
    SendJson(res, 200, json{{"requeued", *n}});
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(daemon_.MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    DaemonHealth h = daemon_.Health();
    SendJson(res, 200, json{{"status", h.degraded ? "degraded" : "ok"}, {"reasons", h.reasons}});
  });
  auto verb = [this](Result<json> (Extender::*fn)(std::string_view)) {
    return [this, fn](const httplib::Request& req, httplib::Response& res) {
      Result<json> out = (extender_.*fn)(req.body);
      if (!out.ok()) return SendError(res, out.status());
      SendJson(res, 200, *out);
    };
  };
  for (const char* prefix : {"", "/extender"}) {
    s.Post(std::string(prefix) + "/filter", verb(&Extender::Filter));
    s.Post(std::string(prefix) + "/prioritize", verb(&Extender::Prioritize));
    s.Post(std::string(prefix) + "/bind", verb(&Extender::Bind));
  }
}

ApiServer::~ApiServer() { Stop(); }

Result<int> ApiServer::Bind(const std::string& host, int port) {
  int bound = port == 0 ? server_->bind_to_any_port(host.c_str()) : (server_->bind_to_port(host.c_str(), port) ? port : -1);
  if (bound <= 0) {
    return Status::IO("cannot listen on " + host + ":" + std::to_string(port), "", "is the port in use?");
  }
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
