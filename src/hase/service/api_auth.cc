#include "hase/service/api_auth.h"

#include <sys/stat.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <set>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace hase::service {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string TokenFingerprint(std::string_view token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  return fmt::format("token-{:02x}{:02x}{:02x}{:02x}", digest[0], digest[1], digest[2], digest[3]);
}

Result<std::vector<ApiToken>> LoadApiTokens(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::IO("cannot read token file: " + std::string(std::strerror(errno)), path);
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("token file is not a regular file", path);
  if (st.st_mode & (S_IROTH | S_IWOTH)) {
    return Status::InvalidArgument("token file is readable or writable by every user", path,
                                   "chmod 600 " + path + " (Kubernetes: the Secret volume's defaultMode 0400)");
  }
  if (static_cast<size_t>(st.st_size) > kMaxTokenFileBytes) {
    return Status::InvalidArgument("token file is larger than 1 MiB", path);
  }
  std::ifstream in(path);
  if (!in) return Status::IO("cannot read token file", path);
  std::vector<ApiToken> tokens;
  std::set<std::string> seen_tokens, seen_names;
  std::string line;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '@'; };
  for (int n = 1; std::getline(in, line); ++n) {
    std::string_view t = line;
    if (const size_t hash = t.find('#'); hash != std::string_view::npos) t = t.substr(0, hash);
    t = Trim(t);
    if (t.empty()) continue;
    const std::string where = path + ":" + std::to_string(n);
    for (char c : t) {
      if (!std::isprint(static_cast<unsigned char>(c)) && c != '\t') {
        return Status::InvalidArgument("token has a control character", where, "one token per line");
      }
    }
    // The token, then fields separated by blanks.
    std::vector<std::string_view> words;
    while (!t.empty()) {
      size_t end = 0;
      while (end < t.size() && !std::isspace(static_cast<unsigned char>(t[end]))) ++end;
      words.push_back(t.substr(0, end));
      t = Trim(t.substr(end));
    }
    ApiToken tok;
    tok.token = std::string(words[0]);
    if (tok.token.size() < kMinTokenChars) {
      return Status::InvalidArgument("token shorter than " + std::to_string(kMinTokenChars) + " characters",
                                     where, "make one with: openssl rand -hex 32");
    }
    bool admin = false;
    for (size_t w = 1; w < words.size(); ++w) {
      const std::string_view f = words[w];
      if (f == "admin") {
        admin = true;
        continue;
      }
      const size_t eq = f.find('=');
      const std::string_view key = f.substr(0, eq), value = eq == std::string_view::npos ? "" : f.substr(eq + 1);
      if ((key != "name" && key != "team") || eq == std::string_view::npos) {
        return Status::InvalidArgument(fmt::format("unknown field '{}' after the token", f.substr(0, 32)), where,
                                       "a line is: TOKEN [name=WHO] [team=TEAM | admin]");
      }
      if (value.empty() || !std::all_of(value.begin(), value.end(), name_char)) {
        return Status::InvalidArgument(fmt::format("{} '{}' is empty or has characters outside [A-Za-z0-9_.@-]", key,
                                                   value.substr(0, 32)),
                                       where);
      }
      (key == "name" ? tok.name : tok.team) = std::string(value);
    }
    if (admin && !tok.team.empty()) {
      return Status::InvalidArgument("a token is either a team's (team=) or an admin token, not both", where);
    }
    if (tok.name.empty()) tok.name = TokenFingerprint(tok.token);
    if (!seen_tokens.insert(tok.token).second) {
      return Status::InvalidArgument("the same token is listed twice", where, "give each person or pipeline its own token");
    }
    if (!seen_names.insert(tok.name).second) {
      return Status::InvalidArgument("name '" + tok.name + "' is given to two tokens", where,
                                     "names say who did what in the audit log: make them unique");
    }
    tokens.push_back(std::move(tok));
  }
  if (tokens.empty()) {
    return Status::InvalidArgument("token file has no token", path, "one token per line; make one with: openssl rand -hex 32");
  }
  return tokens;
}

Result<std::vector<std::string>> LoadTokenFile(const std::string& path) {
  HASE_ASSIGN_OR_RETURN(std::vector<ApiToken> entries, LoadApiTokens(path));
  std::vector<std::string> tokens;
  for (ApiToken& e : entries) tokens.push_back(std::move(e.token));
  return tokens;
}

Status CheckTokenTeams(const std::vector<ApiToken>& tokens, const sched::TeamConfig& teams, const std::string& path) {
  for (const ApiToken& t : tokens) {
    if (t.admin()) continue;
    if (!teams.enabled()) {
      return Status::InvalidArgument("token '" + t.name + "' belongs to team '" + t.team + "' but this daemon has no teams",
                                     path, "give hase serve teams (--teams FILE or teams: in --config), or drop team=");
    }
    if (teams.Find(t.team) < 0) {
      return Status::InvalidArgument("token '" + t.name + "' belongs to team '" + t.team + "', not one of the daemon's teams",
                                     path, "the teams are: " + teams.Names());
    }
  }
  return Status::OK();
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr a{};
  const std::string h(host);
  if (inet_pton(AF_INET, h.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

TokenSet::TokenSet(std::vector<ApiToken> tokens) : tokens_(std::move(tokens)) {
  for (const ApiToken& t : tokens_) team_tokens_ = team_tokens_ || !t.admin();
}

TokenSet::TokenSet(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens) tokens_.push_back(ApiToken{t, TokenFingerprint(t), ""});
}

const ApiToken* TokenSet::Find(std::string_view candidate) const {
  const ApiToken* found = nullptr;
  for (const ApiToken& t : tokens_) {
    // Length is not secret (tokens are >= 16 random characters); the content is compared in
    // constant time, and every token is compared.
    if (t.token.size() == candidate.size() && CRYPTO_memcmp(t.token.data(), candidate.data(), t.token.size()) == 0) {
      found = &t;
    }
  }
  return found;
}

std::string_view TokenSet::FromAuthorization(std::string_view header) {
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size()) return {};
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != std::tolower(static_cast<unsigned char>(kBearer[i]))) return {};
  }
  return Trim(header.substr(kBearer.size()));
}

}  // namespace hase::service
