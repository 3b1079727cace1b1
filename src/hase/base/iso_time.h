// Times a person reads (CLI output, log lines) as ISO 8601 UTC with milliseconds:
// "2026-12-04T17:03:12.345Z". JSON keeps numeric seconds and may add these beside them. Also the
// date-time fields other systems write (Slurm's local StartTime, Kubernetes' RFC 3339 times).
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace hase {

// `unix_s` (seconds since 1970-01-01T00:00:00Z) as "YYYY-MM-DDTHH:MM:SS.mmmZ", rounded to the
// millisecond. "never" for +inf, "-" for NaN or -inf (unknown).
std::string IsoUtc(double unix_s);

// The leading "YYYY-MM-DDTHH:MM:SS" of `text` (ISO 8601 / RFC 3339 section 5.6; 'T', 't' or ' '
// between date and time) as calendar fields, tm_isdst = -1; the rest of `text` is not read.
// nullopt when shorter, not digits where digits belong, or a field out of range (month 1–12,
// day 1–31, hour ≤ 23, minute ≤ 59, second ≤ 60). The caller says which zone it is in
// (timegm for UTC, mktime for local time).
std::optional<std::tm> ParseIsoDateTime(std::string_view text);

}  // namespace hase
