// Reading JSON request bodies strictly (REST API, Kubernetes extender): one description of a
// value for "expected X, got Y" errors, and integers out of strings where the sender's schema
// has only strings (Kubernetes annotations and quantities).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"

namespace hase::service {

// For error messages: `a string ("8")`, `a boolean (true)`, `a number (2.5)`, `an object`,
// `an array`, `null`. Strings are cut to 32 bytes.
std::string DescribeJsonValue(const nlohmann::json& v);

// An integer written as a JSON number without a fractional part, or as a string of decimal
// digits with an optional '-' and nothing else ("8", "-1"; not "8x", "", "+8", "1e3", " 8"). Errors: InvalidArgument naming
// `where`, with the value as received.
Result<int64_t> IntegerFromStringOrNumber(const nlohmann::json& v, std::string_view where);

}  // namespace hase::service
