// ApiServer: the HTTP face of `hase serve` (cpp-httplib, one thread pool).
//
//   POST   /v1/tasks                 submit (task_json.h); 201 new, 200 same key and task seen
//                                    before, 409 same key with another task
//   GET    /v1/tasks[?state=&limit=] newest first (limit 1..10000, default 100; else 400)
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
//   POST   /extender/<token>/filter|prioritize|bind   the same, token in the path (api_auth.h)
// Errors are {"error":{"code":"not found","message":"...","where":"...","hint":"..."}}; `code`
// is lower case words, as Status's CodeName ("invalid argument", "not found", "conflict", ...),
// plus "unauthenticated" (401), "permission_denied" (403), "unavailable" (503, too many
// connections) and "http" (errors cpp-httplib answers before a handler). Statuses: 400 (bad
// input), 401 (no or wrong bearer token), 403 (a team's token and another team's task, or an
// admin-only change), 404 (unknown id), 409 (already ended), 503 (the journal
// cannot be written, e.g. a full disk; Retry-After), 500 (other).
//
// Who may call what: api_auth.h. Connections and their deadlines: guarded_server.h.
//
// Thread-safety: handlers run on one thread per connection; Daemon and Extender are thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hase/base/status.h"
#include "hase/service/api_auth.h"
#include "hase/service/daemon.h"
#include "hase/service/extender.h"
#include "hase/service/connection_limits.h"

namespace httplib {
struct Request;
}

namespace hase::service {

class GuardedServer;

// GET /v1/tasks?limit=: the default and the most one answer lists.
inline constexpr size_t kDefaultListLimit = 100;
inline constexpr size_t kMaxListLimit = 10000;

// Bodies over this get 413 before they are parsed (a task body is < 70 KiB).
inline constexpr size_t kMaxBodyBytes = size_t{1} << 20;  // 1 MiB

struct ApiServerOptions {
  ConnectionLimits limits;                  // connections, deadlines (guarded_server.h)
  std::vector<std::string> tokens;          // admin bearer tokens (tests); with token_entries: both
  // Bearer tokens with whose they are (--token-file, api_auth.h); empty (and `tokens` empty) =
  // loopback only.
  std::vector<ApiToken> token_entries;
  // The file ReloadTokens re-reads (`hase serve` on SIGHUP); "" = nothing to reload.
  std::string token_file;
  // Audit log (one JSON line per change, and per refused request, naming who): null = the
  // daemon's logger at info ("audit {...}").
  std::shared_ptr<spdlog::logger> audit;
  std::vector<std::string> extender_tokens; // path tokens of /extender/<token>/ (--extender-token-file)
  std::string tls_cert, tls_key;            // PEM files; both empty = plain HTTP
  // Reasons from outside the daemon that make /healthz degraded (`hase serve`: the instance
  // lock's lease renewal failing, instance_lock.h); null = none.
  std::function<std::vector<std::string>()> more_health;
};

class ApiServer {
 public:
  ApiServer(Daemon& daemon, Extender& extender, ApiServerOptions options = {});
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds `host`:`port` (port 0 = any free port) and loads the TLS files. Returns the bound
  // port. Errors: IO (cannot listen), InvalidArgument (an address beyond loopback without
  // tokens; TLS files that do not load).
  Result<int> Bind(const std::string& host, int port);
  const GuardedServer& server() const { return *server_; }
  // Re-reads options.token_file (api_auth.h) and its teams against the daemon's, then swaps
  // the tokens in force; in-flight requests finish with the old ones. On error the tokens in
  // force stay unchanged and the error is returned (IO, InvalidArgument; also when the new file
  // has no token while the server listens beyond loopback). Thread-safe. Returns the number of
  // tokens now in force.
  Result<size_t> ReloadTokens();
  // Serves until Stop(); blocks. Requires Bind.
  void Run();
  // Serves on a background thread.
  void Start();
  void Stop();

 private:
  // kAdmin: a change only admin tokens may make (GPUs, nodes, what-if); team tokens get 403.
  enum class Access { kPublic, kRead, kMutate, kAdmin, kExtender };
  // Who calls: the token's name and team; without a token "anonymous" (admin rights where
  // Allowed lets it in: loopback without team tokens).
  struct Caller {
    std::string name = "anonymous";
    std::string team;  // "" = admin (or anonymous)
    bool admin() const { return team.empty(); }
  };
  bool Allowed(Access access, const httplib::Request& req) const;
  Caller CallerOf(const httplib::Request& req) const;
  std::shared_ptr<const TokenSet> tokens() const;
  void Audit(const Caller& who, const httplib::Request& req, int status, const std::string& detail) const;

  Daemon& daemon_;
  Extender& extender_;
  const ApiServerOptions options_;
  mutable std::mutex tokens_mu_;
  std::shared_ptr<const TokenSet> tokens_;  // guarded by tokens_mu_: swapped by ReloadTokens
  const TokenSet extender_tokens_;
  bool loopback_ = true;  // set by Bind before serving
  std::unique_ptr<GuardedServer> server_;
  std::thread thread_;
};

}  // namespace hase::service
