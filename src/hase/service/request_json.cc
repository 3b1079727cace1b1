#include "hase/service/request_json.h"

#include <charconv>
#include <cmath>

namespace hase::service {

using nlohmann::json;

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
