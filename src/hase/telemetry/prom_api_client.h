// PromApiClient: instant queries against the Prometheus HTTP API (GET /api/v1/query), used to
// read DCGM load averaged over a window instead of scraping exporters directly.
//
// Response shape (https://prometheus.io/docs/prometheus/latest/querying/api/):
//   {"status":"success","data":{"resultType":"vector",
//    "result":[{"metric":{"gpu":"0",...},"value":[1732960000.123,"0.42"]}]}}
// "scalar" results are `"result":[ts,"v"]`; "matrix" (range vectors) is rejected: ask for an
// instant vector (e.g. wrap a range in avg_over_time). Values are strings: "NaN", "+Inf" ok.
//
// Thread-safety: const methods, safe for concurrent use.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/prom_text.h"

namespace hase::telemetry {

// Decodes one /api/v1/query response body into samples: labels from "metric" (with
// `__name__` moved to PromSample::name when present), value parsed, timestamp_ms =
// round(ts × 1000). Errors: Parse (not JSON, missing fields, a matrix or string result);
// Unsupported when Prometheus answered "status":"error" (the message carries errorType and
// error).
Result<std::vector<PromSample>> ParsePromApiResponse(std::string_view json);

// The sample-weighted mean of `metric` per GPU over the last `window_s` seconds, merged across
// series churn: with Kubernetes pod labels each pod label set is a new series (one GPU showed
// 4 series in a 10 s window), so series are summed by the GPU's identity labels first:
//   sum by(L)(sum_over_time(M S[Ws])) / sum by(L)(count_over_time(M S[Ws]))
// with L = Hostname, hostname, gpu, UUID, modelName, GPU_I_ID, GPU_I_PROFILE (labels absent
// from a series are simply empty). `selector` is "" or "{...}" (braces added when missing).
std::string SampleWeightedQuery(std::string_view metric, std::string_view selector, double window_s);

// `avg_over_time(<metric><selector>[<window>s])`, e.g.
// AvgOverTimeQuery("DCGM_FI_PROF_SM_ACTIVE", "{Hostname=\"node1\"}", 10) →
// `avg_over_time(DCGM_FI_PROF_SM_ACTIVE{Hostname="node1"}[10s])`. window_s is rounded to whole
// seconds, minimum 1.
std::string AvgOverTimeQuery(std::string_view metric, std::string_view selector, double window_s);

struct PromApiOptions {
  std::string base_url;    // e.g. "http://prometheus:9090" (no trailing /api/v1)
  double timeout_s = 5.0;  // connect + read timeout of one query
};

class PromApiClient {
 public:
  explicit PromApiClient(PromApiOptions options) : options_(std::move(options)) {}

  // Runs an instant query at `time_s` (wall seconds; Prometheus' "now" when absent).
  // Errors carry Prometheus's own message when it answers non-200 with its JSON error body:
  // InvalidArgument for 400/422 ("Prometheus answered HTTP 400 (bad_data): <error>", e.g. a
  // bad --selector), IO for 503 and any other status, and IO when unreachable or timed out;
  // Parse / Unsupported as ParsePromApiResponse.
  Result<std::vector<PromSample>> Query(std::string_view promql,
                                        std::optional<double> time_s = std::nullopt) const;

  // The LoadSnapshot of every GPU averaged over the last `window_s` seconds: one
  // SampleWeightedQuery per kDcgmLoadFields metric (restricted by `selector`, e.g.
  // `{Hostname=~"node[12]"}` or ""), grouped like a scrape (GPU_I_ID series fold into their
  // GPU). A metric that returns no series (SM_ACTIVE when it is off) leaves that field unset
  // (GpuObservation::field_mask). Sample times are the queries' evaluation timestamps; key.host
  // is the host label (resolve it with node_map.h). Errors: the first failing query's.
  Result<std::vector<GpuObservation>> LoadWindow(double window_s, std::string_view selector,
                                                 const GpuTypeResolver& resolver) const;

 private:
  const PromApiOptions options_;
};

}  // namespace hase::telemetry
