// GuardedServer: cpp-httplib's Server with the connection bounds cpp-httplib 0.11 lacks, and
// optional TLS (issue #15: 8 connections dribbling one header byte every 2 s took the API down).
//
// cpp-httplib 0.11 times out each read only, so a client sending one byte every few seconds
// holds a worker thread for ever, and its fixed pool queues every later connection behind
// such clients. GuardedServer replaces how one accepted connection is served (the library's
// virtual process_and_close_socket) and the task queue:
//  * one thread per connection, at most ConnectionLimits::max_connections open. A connection
//    over the cap closes the oldest one that is idle between requests or still receiving its
//    request (never one inside a handler or writing a response); when there is none it gets
//    `503` and is closed. So 1 000 slow clients cannot starve a new /healthz request;
//  * a request (line, headers and body) must arrive within request_deadline_s of its first
//    byte, a response must be written within response_deadline_s, one read or write may stall
//    at most io_timeout_s, and a keep-alive connection waits idle_timeout_s for its next
//    request;
//  * TLS (EnableTls): OpenSSL over the same non-blocking sockets, so the handshake counts as
//    receiving the request and the same deadlines hold. (cpp-httplib's SSLServer serves its
//    sockets itself, privately, and would bypass all of the above.)
// Handlers call MarkBusy() on entry (ApiServer does) so a running handler is never evicted.
//
// Thread-safety: configure before listen; stats() and MarkBusy() may be called at any time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include <httplib.h>

#include "hase/base/status.h"
#include "hase/service/connection_limits.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace hase::service {

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits);
  ~GuardedServer() override;

  // Serves HTTPS with a PEM certificate chain and private key. Errors: InvalidArgument (a
  // file that does not load, a key that does not match the certificate), with OpenSSL's reason.
  Status EnableTls(const std::string& cert_file, const std::string& key_file);
  bool tls() const { return tls_ != nullptr; }

  // The connection of the calling handler thread is busy (not evictable) until its response
  // is written. A no-op outside a GuardedServer connection thread.
  static void MarkBusy();

  struct Stats {
    size_t open = 0;         // connections now
    uint64_t evicted = 0;    // closed to admit a newer one
    uint64_t refused = 0;    // answered 503 at the cap
    uint64_t timed_out = 0;  // closed by a request/response deadline or io timeout
  };
  Stats stats() const;

  // Closes every connection (server stop).
  void CloseAllConnections();

  // After bind: a listen backlog of kListenBacklog instead of cpp-httplib's 5, so a burst of
  // connections is not answered with dropped SYNs (each costing the client a 1 s retransmit).
  static constexpr int kListenBacklog = 1024;
  void WidenBacklog();

 private:
  class Connection;
  class ThreadPerConnection;
  friend class ThreadPerConnection;

  bool process_and_close_socket(socket_t sock) override;
  // Registers `c`; over the cap evicts the oldest idle/receiving one. False: refuse `c`.
  bool Admit(Connection* c, bool force_refuse);
  void Release(Connection* c);

  const ConnectionLimits limits_;
  SSL_CTX* tls_ = nullptr;  // owned; null = plain HTTP

  mutable std::mutex mu_;
  std::list<Connection*> open_;  // guarded by mu_
  uint64_t evicted_ = 0;         // guarded by mu_
  uint64_t refused_ = 0;         // guarded by mu_
  std::atomic<uint64_t> timed_out_{0};
};

}  // namespace hase::service
