// The one adapter between yaml-cpp and sched's file loaders: parsing and typed field access
// that turn yaml-cpp exceptions into Status with "FILE:LINE". Internal to sched.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "hase/base/status.h"

namespace hase::sched::yaml {

// Parses `text`. Parse error with `where:LINE` on malformed YAML.
Result<YAML::Node> Load(std::string_view text, const std::string& where);
// At most this many YAML anchors ('&name') in a file: aliases to them expand on every walk, so
// 10^4 nested aliases made a 100 KB file take minutes ("billion laughs").
inline constexpr int kMaxYamlAnchors = 100;
// InvalidArgument (where:LINE of the first anchor over the limit) when `text` has more anchors
// than kMaxYamlAnchors. A '&' in a quoted or commented context may be counted too (harmless:
// hase's files have no reason for anchors at all).
Status CheckAliases(std::string_view text, const std::string& where);
// "where:LINE" for a node (1-based line), or `where` when the node has no mark.
std::string At(const std::string& where, const YAML::Node& node);
// InvalidArgument (where:LINE of the key) for a key of map `map` not in `known`: a misspelt key
// (memroy_mib) must not silently fall back to a default. `what` names the map ("node", "gpu").
Status CheckKeys(const YAML::Node& map, std::initializer_list<std::string_view> known, const std::string& what,
                 const std::string& where);

// Optional typed field: nullopt when absent or null; InvalidArgument (where:LINE) when the
// value does not convert to T.
template <typename T>
Result<std::optional<T>> Field(const YAML::Node& map, const char* key, const std::string& where) {
  const YAML::Node v = map[key];
  if (!v || v.IsNull()) return std::optional<T>();
  try {
    return std::optional<T>(v.as<T>());
  } catch (const YAML::Exception&) {
    return Status::InvalidArgument(std::string("field '") + key + "' has the wrong type",
                                   At(where, v), "see docs/scheduler.md for the file schema");
  }
}

}  // namespace hase::sched::yaml
