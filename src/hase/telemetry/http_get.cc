#include "hase/telemetry/http_get.h"
#include "hase/base/seconds_text.h"

#include <chrono>
#include <charconv>
#include <cmath>

#include <httplib.h>

namespace hase::telemetry {

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Status::InvalidArgument("URL '" + std::string(url) + "' is not http://", "",
                                   "write http://host:port/path (TLS is not supported)");
  }
  std::string_view rest = url.substr(kScheme.size());
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  HttpUrl out;
  if (slash != std::string_view::npos) {
    out.path_and_query = std::string(rest.substr(slash));
    if (out.path_and_query[0] == '?') out.path_and_query = "/" + out.path_and_query;
  }
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    std::string_view port = authority.substr(colon + 1);
    int p = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || ptr != port.data() + port.size() || p <= 0 || p > 65535) {
      return Status::InvalidArgument("bad port '" + std::string(port) + "' in URL '" + std::string(url) + "'");
    }
    out.port = p;
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) return Status::InvalidArgument("URL '" + std::string(url) + "' has no host");
  out.host = std::string(authority);
  return out;
}

Result<HttpResponse> HttpFetch(std::string_view url, double timeout_s, size_t max_bytes) {
  HASE_ASSIGN_OR_RETURN(HttpUrl u, ParseHttpUrl(url));
  httplib::Client cli(u.host, u.port);
  const double t = std::max(timeout_s, 0.001);
  const time_t sec = static_cast<time_t>(std::floor(t));
  const time_t usec = static_cast<time_t>((t - std::floor(t)) * 1e6);
  cli.set_connection_timeout(sec, usec);
  cli.set_read_timeout(sec, usec);
  cli.set_write_timeout(sec, usec);
  cli.set_tcp_nodelay(true);
  // The body is received piece by piece so that its size and the total time stay bounded: a
  // 100 MB page cost 430-800 MB RSS, and a trickling server, never idle for a whole read
  // timeout, held the scrape thread for ever.
  std::string body;
  bool too_big = false, too_slow = false;
  const auto start = std::chrono::steady_clock::now();
  const double deadline_s = kHttpTotalTimeFactor * t;
  auto res = cli.Get(u.path_and_query.c_str(), [&](const char* data, size_t len) {
    if (body.size() + len > max_bytes) {
      too_big = true;
      return false;
    }
    body.append(data, len);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > deadline_s) {
      too_slow = true;
      return false;
    }
    return true;
  });
  if (too_big) {
    return Status::IO("GET " + std::string(url) + ": response larger than " +
                      std::to_string(max_bytes) + " bytes", "", "is this the right endpoint?");
  }
  if (too_slow) {
    return Status::IO("GET " + std::string(url) + ": response not complete within " +
                      SecondsText(deadline_s), "", "the endpoint sends too slowly");
  }
  if (!res) {
    return Status::IO("GET " + std::string(url) + " failed: " + httplib::to_string(res.error()), "",
                      "check that the endpoint is up and answers within " + SecondsText(timeout_s));
  }
  return HttpResponse{res->status, std::move(body)};
}

Result<std::string> HttpGet(std::string_view url, double timeout_s, size_t max_bytes) {
  HASE_ASSIGN_OR_RETURN(HttpResponse r, HttpFetch(url, timeout_s, max_bytes));
  if (r.status != 200) {
    return Status::IO("GET " + std::string(url) + " returned HTTP " + std::to_string(r.status));
  }
  return std::move(r.body);
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace hase::telemetry
