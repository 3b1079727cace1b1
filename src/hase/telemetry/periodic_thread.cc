#include "hase/telemetry/periodic_thread.h"

#include <chrono>
#include <utility>

namespace hase::telemetry {

void PeriodicThread::Start(double interval_s, std::function<void()> round) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this, interval_s, round = std::move(round)] {
    for (;;) {
      round();
      std::unique_lock<std::mutex> l(mu_);
      if (cv_.wait_for(l, std::chrono::duration<double>(interval_s), [this] { return stop_; })) return;
    }
  });
}

void PeriodicThread::Stop() {
  std::thread running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    running = std::move(thread_);  // two concurrent Stops never join one thread twice
  }
  cv_.notify_all();
  if (running.joinable()) running.join();
}

}  // namespace hase::telemetry
