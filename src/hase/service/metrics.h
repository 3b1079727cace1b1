// Metrics: the daemon's counters and its decision-latency histogram, rendered in the
// Prometheus text exposition format 0.0.4 for GET /metrics.
//
// Exposed series (all prefixed hase_):
//   hase_tasks_submitted_total            counter  accepted submissions (not duplicates)
//   hase_tasks_duplicate_total            counter  submissions answered with an existing task
//   hase_decisions_total{outcome}         counter  policy cycles by outcome: bind, wait, reject
//   hase_decision_latency_seconds         histogram one policy cycle (Schedule + Commit)
//   hase_tasks_finished_total{state}      counter  succeeded, failed, cancelled, rejected
//   hase_tasks_requeued_total             counter  re-queued after a GPU or node failure
//   gauges written at render time (Daemon::MetricsText): hase_queue_length, hase_tasks{state},
//   hase_gpus{health}, hase_telemetry_degraded; per GPU {gpu,node,index,type}:
//   hase_gpu_running_tasks, _queued_tasks, _failed, _projected_drain_seconds,
//   _background_sm_active, _live_load_used, _memory_hase_mib, _memory_foreign_mib,
//   _memory_capacity_mib; per placed, unfinished task {task,model,state,+GPU labels}:
//   hase_task_predicted_end_seconds (from now), hase_task_elapsed_seconds,
//   hase_task_predicted_seconds
// Thread-safety: all methods are safe for concurrent use.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace hase::service {

// A label value escaped as the text exposition format 0.0.4 requires: \\, \" and \n.
std::string PromLabelValue(std::string_view v);

class Metrics {
 public:
  // Upper bounds of the latency buckets, seconds: 10 µs … 1 s, roughly ×2.5 apart.
  static constexpr std::array<double, 12> kLatencyBuckets = {
      1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 1e-1, 1.0};

  void CountSubmitted() { ++submitted_; }
  void CountDuplicate() { ++duplicates_; }
  void CountRequeued(int n = 1) { requeued_ += n; }
  void CountFinished(const std::string& state);
  // One policy cycle: its outcome ("bind", "wait", "reject") and latency, seconds.
  void ObserveDecision(const std::string& outcome, double seconds);

  // Text of the counters and histogram (no gauges; the daemon appends those).
  std::string Render() const;

  int64_t decisions() const;

 private:
  std::atomic<int64_t> submitted_{0}, duplicates_{0}, requeued_{0};
  mutable std::mutex mu_;
  std::map<std::string, int64_t> decisions_;  // guarded by mu_
  std::map<std::string, int64_t> finished_;   // guarded by mu_
  std::array<int64_t, kLatencyBuckets.size()> bucket_counts_{};  // guarded by mu_, not cumulative
  int64_t latency_count_ = 0;                                    // guarded by mu_
  double latency_sum_ = 0;                                       // guarded by mu_
};

}  // namespace hase::service
