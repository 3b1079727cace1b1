// RunIsolated (base/isolated_call.h): replies, errors, crashes and hangs of the child.
#include "hase/base/isolated_call.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace hase {
namespace {

TEST(RunIsolated, ReturnsTheChildsBytes) {
  std::string big(1 << 20, 'x');  // more than a pipe buffer
  big[12345] = '\0';
  auto r = RunIsolated([&]() -> Result<std::string> { return big; });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, big);
}

TEST(RunIsolated, ChildMemoryChangesStayInTheChild) {
  int value = 1;
  auto r = RunIsolated([&]() -> Result<std::string> {
    value = 2;
    return std::to_string(value);
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "2");
  EXPECT_EQ(value, 1);
}

TEST(RunIsolated, StatusAndExceptionsComeBack) {
  auto s = RunIsolated([]() -> Result<std::string> {
    return Status::Unsupported("no such op", "node 'n'", "drop it");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsUnsupported());
  EXPECT_EQ(s.status().ToString(), Status::Unsupported("no such op", "node 'n'", "drop it").ToString());
  auto e = RunIsolated([]() -> Result<std::string> { throw std::runtime_error("bad dims"); });
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(e.status().IsInvalidArgument());
  EXPECT_EQ(e.status().message(), "bad dims");
}

TEST(RunIsolated, CrashesAreInternalErrors) {
  IsolatedCallOptions o;
  o.what = "test work";
  for (int sig : {SIGSEGV, SIGFPE, SIGABRT, SIGBUS}) {
    auto r = RunIsolated([sig]() -> Result<std::string> {
      ::raise(sig);
      return std::string("unreached");
    }, o);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInternal());
    EXPECT_EQ(r.status().message(), "test work crashed (SIG" + std::string(::sigabbrev_np(sig)) + ")");
  }
  auto null = RunIsolated([]() -> Result<std::string> {
    volatile int* p = nullptr;
    return std::to_string(*p);
  }, o);
  EXPECT_EQ(null.status().message(), "test work crashed (SIGSEGV)");
  auto quit = RunIsolated([]() -> Result<std::string> { ::_exit(5); }, o);
  EXPECT_EQ(quit.status().message(), "test work exited with status 5 without a result");
}

TEST(RunIsolated, HangIsStoppedAtTheTimeout) {
  IsolatedCallOptions o;
  o.what = "test work";
  o.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = RunIsolated([]() -> Result<std::string> {
    for (;;) ::pause();
  }, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInternal());
  EXPECT_EQ(r.status().message(), "test work did not finish in 0.3 s and was stopped");
  EXPECT_GE(s, 0.29);
  EXPECT_LT(s, 5.0);
}

// Threads calling at once each get their own child's reply, and a slow child of one thread
// does not hold up another thread's (its pipe's write end is closed in the other children).
TEST(RunIsolated, ConcurrentCallsFromThreads) {
  std::vector<std::thread> threads;
  std::vector<std::string> got(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([i, &got] {
      auto r = RunIsolated([i]() -> Result<std::string> {
        if (i == 0) ::usleep(300000);
        return "reply " + std::to_string(i);
      });
      got[i] = r.ok() ? *r : r.status().ToString();
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], "reply " + std::to_string(i));
}

}  // namespace
}  // namespace hase
