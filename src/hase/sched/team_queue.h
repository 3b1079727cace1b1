// TeamQueue: the order a scheduling pass offers waiting tasks in when teams share the cluster.
//
// Each team has its own queue (the driver's order: priority, the policy's key, arrival). At
// every step the next task is the head of the best team that is below its maximum:
//   1. a team below its guarantee first (it reclaims its quota on the GPUs that free up),
//   2. then the higher head priority,
//   3. then the higher fair-share factor (FairShare: the less served team),
//   4. then the head that came first in the driver's order.
// Teams at their maximum (QuotaLedger::AtMax) are skipped: their tasks wait with a QuotaHold.
// The ledger is read live, so a bind the driver records (QuotaLedger::Hold) between two Next
// calls moves its team down the order at once. Kueue terms: docs/teams.md.
#pragma once

#include <vector>

#include "hase/sched/quota.h"

namespace hase::sched {

class TeamQueue {
 public:
  struct Item {
    int team = -1;     // TeamConfig index (-1: a team not listed; treated as one more team)
    int priority = 0;  // Task::priority
  };
  // `items`: the waiting tasks in the driver's order. `factors`: fair-share factor per team
  // (indexed like the config's teams; missing = 1). `ledger` must outlive the queue.
  TeamQueue(const QuotaLedger& ledger, std::vector<double> factors, const std::vector<Item>& items);

  // Index into `items` of the next task to offer; -1 when every team below its maximum has
  // been drained. Each item is returned at most once.
  int Next();
  // Index into `items` of the next task Next would give of team `team` (a TeamConfig index;
  // -1 = the teams not listed), or -1 when that team's queue is drained.
  int Head(int team) const;

 private:
  const QuotaLedger& ledger_;
  const std::vector<double> factors_;
  std::vector<int> priority_;             // per item
  std::vector<std::vector<int>> queues_;  // per team (+1 for team -1): item indices in order
  std::vector<size_t> head_;              // per team queue: next position
};

}  // namespace hase::sched
