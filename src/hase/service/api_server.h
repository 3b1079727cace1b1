// ApiServer: the HTTP face of `hase serve` (cpp-httplib, one thread pool).
//
//   POST   /v1/tasks                 submit (task_json.h); 201 new, 200 same key seen before
//   GET    /v1/tasks[?state=&limit=] newest first (limit default 100, max 10000)
//   GET    /v1/tasks/{id}            state, GPU, predicted and actual times
//   DELETE /v1/tasks/{id}            cancel (also POST /v1/tasks/{id}/cancel)
//   POST   /v1/tasks/{id}/complete   {"exit_code":N}: an outside runner reports the end
//   POST   /v1/advise                a submit body → {"gpu","node","index","gpu_type","native",
//                                    "predicted_end_s"}: where hase would run it now (nothing
//                                    is submitted; deploy/slurm/job_submit.lua asks it)
//   GET    /v1/gpus                  every GPU with its live DCGM load and what hase placed
//   POST   /v1/gpus/{id}/fail        {"reason":"..."}: re-queue its tasks; /recover undoes it
//   POST   /v1/nodes/{node}/fail     every GPU of the node
//   GET    /metrics                  Prometheus text 0.0.4 (metrics.h)
//   GET    /healthz                  200 {"status":"ok"|"degraded","reasons":[...]}
//   POST   /filter /prioritize /bind Kubernetes extender (extender.h); also under /extender/
// Errors are {"error":{"code":"NotFound","message":"...","hint":"..."}} with 400 (bad input),
// 404 (unknown id), 409 (already ended), 500 (journal/IO).
//
// Thread-safety: handlers run on httplib's pool; Daemon and Extender are thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "hase/base/status.h"
#include "hase/service/daemon.h"
#include "hase/service/extender.h"

namespace httplib {
class Server;
}

namespace hase::service {

// Request limits (413 above the body size; connections idle in a read or write for the
// timeout are closed). Not yet: a deadline for a whole header dribbled byte by byte
// (cpp-httplib 0.11 times out each read only) and a cap on connections (issue #15).
inline constexpr size_t kMaxBodyBytes = size_t{1} << 20;  // 1 MiB: a task body is < 70 KiB
inline constexpr int kIoTimeoutS = 5;
inline constexpr size_t kThreads = 64;

class ApiServer {
 public:
  ApiServer(Daemon& daemon, Extender& extender);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds `host`:`port` (port 0 = any free port). Returns the bound port. Errors: IO.
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop(); blocks. Requires Bind.
  void Run();
  // Serves on a background thread.
  void Start();
  void Stop();

 private:
  Daemon& daemon_;
  Extender& extender_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace hase::service
