#include "hase/service/request_json.h"

#include <charconv>
#include <cmath>
#include <set>
#include <vector>

namespace hase::service {

using nlohmann::json;

Result<json> ParseRequestJson(std::string_view text, std::string_view what) {
  // One frame per open object or array: the keys seen (objects) and the current key or index,
  // for the path of a duplicate.
  struct Frame {
    bool object = true;
    std::set<std::string> keys;
    std::string at;       // current key (object) or index (array)
    int64_t next = 0;     // arrays: index of the next element
  };
  std::vector<Frame> frames;
  std::string duplicate, path;
  auto element_begins = [&] {
    if (!frames.empty() && !frames.back().object) frames.back().at = std::to_string(frames.back().next++);
  };
  json::parser_callback_t callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        element_begins();
        frames.push_back(Frame{event == json::parse_event_t::object_start, {}, "", 0});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames.empty()) frames.pop_back();
        break;
      case json::parse_event_t::key:
        if (!frames.empty()) {
          const std::string& k = parsed.get_ref<const std::string&>();
          if (!frames.back().keys.insert(k).second && duplicate.empty()) {
            duplicate = k;
            for (size_t i = 0; i + 1 < frames.size(); ++i) path += "/" + frames[i].at;
          }
          frames.back().at = k;
        }
        break;
      case json::parse_event_t::value:
        element_begins();
        break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string(what) + " is not JSON: " + e.what(), "body",
                                   "send one JSON object (Content-Type: application/json)");
  }
  if (!duplicate.empty()) {
    return Status::InvalidArgument(
        "duplicate key " + json(duplicate).dump(-1, ' ', false, json::error_handler_t::replace) + " in " +
            std::string(what),
        path.empty() ? "body" : "body " + path,
        "send each key once (JSON parsers disagree on which copy counts, RFC 8259 section 4)");
  }
  return j;
}

std::string DescribeJsonValue(const json& v) {
  switch (v.type()) {
    case json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      return "a string (" + json(s.size() > 32 ? s.substr(0, 32) + "..." : s).dump(-1, ' ', false,
                                                                                    json::error_handler_t::replace) + ")";
    }
    case json::value_t::boolean: return std::string("a boolean (") + (v.get<bool>() ? "true" : "false") + ")";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number (" + v.dump() + ")";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::null: return "null";
    default: return "an unsupported JSON value";
  }
}

Result<int64_t> IntegerFromStringOrNumber(const json& v, std::string_view where) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>() &&
      std::abs(v.get<double>()) < 9.0e18) {
    return static_cast<int64_t>(v.get<double>());
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    const char* first = s.data();
    int64_t out = 0;
    auto [end, ec] = std::from_chars(first, s.data() + s.size(), out);
    if (ec == std::errc() && end == s.data() + s.size() && first != end) return out;
    if (ec == std::errc::result_out_of_range) {
      return Status::InvalidArgument("is out of range: " + DescribeJsonValue(v), std::string(where));
    }
  }
  return Status::InvalidArgument("must be an integer, not " + DescribeJsonValue(v), std::string(where));
}

}  // namespace hase::service
