// Test helpers shared by all test binaries.
#pragma once

#include <string>

namespace hase::testing {

// Repository root (compile-time path of this checkout).
std::string SourceDir();
// ../shared, or "" when absent. Tests that need it call RequireShared().
std::string SharedDir();
// Path of the built `hase` binary (from $HASE_BIN), for end-to-end CLI tests.
std::string HaseBin();
// True when the CI environment variable is "true".
bool InCi();

// Result of running a shell command: exit status and captured stdout/stderr.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs `cmd` through /bin/sh, capturing stdout and stderr separately.
CommandResult RunCommand(const std::string& cmd);

}  // namespace hase::testing

// Skips the test when ../shared is absent; fails under CI=true where it must exist.
#define HASE_REQUIRE_SHARED()                                                 \
  do {                                                                        \
    if (::hase::testing::SharedDir().empty()) {                               \
      if (::hase::testing::InCi()) FAIL() << "../shared missing under CI";    \
      GTEST_SKIP() << "../shared not present";                                \
    }                                                                         \
  } while (0)
