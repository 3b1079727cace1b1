// Times a person reads (CLI output, log lines) as ISO 8601 UTC with milliseconds:
// "2026-12-04T17:03:12.345Z". JSON keeps numeric seconds and may add these beside them.
#pragma once

#include <string>

namespace hase {

// `unix_s` (seconds since 1970-01-01T00:00:00Z) as "YYYY-MM-DDTHH:MM:SS.mmmZ", rounded to the
// millisecond. "never" for +inf, "-" for NaN or -inf (unknown).
std::string IsoUtc(double unix_s);

}  // namespace hase
