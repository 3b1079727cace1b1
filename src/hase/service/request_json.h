// Reading JSON request bodies strictly (REST API, Kubernetes extender): one parser that refuses
// duplicate keys, one description of a value for "expected X, got Y" errors, and integers out
// of strings where the sender's schema has only strings (Kubernetes annotations and quantities).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hase/base/status.h"

namespace hase::service {

// Parses a request body. Errors: InvalidArgument, where "body", for text that is not JSON
// (nlohmann-json's message: line, column, what it expected) and for an object with a key twice
// ({"model":"a","model":"b"}: RFC 8259 §4 leaves which copy counts to the parser, so a client
// and hase could read different tasks); `where` then names the object ("body", "body /spec").
// `what` names the body in messages ("task body").
Result<nlohmann::json> ParseRequestJson(std::string_view text, std::string_view what = "body");

// For error messages: `a string ("8")`, `a boolean (true)`, `a number (2.5)`, `an object`,
// `an array`, `null`. Strings are cut to 32 bytes.
std::string DescribeJsonValue(const nlohmann::json& v);

// An integer written as a JSON number without a fractional part, or as a string of decimal
// digits with an optional '-' and nothing else ("8", "-1"; not "8x", "", "+8", "1e3", " 8"). Errors: InvalidArgument naming
// `where`, with the value as received.
Result<int64_t> IntegerFromStringOrNumber(const nlohmann::json& v, std::string_view where);

}  // namespace hase::service
