// `min-min` and `max-min`: the batch-mode mapping heuristics for independent tasks on
// unrelated machines (Ibarra & Kim, JACM 24(2), 1977; compared in Braun et al., JPDC 61(6),
// 2001, and run online in batch mode by Maheswaran et al., JPDC 59(2), 1999). At every
// scheduling event the waiting tasks (up to Policy::Options::max_queue_scan) are mapped one at
// a time: each task's minimum completion time over the GPUs is computed (EarliestFinish, one
// task at a time per GPU, after what is bound or already mapped there), and the task with the
// smallest (min-min: short tasks first) or largest (max-min: long tasks first) of them is
// mapped to its GPU. A mapped task starts when its GPU can start it now; otherwise it claims
// the GPU for the rest of the event and is mapped afresh at the next one. The simulator's
// pass runs the selection (Policy::Options::PassOrder); this file is the per-task rule.
#pragma once

#include <memory>

#include "hase/sched/eft.h"
#include "hase/sched/policy.h"

namespace hase::sched {

// `max_min`: false = min-min, true = max-min.
std::unique_ptr<Policy> MakeMinMinPolicy(std::shared_ptr<const LatencyOracle> oracle,
                                         bool max_min);

}  // namespace hase::sched
