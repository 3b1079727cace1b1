// HttpGet: one plain-HTTP GET with connect/read timeouts (cpp-httplib underneath).
//
// Only `http://host[:port][/path][?query]` URLs (no TLS: dcgm-exporter and Prometheus are
// scraped inside the cluster network). Thread-safety: each call is independent.
#pragma once

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

// GETs `url`, waiting at most `timeout_s` to connect and `timeout_s` between reads. Returns the
// body of a 200 response. Errors: InvalidArgument (bad URL), IO (connection refused, timeout,
// a non-200 status; the message names the URL and what failed).
Result<std::string> HttpGet(std::string_view url, double timeout_s);

// Percent-encodes `s` for a URL query value (RFC 3986 unreserved characters kept).
std::string UrlEncode(std::string_view s);

}  // namespace hase::telemetry
