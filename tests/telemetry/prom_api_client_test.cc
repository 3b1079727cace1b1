#include "hase/telemetry/prom_api_client.h"

#include <cmath>

#include <gtest/gtest.h>

#include "http_stub.h"
#include "testing.h"

namespace hase::telemetry {
namespace {

using hase::testing::HttpStub;

TEST(PromApi, ParsesVectorFixture) {
  std::string body = hase::testing::ReadFileForTest(hase::testing::SourceDir() +
                                                     "/tests/data/telemetry/prom_api_vector.json");
  auto r = ParsePromApiResponse(body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_DOUBLE_EQ((*r)[1].value, 0.8125);
  EXPECT_EQ((*r)[1].timestamp_ms, 1764504000123);
  EXPECT_EQ(*(*r)[1].Label("gpu"), "1");
  EXPECT_EQ(*(*r)[0].Label("Hostname"), "node1");
}

TEST(PromApi, ScalarNameSpecialValuesAndErrors) {
  auto s = ParsePromApiResponse(R"({"status":"success","data":{"resultType":"scalar","result":[1.5,"NaN"]}})");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(std::isnan((*s)[0].value));
  auto n = ParsePromApiResponse(
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"x"},"value":[2,"+Inf"]}]}})");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)[0].name, "up");
  EXPECT_EQ((*n)[0].labels.size(), 1u);
  EXPECT_TRUE(std::isinf((*n)[0].value));
  auto e = ParsePromApiResponse(R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})");
  EXPECT_TRUE(e.status().IsUnsupported());
  EXPECT_NE(e.status().message().find("bad_data"), std::string::npos);
  EXPECT_TRUE(ParsePromApiResponse("not json").status().IsParse());
  EXPECT_TRUE(ParsePromApiResponse(R"({"status":"success","data":{"resultType":"matrix","result":[]}})").status().IsParse());
  EXPECT_TRUE(ParsePromApiResponse(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}})").status().IsParse());
  EXPECT_TRUE(ParsePromApiResponse(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"2"]}]}})").status().IsParse());
}

TEST(PromApi, AvgOverTimeQueryText) {
  EXPECT_EQ(AvgOverTimeQuery("DCGM_FI_PROF_SM_ACTIVE", "{Hostname=\"node1\"}", 10),
            "avg_over_time(DCGM_FI_PROF_SM_ACTIVE{Hostname=\"node1\"}[10s])");
  EXPECT_EQ(AvgOverTimeQuery("m", "", 0.2), "avg_over_time(m[1s])");
}

TEST(PromApi, QueryOverHttpEncodesThePromQl) {
  HttpStub prom;
  prom.SetBody(hase::testing::ReadFileForTest(hase::testing::SourceDir() + "/tests/data/telemetry/prom_api_vector.json"),
               "application/json");
  PromApiClient client({"http://127.0.0.1:" + std::to_string(prom.port()) + "/", 2.0});
  std::string q = AvgOverTimeQuery("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "{Hostname=~\"node[12]\"}", 10);
  auto r = client.Query(q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 2u);
  EXPECT_EQ(prom.last_query(), q);  // arrived intact after percent-encoding
  // The windowed load of every GPU: the stub answers every field with the same vector, so
  // each ratio field is the fixture's value and GPU_UTIL is that / 100.
  auto gpus = client.LoadWindow(10, "", nullptr);
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_DOUBLE_EQ(*(*gpus)[1].load.sm_active, 0.8125);
  EXPECT_DOUBLE_EQ(*(*gpus)[1].load.gpu_util, 0.008125);
  EXPECT_DOUBLE_EQ((*gpus)[1].sample_time_s, 1764504000.123);
  prom.Down();
  EXPECT_TRUE(client.Query("up").status().IsIO());
}

}  // namespace
}  // namespace hase::telemetry
