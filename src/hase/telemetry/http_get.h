// HttpGet: one plain-HTTP GET with connect/read timeouts (cpp-httplib underneath).
//
// Only `http://host[:port][/path][?query]` URLs (no TLS: dcgm-exporter and Prometheus are
// scraped inside the cluster network). Thread-safety: each call is independent.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hase/base/status.h"

namespace hase::telemetry {

struct HttpUrl {
  std::string host;
  int port = 80;
  std::string path_and_query = "/";  // always starts with '/'
};

// Splits an http:// URL. Errors: InvalidArgument (another scheme, empty host, bad port).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// Bounds of one GET: the body (a dcgm-exporter page is ~15 KB per GPU; a Prometheus answer
// for 10 000 GPUs a few MB) and the whole transfer, as a multiple of the per-read timeout.
inline constexpr size_t kMaxHttpBodyBytes = size_t{64} << 20;
inline constexpr double kHttpTotalTimeFactor = 3;

struct HttpResponse {
  int status = 0;    // HTTP status code
  std::string body;  // the body, whatever the status
};

// GETs `url` like HttpGet but returns any HTTP status with its body (a Prometheus query error
// answers 400/422/503 with a JSON body that says why). Errors: as HttpGet, except non-200.
Result<HttpResponse> HttpFetch(std::string_view url, double timeout_s,
                               size_t max_bytes = kMaxHttpBodyBytes);

// GETs `url`, waiting at most `timeout_s` to connect and `timeout_s` between reads, and at most
// kHttpTotalTimeFactor × `timeout_s` for the whole body. Returns the body of a 200 response.
// Errors: InvalidArgument (bad URL), IO (connection refused, timeout, a body over `max_bytes`
// or slower than the total limit, a non-200 status; the message names the URL and what).
Result<std::string> HttpGet(std::string_view url, double timeout_s,
                            size_t max_bytes = kMaxHttpBodyBytes);

// Percent-encodes `s` for a URL query value (RFC 3986 unreserved characters kept).
std::string UrlEncode(std::string_view s);

}  // namespace hase::telemetry
