// PeriodicThread: the loop behind DcgmScraper and PromLoadSource.
#include "hase/telemetry/periodic_thread.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace hase::telemetry {
namespace {

using Clock = std::chrono::steady_clock;

TEST(PeriodicThread, FirstRoundAtOnceStopCutsTheWaitShortAndRestarts) {
  std::atomic<int> rounds{0};
  PeriodicThread loop;
  loop.Start(3600, [&] { ++rounds; });
  loop.Start(3600, [&] { rounds += 100; });  // already running: no-op
  for (int i = 0; i < 500 && rounds == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(rounds, 1);  // at once, not after the hour
  const auto t0 = Clock::now();
  loop.Stop();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.0);  // the hour's wait is cut
  loop.Stop();                                                               // idempotent
  EXPECT_EQ(rounds, 1);
  loop.Start(0.01, [&] { ++rounds; });  // again after Stop, every 10 ms
  for (int i = 0; i < 1000 && rounds < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  loop.Stop();
  const int after = rounds;
  EXPECT_GE(after, 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(rounds, after);  // nothing runs after Stop returns
}

}  // namespace
}  // namespace hase::telemetry
