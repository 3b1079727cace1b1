// ApiAuth: who may call the REST API and the Kubernetes extender (issue #15, docs/service.md
// "Threat model").
//
// Bearer tokens come from a file (`hase serve --token-file`): one token per line, `#` starts a
// comment, blank lines are skipped, surrounding whitespace is trimmed. A token is at least 16
// characters without inner whitespace (`openssl rand -hex 32` makes one). The file must not be
// readable or writable by every user (mode o+r / o+w): a token file anyone can read is no secret.
//
// Rules (ApiServer applies them per endpoint):
//   * no tokens configured: the server only listens on loopback (ApiServer::Bind refuses any
//     other address) and every endpoint is open to local clients;
//   * tokens configured: every mutating endpoint needs `Authorization: Bearer <token>`; when
//     listening beyond loopback, reading ones (/v1/..., /metrics) need it too;
//   * /healthz answers every client (kubelet probes cannot send a secret) but gives its reasons
//     only to clients that may read;
//   * the extender verbs also accept a token from `--extender-token-file` as a path segment,
//     `/extender/<token>/filter|prioritize|bind`, because kube-scheduler's extender
//     configuration has a URL prefix and TLS settings but no header or token field.
// Tokens are compared in constant time.
//
// Thread-safety: immutable after construction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"

namespace hase::service {

inline constexpr size_t kMinTokenChars = 16;
inline constexpr size_t kMaxTokenFileBytes = size_t{1} << 20;

// Reads a token file (format above). Errors: IO (cannot read), InvalidArgument (world-readable
// or world-writable, no token, a token too short or with whitespace; the line is named).
Result<std::vector<std::string>> LoadTokenFile(const std::string& path);

// True for 127.0.0.0/8, ::1 and "localhost": addresses only this host can reach.
bool IsLoopbackHost(std::string_view host);

class TokenSet {
 public:
  TokenSet() = default;
  explicit TokenSet(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}
  bool empty() const { return tokens_.empty(); }
  // Constant time in the candidate's content (not in the number of tokens).
  bool Contains(std::string_view candidate) const;
  // The token of an `Authorization: Bearer <token>` header value, or "" when it is not one.
  static std::string_view FromAuthorization(std::string_view header);

 private:
  std::vector<std::string> tokens_;
};

}  // namespace hase::service
