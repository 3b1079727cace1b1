#include "child_process.h"

#include <gtest/gtest.h>

namespace hase::probe {
namespace {

TEST(ChildProcess, WaitsForReadyAndStopsWithSigterm) {
  auto c = ChildProcess::Start({"/bin/sh", "-c", "echo starting; echo ready; exec sleep 30"},
                               "ready", 5000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE((*c)->Running());
  EXPECT_EQ((*c)->Stop(), 128 + 15);  // SIGTERM
  EXPECT_FALSE((*c)->Running());
  EXPECT_EQ((*c)->Stop(), 128 + 15);  // idempotent
}

TEST(ChildProcess, ChildThatExitsEarlyIsAnError) {
  auto c = ChildProcess::Start({"/bin/sh", "-c", "echo cuda error; exit 3"}, "ready", 5000);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsInternal());
  EXPECT_NE(c.status().message().find("exit status 3"), std::string::npos);
  EXPECT_NE(c.status().message().find("cuda error"), std::string::npos);
}

TEST(ChildProcess, TimeoutKillsTheChild) {
  auto c = ChildProcess::Start({"/bin/sh", "-c", "exec sleep 30"}, "ready", 200);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsInternal());
}

TEST(ChildProcess, MissingProgramIsAnError) {
  auto c = ChildProcess::Start({"/nonexistent/hase-probe", "stress", "idle"}, "ready", 1000);
  EXPECT_FALSE(c.ok());
}

}  // namespace
}  // namespace hase::probe
