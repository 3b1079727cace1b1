// ApiAuth: who may call the REST API and the Kubernetes extender (issue #15, docs/service.md
// "Threat model").
//
// Bearer tokens come from a file (`hase serve --token-file`): one token per line, `#` starts a
// comment, blank lines are skipped, surrounding whitespace is trimmed. A token is at least 16
// characters without inner whitespace (`openssl rand -hex 32` makes one). The file must not be
// readable or writable by every user (mode o+r / o+w): a token file anyone can read is no secret.
// After the token a line may name whose it is (issue #26 item 4, docs/service.md "Tokens and
// teams"), as space-separated fields:
//   <token> name=alice team=vision   a team token: submits only as team vision, reads, cancels
//                                    and completes only vision's tasks; no GPU/node changes,
//                                    no what-if, no extender
//   <token> name=ops admin           an admin token: everything (the default: a line with the
//                                    token alone is an admin token, as before teams)
// `name` ([A-Za-z0-9_.@-]+, unique in the file) is who the audit log and errors name; without
// it, "token-" + the first 8 hex digits of the token's SHA-256 (stable, not secret). The daemon
// checks that every team is one of its teams. `hase serve` re-reads the file on SIGHUP: a file
// that fails to load leaves the tokens in force unchanged (and says why on stderr).
//
// Rules (ApiServer applies them per endpoint):
//   * no tokens configured: the server only listens on loopback (ApiServer::Bind refuses any
//     other address) and every endpoint is open to local clients;
//   * tokens configured: every mutating endpoint needs `Authorization: Bearer <token>`; when
//     listening beyond loopback, or when the file has a team token, reading ones (/v1/...,
//     /metrics) need it too (a team's tasks are not open to every local user);
//   * /healthz answers every client (kubelet probes cannot send a secret) but gives its reasons
//     only to clients that may read;
//   * the extender verbs also accept a token from `--extender-token-file` as a path segment,
//     `/extender/<token>/filter|prioritize|bind`, because kube-scheduler's extender
//     configuration has a URL prefix and TLS settings but no header or token field.
// Tokens are compared in constant time.
//
// Thread-safety: TokenSet is immutable after construction (ApiServer swaps whole sets).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/team_config.h"

namespace hase::service {

inline constexpr size_t kMinTokenChars = 16;
inline constexpr size_t kMaxTokenFileBytes = size_t{1} << 20;

// One bearer token and whose it is.
struct ApiToken {
  std::string token;
  std::string name;  // who: the audit log and errors name it
  std::string team;  // "" = an admin token
  bool admin() const { return team.empty(); }
};

// Reads a token file (format above). Errors: IO (cannot read), InvalidArgument (world-readable
// or world-writable, no token, a token too short or with whitespace, an unknown field, a line
// with both team= and admin, a token or name given twice; the line is named).
Result<std::vector<ApiToken>> LoadApiTokens(const std::string& path);
// The tokens alone (clients: the first is sent). Errors: as LoadApiTokens.
Result<std::vector<std::string>> LoadTokenFile(const std::string& path);
// InvalidArgument naming the first token whose team `teams` does not list (or any team token
// when teams are off: "start hase serve with teams").
Status CheckTokenTeams(const std::vector<ApiToken>& tokens, const sched::TeamConfig& teams, const std::string& path);
// "token-" + the first 8 hex digits of SHA-256(token).
std::string TokenFingerprint(std::string_view token);

// True for 127.0.0.0/8, ::1 and "localhost": addresses only this host can reach.
bool IsLoopbackHost(std::string_view host);

class TokenSet {
 public:
  TokenSet() = default;
  explicit TokenSet(std::vector<ApiToken> tokens);
  // Admin tokens, each named by its fingerprint.
  explicit TokenSet(const std::vector<std::string>& tokens);
  bool empty() const { return tokens_.empty(); }
  size_t size() const { return tokens_.size(); }
  bool has_team_tokens() const { return team_tokens_; }
  // The entry of `candidate`, or null. Constant time in the candidate's content (not in the
  // number of tokens). The pointer lives as long as the set.
  const ApiToken* Find(std::string_view candidate) const;
  bool Contains(std::string_view candidate) const { return Find(candidate) != nullptr; }
  // The token of an `Authorization: Bearer <token>` header value, or "" when it is not one.
  static std::string_view FromAuthorization(std::string_view header);

 private:
  std::vector<ApiToken> tokens_;
  bool team_tokens_ = false;
};

}  // namespace hase::service
