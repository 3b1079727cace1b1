#include "load_sampler.h"

namespace hase::probe {

void LoadSampler::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    readings_.clear();
  }
  last_error_ = Status::OK();
  start_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] { Loop(); });
}

std::vector<NvmlReading> LoadSampler::Stop() {
  if (!thread_.joinable()) return {};
  stop_ = true;
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(readings_);
}

void LoadSampler::Loop() {
  const auto period = std::chrono::duration<double, std::milli>(period_ms_);
  auto next = start_;
  while (true) {
    const bool last = stop_.load();
    Result<NvmlReading> r = reader_();
    const double t_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (r.ok()) {
      r->t_s = t_s;
      std::lock_guard<std::mutex> lock(mu_);
      readings_.push_back(*r);
    } else if (last_error_.ok()) {
      last_error_ = r.status();
    }
    if (last) return;
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
    while (!stop_.load() && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

}  // namespace hase::probe
