// LoadSampler: reads a GPU's load every period on a background thread while the probe times.
//
// The reader is a function so tests can pass a fake; the probe passes NvmlDevice::Read.
// Usage: Start(); …time kernels…; auto readings = Stop(); AverageReadings(readings).
// Thread-safety: Start/Stop from one thread; the reader runs on the sampler's thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "dcgm_fields.h"
#include "hase/base/status.h"

namespace hase::probe {

class LoadSampler {
 public:
  using Reader = std::function<Result<NvmlReading>()>;

  // REQUIRES: period_ms > 0.
  LoadSampler(Reader reader, double period_ms) : reader_(std::move(reader)), period_ms_(period_ms) {}
  ~LoadSampler() { (void)Stop(); }
  LoadSampler(const LoadSampler&) = delete;
  LoadSampler& operator=(const LoadSampler&) = delete;

  // Starts sampling: one reading now, then one every period_ms. A no-op when running.
  void Start();
  // Stops the thread (after one last reading) and returns the readings since Start(), t_s
  // counted from Start(). Readings whose reader failed are dropped; the first failure is
  // kept in last_error(). A no-op returning {} when not running.
  std::vector<NvmlReading> Stop();
  const Status& last_error() const { return last_error_; }

 private:
  void Loop();

  const Reader reader_;
  const double period_ms_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<NvmlReading> readings_;  // guarded by mu_
  Status last_error_;                  // written by the thread, read after join
  std::chrono::steady_clock::time_point start_;
};

}  // namespace hase::probe
