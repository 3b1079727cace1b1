#include "hase/base/iso_time.h"

#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace hase {

std::string IsoUtc(double unix_s) {
  if (std::isinf(unix_s) && unix_s > 0) return "never";
  if (!std::isfinite(unix_s)) return "-";
  const long long ms = std::llround(unix_s * 1000.0);
  long long secs = ms / 1000;
  long long milli = ms % 1000;
  if (milli < 0) milli += 1000, secs -= 1;
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
}

std::optional<std::tm> ParseIsoDateTime(std::string_view t) {
  auto digits = [&](size_t at, size_t n, int& out) {
    out = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      out = out * 10 + (t[i] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, s;
  if (t.size() < 19 || !digits(0, 4, y) || t[4] != '-' || !digits(5, 2, mo) || t[7] != '-' || !digits(8, 2, d) ||
      (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !digits(11, 2, h) || t[13] != ':' || !digits(14, 2, mi) ||
      t[16] != ':' || !digits(17, 2, s)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  tm.tm_isdst = -1;
  return tm;
}

}  // namespace hase
