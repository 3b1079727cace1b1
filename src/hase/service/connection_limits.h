// ConnectionLimits: how many connections the API server holds and how long each may take
// (GuardedServer, guarded_server.h; issue #15). Defaults are `hase serve`'s.
#pragma once

#include <cstddef>

namespace hase::service {

struct ConnectionLimits {
  size_t max_connections = 256;      // open connections (one thread each); see GuardedServer
  double request_deadline_s = 10;    // first byte of a request (or TLS handshake) → its last byte
  double response_deadline_s = 30;   // first byte of a response → its last byte
  double io_timeout_s = 5;           // one read or write without progress
  double idle_timeout_s = 5;         // keep-alive wait for the next request
  size_t keep_alive_requests = 100;  // requests per connection before it is closed
};

}  // namespace hase::service
