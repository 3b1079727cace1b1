#include "hase/telemetry/prom_text.h"

#include <cmath>

#include <gtest/gtest.h>

#include "fixture.h"
#include "testing.h"

namespace hase::telemetry {
namespace {

std::string Fixture(const std::string& name) {
  return hase::testing::ReadFileForTest(hase::testing::SourceDir() + "/tests/data/telemetry/" + name);
}

TEST(PromText, ParsesDcgmExporterDefaultCounters) {
  std::string text = Fixture("dcgm_node1_a100_default.prom");
  ASSERT_FALSE(text.empty());
  Result<PromParseResult> r = ParsePromText(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->samples.size(), 28u);  // 14 metrics x 2 GPUs
  EXPECT_EQ(r->families.size(), 14u);
  EXPECT_EQ(r->families[0].name, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(r->families[0].type, "gauge");
  EXPECT_EQ(r->families[0].help, "SM clock frequency (in MHz).");
  EXPECT_EQ(r->families[4].type, "counter");
  const PromSample& s = r->samples[1];
  EXPECT_EQ(s.name, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_DOUBLE_EQ(s.value, 1095);
  ASSERT_NE(s.Label("UUID"), nullptr);
  EXPECT_EQ(*s.Label("UUID"), "GPU-7c3e9d21-5b4a-8f6e-1d2c-9e0b3a5f7d42");
  EXPECT_EQ(*s.Label("modelName"), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(*s.Label("Hostname"), "node1");
  EXPECT_EQ(s.Label("hostname"), nullptr);  // labels are case-sensitive
  EXPECT_EQ(s.labels.size(), 7u);
  EXPECT_FALSE(s.timestamp_ms.has_value());
}

TEST(PromText, LabelEscapesHelpEscapesAndTrailingComma) {
  auto r = ParsePromText(
      "# HELP m A \\\\ backslash\\nand newline\n"
      "m{a=\"q\\\"uote\",b=\"back\\\\slash\",c=\"new\\nline\",} 1\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(r->families[0].help, "A \\ backslash\nand newline");
  EXPECT_EQ(*r->samples[0].Label("a"), "q\"uote");
  EXPECT_EQ(*r->samples[0].Label("b"), "back\\slash");
  EXPECT_EQ(*r->samples[0].Label("c"), "new\nline");
  // Braces and commas inside a value do not end the label set.
  auto r2 = ParsePromText("m{a=\"x,}y\"} 2\n");
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(*r2->samples[0].Label("a"), "x,}y");
}

TEST(PromText, SpecialValuesTimestampsAndWhitespace) {
  auto r = ParsePromText(
      "a NaN\n"
      "b +Inf\n"
      "c -Inf 1395066363000\n"
      "d{x=\"1\"}\t-1.5e-3   -1000\r\n"
      "\n"
      "# a plain comment\n"
      "e{} 9223372036854775794\n"
      "f 1_000\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->samples.size(), 6u);
  EXPECT_TRUE(std::isnan(r->samples[0].value));
  EXPECT_TRUE(std::isinf(r->samples[1].value) && r->samples[1].value > 0);
  EXPECT_TRUE(std::isinf(r->samples[2].value) && r->samples[2].value < 0);
  EXPECT_EQ(r->samples[2].timestamp_ms, 1395066363000);
  EXPECT_DOUBLE_EQ(r->samples[3].value, -0.0015);
  EXPECT_EQ(r->samples[3].timestamp_ms, -1000);
  EXPECT_DOUBLE_EQ(r->samples[4].value, 9223372036854775794.0);
  EXPECT_TRUE(r->samples[4].labels.empty());
  EXPECT_DOUBLE_EQ(r->samples[5].value, 1000);
  EXPECT_EQ(r->families.size(), 0u);
}

TEST(PromText, GarbageIsAParseErrorNamingTheLine) {
  const char* bad[] = {
      "m{a=\"unterminated} 1\n",        // value never closed
      "m{a=\"x\" b=\"y\"} 1\n",         // missing comma
      "ok 1\nm 1.2.3\n",                // bad float on line 2
      "m 1 12abc\n",                    // bad timestamp
      "m 1 2 3\n",                      // trailing text
      "{a=\"x\"} 1\n",                  // no metric name
      "m\n",                            // no value
      "# TYPE m gauge\n# TYPE m counter\n",  // second TYPE
      "# TYPE m sometype\n",            // unknown type
      "<html><body>502 Bad Gateway</body></html>\n",
      "m 0x10\n",                       // hex is not allowed
  };
  for (const char* text : bad) {
    Result<PromParseResult> r = ParsePromText(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_TRUE(r.status().IsParse()) << text;
    EXPECT_NE(r.status().where().find("line "), std::string::npos);
  }
  auto r = ParsePromText("ok 1\nm 1.2.3\n");
  EXPECT_EQ(r.status().where(), "line 2");
}

TEST(PromText, FloatGrammar) {
  EXPECT_EQ(ParsePromFloat("42"), 42.0);
  EXPECT_EQ(ParsePromFloat("-2.5e3"), -2500.0);
  EXPECT_EQ(ParsePromFloat("inf"), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*ParsePromFloat("nan")));
  EXPECT_FALSE(ParsePromFloat(""));
  EXPECT_FALSE(ParsePromFloat("1e"));
  EXPECT_FALSE(ParsePromFloat("abc"));
  EXPECT_FALSE(ParsePromFloat("0x1p3"));
}

TEST(PromText, EmptyBodyHasNoSamples) {
  auto r = ParsePromText("");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->samples.empty());
}

}  // namespace
}  // namespace hase::telemetry
