#include "hase/base/status.h"
#include "hase/base/seconds_text.h"

#include <gtest/gtest.h>

namespace hase {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd value " + std::to_string(x), "arg", "pass an even number");
  return x / 2;
}

Status UseHalf(int x, int* out) {
  HASE_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::OK();
}

TEST(StatusTest, OkIsDefaultAndExitZero) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s.ExitCode(), 0);
}

TEST(StatusTest, ToStringHasWhereWhatAndHint) {
  Status s = Status::NotFound("no such GPU type 'a1000'", "cluster.yaml:3", "did you mean A100?");
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ(s.ToString(), "not found: cluster.yaml:3: no such GPU type 'a1000' (did you mean A100?)");
  EXPECT_EQ(s.ExitCode(), 3);
  EXPECT_EQ(s.WithContext("hase simulate").where(), "hase simulate: cluster.yaml:3");
}

TEST(StatusTest, ConflictIsCodeSevenExitEight) {
  Status s = Status::Conflict("key 'k' was used for another task", "task field 'key'");
  EXPECT_TRUE(s.IsConflict());
  EXPECT_FALSE(s.IsInvalidArgument());
  EXPECT_EQ(static_cast<int>(s.code()), 7);  // never renumbered: reaches exit statuses and JSON
  EXPECT_EQ(s.ExitCode(), 8);
  EXPECT_EQ(s.ToString(), "conflict: task field 'key': key 'k' was used for another task");
}

TEST(SecondsText, ThreeSignificantDigitsOrWholeSeconds) {
  EXPECT_EQ(SecondsText(2.0), "2 s");  // std::to_string gave "2.000000 s"
  EXPECT_EQ(SecondsText(0.25), "0.25 s");
  EXPECT_EQ(SecondsText(0.5), "0.5 s");  // {:.0f} gave "0 s"
  EXPECT_EQ(SecondsText(12.345), "12.3 s");
  EXPECT_EQ(SecondsText(1234.4), "1234 s");
  EXPECT_EQ(SecondsText(0.0012), "0.0012 s");
}

TEST(StatusTest, ResultPropagates) {
  int v = 0;
  EXPECT_TRUE(UseHalf(8, &v).ok());
  EXPECT_EQ(v, 4);
  Status s = UseHalf(3, &v);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "odd value 3");
}

}  // namespace
}  // namespace hase
