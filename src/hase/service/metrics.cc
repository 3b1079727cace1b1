#include "hase/service/metrics.h"

#include <fmt/format.h>

namespace hase::service {

std::string PromLabelValue(std::string_view v) {
  std::string o;
  o.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

void Metrics::CountFinished(const std::string& state) {
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_[state];
}

void Metrics::ObserveDecision(const std::string& outcome, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++decisions_[outcome];
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) {
      ++bucket_counts_[i];
      break;
    }
  }
  ++latency_count_;
  latency_sum_ += seconds;
}

int64_t Metrics::decisions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latency_count_;
}

std::string Metrics::Render() const {
  std::string out;
  auto counter = [&](const char* name, const char* help, int64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, v);
  };
  counter("hase_tasks_submitted_total", "Tasks accepted (duplicates excluded).", submitted_.load());
  counter("hase_tasks_duplicate_total", "Submissions answered with an existing task (same key).",
          duplicates_.load());
  counter("hase_tasks_requeued_total", "Tasks re-queued after a GPU or node failure.", requeued_.load());
  std::lock_guard<std::mutex> lock(mu_);
  out += "# HELP hase_decisions_total Policy cycles by outcome.\n# TYPE hase_decisions_total counter\n";
  for (const char* o : {"bind", "wait", "reject"}) {
    auto it = decisions_.find(o);
    out += fmt::format("hase_decisions_total{{outcome=\"{}\"}} {}\n", o, it == decisions_.end() ? 0 : it->second);
  }
  out += "# HELP hase_tasks_finished_total Tasks that reached a terminal state.\n"
         "# TYPE hase_tasks_finished_total counter\n";
  for (const char* s : {"succeeded", "failed", "cancelled", "rejected"}) {
    auto it = finished_.find(s);
    out += fmt::format("hase_tasks_finished_total{{state=\"{}\"}} {}\n", s, it == finished_.end() ? 0 : it->second);
  }
  out += "# HELP hase_decision_latency_seconds One policy cycle (Schedule + Commit).\n"
         "# TYPE hase_decision_latency_seconds histogram\n";
  int64_t cum = 0;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    cum += bucket_counts_[i];
    out += fmt::format("hase_decision_latency_seconds_bucket{{le=\"{}\"}} {}\n", kLatencyBuckets[i], cum);
  }
  out += fmt::format("hase_decision_latency_seconds_bucket{{le=\"+Inf\"}} {}\n", latency_count_);
  out += fmt::format("hase_decision_latency_seconds_sum {}\n", latency_sum_);
  out += fmt::format("hase_decision_latency_seconds_count {}\n", latency_count_);
  return out;
}

}  // namespace hase::service
