#include "hase/telemetry/prom_api_client.h"
#include "hase/base/seconds_text.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hase/telemetry/dcgm_fields.h"
#include "hase/telemetry/http_get.h"

namespace hase::telemetry {
namespace {

using nlohmann::json;

Status Bad(const std::string& what) {
  return Status::Parse(what, "Prometheus API response",
                       "expected {\"status\":\"success\",\"data\":{\"resultType\":\"vector\",...}}");
}

// [ts, "value"] → sample fields.
Status DecodePoint(const json& point, PromSample& s) {
  if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string()) {
    return Bad("a value is not [timestamp, \"string\"]");
  }
  std::optional<double> v = ParsePromFloat(point[1].get<std::string>());
  if (!v) return Bad("value '" + point[1].get<std::string>() + "' is not a number");
  s.value = *v;
  s.timestamp_ms = static_cast<int64_t>(std::llround(point[0].get<double>() * 1000.0));
  return Status::OK();
}

Result<std::vector<PromSample>> Decode(const json& j) {
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string()) return Bad("no \"status\"");
  if (j["status"] != "success") {
    std::string type = j.value("errorType", std::string("?"));
    std::string err = j.value("error", std::string("?"));
    return Status::Unsupported("Prometheus query failed: " + type + ": " + err);
  }
  if (!j.contains("data") || !j["data"].is_object()) return Bad("no \"data\" object");
  const json& data = j["data"];
  std::string type = data.value("resultType", std::string());
  if (!data.contains("result")) return Bad("no \"data.result\"");
  const json& result = data["result"];
  std::vector<PromSample> out;
  if (type == "scalar") {
    PromSample s;
    HASE_RETURN_IF_ERROR(DecodePoint(result, s));
    out.push_back(std::move(s));
    return out;
  }
  if (type != "vector") {
    return Bad("resultType '" + type + "' is not an instant vector or scalar (wrap ranges in avg_over_time)");
  }
  if (!result.is_array()) return Bad("\"result\" is not an array");
  for (const json& r : result) {
    if (!r.is_object() || !r.contains("metric") || !r["metric"].is_object() || !r.contains("value")) {
      return Bad("a result lacks \"metric\" or \"value\"");
    }
    PromSample s;
    for (const auto& [k, v] : r["metric"].items()) {
      if (!v.is_string()) return Bad("label '" + k + "' is not a string");
      if (k == "__name__") {
        s.name = v.get<std::string>();
      } else {
        s.labels.emplace_back(k, v.get<std::string>());
      }
    }
    HASE_RETURN_IF_ERROR(DecodePoint(r["value"], s));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<std::vector<PromSample>> ParsePromApiResponse(std::string_view body) {
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("body is not JSON");
  try {
    return Decode(j);
  } catch (const json::exception& e) {  // type mismatches inside the adapter
    return Bad(e.what());
  }
}

std::string SampleWeightedQuery(std::string_view metric, std::string_view selector, double window_s) {
  const long w = std::max(1L, std::lround(window_s));
  std::string sel(selector);
  if (!sel.empty() && sel.front() != '{') sel = "{" + sel + "}";
  constexpr std::string_view kBy = "Hostname,hostname,gpu,UUID,modelName,GPU_I_ID,GPU_I_PROFILE";
  return fmt::format("sum by({0})(sum_over_time({1}{2}[{3}s])) / sum by({0})(count_over_time({1}{2}[{3}s]))", kBy,
                     metric, sel, w);
}

std::string AvgOverTimeQuery(std::string_view metric, std::string_view selector, double window_s) {
  long w = std::max(1L, std::lround(window_s));
  return fmt::format("avg_over_time({}{}[{}s])", metric, selector, w);
}

Result<std::vector<PromSample>> PromApiClient::Query(std::string_view promql,
                                                     std::optional<double> time_s) const {
  std::string url = options_.base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/api/v1/query?query=" + UrlEncode(promql);
  if (time_s) url += fmt::format("&time={:.3f}", *time_s);
  Result<HttpResponse> fetched = HttpFetch(url, options_.timeout_s);
  if (!fetched.ok()) {
    // The URL-encoded query makes the transport message unreadable: name the server instead.
    std::string why = fetched.status().message();
    if (const size_t p = why.find(" failed: "); p != std::string::npos) why = why.substr(p + 9);
    return Status::IO("Prometheus at " + options_.base_url + " did not answer: " + why, "",
                      "is it up at that address, and answering within " + SecondsText(options_.timeout_s) + "?");
  }
  HttpResponse& resp = *fetched;
  if (resp.status != 200) {
    // Prometheus explains a refused query in a JSON body: {"status":"error","errorType":…,"error":…}.
    json j = json::parse(resp.body, nullptr, /*allow_exceptions=*/false);
    std::string why;
    if (j.is_object() && j.contains("error") && j["error"].is_string()) {
      why = fmt::format("({}): {}", j.value("errorType", std::string("?")), j["error"].get<std::string>());
    } else {
      why = ": " + resp.body.substr(0, 200);
    }
    const std::string msg = fmt::format("Prometheus answered HTTP {} {}", resp.status, why);
    if (resp.status == 400 || resp.status == 422) {
      return Status::InvalidArgument(msg, std::string(promql), "check --selector and the Prometheus URL");
    }
    return Status::IO(msg, std::string(promql), "is Prometheus overloaded or still starting?");
  }
  Result<std::vector<PromSample>> r = ParsePromApiResponse(resp.body);
  if (!r.ok()) return r.status().WithContext(std::string(promql));
  return r;
}

Result<std::vector<GpuObservation>> PromApiClient::LoadWindow(double window_s, std::string_view selector,
                                                             const GpuTypeResolver& resolver) const {
  std::vector<PromSample> all;
  for (std::string_view metric : kDcgmLoadFields) {
    HASE_ASSIGN_OR_RETURN(std::vector<PromSample> got, Query(SampleWeightedQuery(metric, selector, window_s)));
    for (PromSample& s : got) {
      s.name = std::string(metric);  // aggregation drops __name__
      // Labels absent from a series come back absent (by() keeps only those present).
      all.push_back(std::move(s));
    }
  }
  return GroupDcgmSamples(all, "", WallClockSeconds(), resolver).gpus;
}

}  // namespace hase::telemetry
