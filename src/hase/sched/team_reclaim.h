// Reservations follow the team order: the GPU that frees next goes to the team TeamQueue
// (team_queue.h) offers first, even where a task further back holds an EASY reservation on it
// (backfill.h).
//
// TeamQueue offers a team below its guarantee first, then the higher head priority, then the
// higher fair-share factor; but a reservation made in an earlier pass (by the queue head of a
// flood, before a reclaiming or less-served team's task arrived) would still keep the freed GPU
// for its holder: the task offered first could only backfill around it. So at the start of a
// team pass every reservation whose holder would not be offered first is released: its team is
// at its maximum, or another team with waiting tasks ranks strictly higher by TeamQueue's key
// (below guarantee, head priority, fair-share factor). The task offered first may then take
// the GPU or reserve it itself; the holder reserves again later in the pass if the policy still
// wants it. Kueue: reclaimWithinCohort (a borrower yields to the lender's nominal quota); Slurm:
// the backfill scheduler re-plans its reservations in priority order every cycle. Used by
// `hase simulate` (sim/simulator.cc), the daemon's pass and the live plan (queue_plan.h), so
// the three agree.
#pragma once

#include <utility>
#include <vector>

#include "hase/sched/cluster_state.h"
#include "hase/sched/policy.h"
#include "hase/sched/quota.h"
#include "hase/sched/team_queue.h"

namespace hase::sched {

// `waiting_ids[i]` is the task id of `waiting[i]` (the pass's items, as given to TeamQueue);
// `factors`: fair-share factor per team (as given to TeamQueue). Reservations held by tasks
// not in `waiting_ids` (the daemon's phantom reservations on GPUs it cannot use) are kept.
// Returns (task id, GPU) of each reservation released, by task id. Calls Policy::Forget and
// Policy::OnGpuChanged for each; the driver marks those GPUs changed for its incremental passes.
std::vector<std::pair<int, int>> YieldReservationsToTeamOrder(ClusterState& state, Policy& policy,
                                                              const QuotaLedger& ledger,
                                                              const std::vector<double>& factors,
                                                              const std::vector<TeamQueue::Item>& waiting,
                                                              const std::vector<int>& waiting_ids);

}  // namespace hase::sched
