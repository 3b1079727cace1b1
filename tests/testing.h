// Test helpers shared by all test binaries.
#pragma once

#include <csignal>
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

// The signal a crash inside a library (SIGSEGV, SIGFPE) kills a child process with. Under
// AddressSanitizer (tools/ci/sanitize.sh: abort_on_error=1) ASan's own handler reports the
// crash and aborts: SIGABRT.
inline int CrashSignal(int native) {
#if defined(__SANITIZE_ADDRESS__)
  (void)native;
  return SIGABRT;
#else
  return native;
#endif
}
// Its name as base/isolated_call.h writes it: "SIGFPE" ("SIGABRT" under ASan).
inline std::string CrashSignalName(const std::string& native) {
#if defined(__SANITIZE_ADDRESS__)
  (void)native;
  return "SIGABRT";
#else
  return native;
#endif
}

}  // namespace hase::testing

// Skips the test when ../shared is absent; fails under CI=true where it must exist.
#define HASE_REQUIRE_SHARED()                                                 \
  do {                                                                        \
    if (::hase::testing::SharedDir().empty()) {                               \
      if (::hase::testing::InCi()) FAIL() << "../shared missing under CI";    \
      GTEST_SKIP() << "../shared not present";                                \
    }                                                                         \
  } while (0)
