// PeriodicThread: one background thread that runs a round now and then every interval, until
// stopped — the loop behind DcgmScraper (scrapes) and PromLoadSource (queries).
//
// Thread-safety: Start and Stop may be called from any thread except the round itself.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace hase::telemetry {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { Stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the loop: `round` runs at once, then again `interval_s` seconds after each round
  // ends. A no-op while the loop runs (the first Start's round and interval stay).
  void Start(double interval_s, std::function<void()> round);
  // Ends the loop and joins it: returns once the current round, if any, has finished (a wait
  // between rounds is cut short). Idempotent; Start may be called again afterwards.
  void Stop();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;   // guarded by mu_
  std::thread thread_;  // guarded by mu_
};

}  // namespace hase::telemetry
