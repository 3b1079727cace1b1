#include "hase/service/api_auth.h"

#include <sys/stat.h>

#include <arpa/inet.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <openssl/crypto.h>

namespace hase::service {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<std::vector<std::string>> LoadTokenFile(const std::string& path) {
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
  std::vector<std::string> tokens;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string_view t = line;
    if (const size_t hash = t.find('#'); hash != std::string_view::npos) t = t.substr(0, hash);
    t = Trim(t);
    if (t.empty()) continue;
    const std::string where = path + ":" + std::to_string(n);
    for (char c : t) {
      if (std::isspace(static_cast<unsigned char>(c)) || !std::isprint(static_cast<unsigned char>(c))) {
        return Status::InvalidArgument("token has whitespace or a control character", where,
                                       "one token per line");
      }
    }
    if (t.size() < kMinTokenChars) {
      return Status::InvalidArgument("token shorter than " + std::to_string(kMinTokenChars) + " characters",
                                     where, "make one with: openssl rand -hex 32");
    }
    tokens.emplace_back(t);
  }
  if (tokens.empty()) {
    return Status::InvalidArgument("token file has no token", path, "one token per line; make one with: openssl rand -hex 32");
  }
  return tokens;
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr a{};
  const std::string h(host);
  if (inet_pton(AF_INET, h.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

bool TokenSet::Contains(std::string_view candidate) const {
  bool found = false;
  for (const std::string& t : tokens_) {
    // Length is not secret (tokens are >= 16 random characters); the content is compared in
    // constant time.
    if (t.size() == candidate.size() && CRYPTO_memcmp(t.data(), candidate.data(), t.size()) == 0) found = true;
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
