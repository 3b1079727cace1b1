#include "hase/sched/team_queue.h"

#include <tuple>
#include <utility>

namespace hase::sched {

TeamQueue::TeamQueue(const QuotaLedger& ledger, std::vector<double> factors, const std::vector<Item>& items)
    : ledger_(ledger), factors_(std::move(factors)) {
  const size_t teams = ledger.config().teams.size();
  queues_.resize(teams + 1);
  head_.assign(teams + 1, 0);
  priority_.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const int t = items[i].team;
    const size_t q = (t >= 0 && static_cast<size_t>(t) < teams) ? static_cast<size_t>(t) : teams;
    queues_[q].push_back(static_cast<int>(i));
    priority_.push_back(items[i].priority);
  }
}

int TeamQueue::Next() {
  const size_t teams = queues_.size() - 1;
  int best = -1;
  std::tuple<int, int, double, int> best_key;  // larger is better (index negated)
  for (size_t q = 0; q <= teams; ++q) {
    if (head_[q] >= queues_[q].size()) continue;
    const int team = q < teams ? static_cast<int>(q) : -1;
    if (team >= 0 && ledger_.AtMax(team)) continue;
    const int item = queues_[q][head_[q]];
    const double factor = team >= 0 && static_cast<size_t>(team) < factors_.size() ? factors_[team] : 1.0;
    const std::tuple<int, int, double, int> key{team >= 0 && ledger_.BelowGuarantee(team) ? 1 : 0, priority_[item],
                                                factor, -item};
    if (best < 0 || key > best_key) {
      best = static_cast<int>(q);
      best_key = key;
    }
  }
  if (best < 0) return -1;
  return queues_[best][head_[best]++];
}

int TeamQueue::Head(int team) const {
  const size_t teams = queues_.size() - 1;
  const size_t q = (team >= 0 && static_cast<size_t>(team) < teams) ? static_cast<size_t>(team) : teams;
  return head_[q] < queues_[q].size() ? queues_[q][head_[q]] : -1;
}

}  // namespace hase::sched
