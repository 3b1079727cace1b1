// PromText: a parser for the Prometheus text exposition format, version 0.0.4.
//
// The format (https://prometheus.io/docs/instrumenting/exposition_formats/, "Text-based
// format"): UTF-8 lines separated by '\n'. Blank lines are ignored. A line starting with '#' is
// `# HELP <metric> <docstring>` (docstring escapes `\\` and `\n`), `# TYPE <metric> <type>`
// (counter, gauge, histogram, summary, untyped) or a comment. Every other line is one sample:
//
//   metric_name [ "{" label="value" { "," label="value" } [ "," ] "}" ] value [ timestamp ]
//
// Label values escape `\\`, `\"` and `\n`. The value is a Go float: decimal, exponent, `NaN`,
// `+Inf`, `-Inf` (case-insensitive). The optional timestamp is an int64 in milliseconds since
// the Unix epoch. Tokens may be separated by spaces or tabs.
//
// Parse errors name the line ("line 7: ...") and never crash: garbage in, Status::Parse out.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hase/base/status.h"

namespace hase::telemetry {

// One label pair, in the order it appeared.
using PromLabel = std::pair<std::string, std::string>;

// One sample line.
struct PromSample {
  std::string name;                       // metric name, e.g. "DCGM_FI_DEV_SM_CLOCK"
  std::vector<PromLabel> labels;          // as written (escapes resolved)
  double value = 0;                       // may be NaN or ±Inf
  std::optional<int64_t> timestamp_ms;    // ms since the Unix epoch, when the line had one

  // The value of label `key`, or nullptr when absent. Exact (case-sensitive) match.
  const std::string* Label(std::string_view key) const;
};

// `# HELP` / `# TYPE` metadata of one metric family.
struct PromFamily {
  std::string name;
  std::string help;          // "" when no HELP line
  std::string type;          // "untyped" when no TYPE line
};

struct PromParseResult {
  std::vector<PromSample> samples;    // in input order
  std::vector<PromFamily> families;   // in order of first HELP/TYPE line
};

// Parses one exposition body. Errors: Status::Parse naming the 1-based line and what was
// expected (an unterminated label value, a bad float, a duplicate TYPE, ...).
Result<PromParseResult> ParsePromText(std::string_view text);

// Parses a Go-style float as used by the format: "1", "-2.5e3", "NaN", "+Inf", "-Inf", "Inf".
// std::nullopt when `s` is not a number (trailing garbage included).
std::optional<double> ParsePromFloat(std::string_view s);

}  // namespace hase::telemetry
