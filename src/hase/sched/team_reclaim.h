// Reclaim before reservations: a team below its guarantee gets the next GPU that frees, even
// where a borrower's EASY reservation (backfill.h) holds it.
//
// TeamQueue offers a reclaiming team's tasks first, but a reservation made in an earlier pass
// by a task of a team at or above its guarantee (the queue head of a flood) would still keep
// the freed GPU for that borrower: the reclaimer, offered first, may only backfill around it.
// So at the start of a team pass, while a task of a team below its guarantee waits, every
// reservation held by a task of a team at or above its own guarantee is released; the
// reclaimer, offered first, may then take the GPU or reserve it itself, and the borrower
// reserves again later in the pass if the policy still wants to. Kueue: reclaimWithinCohort
// (a borrower's admission yields to the nominal quota of the lender). Used by `hase simulate`
// (sim/simulator.cc), the daemon's pass and the live plan (queue_plan.h), so all three agree.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "hase/sched/cluster_state.h"
#include "hase/sched/policy.h"
#include "hase/sched/quota.h"

namespace hase::sched {

// `waiting_teams`: the TeamConfig index of every waiting task (any order, repeats allowed).
// `team_of(task_id)`: the team of the task holding a reservation; -2 for a holder that is not a
// task of the queue (the daemon's phantom reservations on GPUs it cannot use): never released.
// Returns (task id, GPU) of each reservation released, by task id. Calls Policy::Forget and
// Policy::OnGpuChanged for each; the driver marks those GPUs changed for its incremental passes.
std::vector<std::pair<int, int>> YieldReservationsToReclaim(ClusterState& state, Policy& policy, const QuotaLedger& ledger,
                                            const std::vector<int>& waiting_teams,
                                            const std::function<int(int task_id)>& team_of);

}  // namespace hase::sched
