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

}  // namespace hase
