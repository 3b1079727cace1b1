// Gang placement: a task that needs k > 1 GPUs at once (Task::gpus), e.g. a tensor-parallel
// model or a data-parallel split of its batches.
//
// Rules (docs/scheduler.md, "Multi-GPU tasks"):
//   - the k GPUs are whole GPUs (no MIG instance) of one type on one node (NVLink/PCIe peers,
//     as `--gres=gpu:TYPE:k` asks Slurm for);
//   - all k start together and are held alone for the whole run: no task shares them (its
//     RunningTask on each claims the GPU's whole memory), since a tensor-parallel step waits
//     for the slowest rank and a co-runner would slow every rank;
//   - its runtime is GangIsolatedMs.
// A central-queue policy binds it when k such GPUs are free now, else it waits with a
// reservation on the k GPUs that free up first (the shadow time is the k-th of their predicted
// ends): EASY backfilling (backfill.h) then lets other tasks use them only when they end
// before that. A dispatching policy (eft, eft-share) queues it on all k local queues at once;
// it starts when it heads all of them (StartGangIfReady). Policies that cannot place k GPUs
// (Policy::Options::gang == kRefuse) reject it with one reason naming the policies that can.
#pragma once

#include <optional>
#include <vector>

#include "hase/sched/framework.h"

namespace hase::sched {

// Predicted runtime of `task` alone on Task::gpus GPUs of one type, ms, from `single_ms`, its
// whole runtime alone on one GPU of that type (TaskProfile::isolated_ms or the truth's).
// Model: the batches are split data-parallel: each GPU runs ceil(num_batches / k) of them
// (the model replicated, or sharded by a tensor-parallel runtime that reports the same
// per-batch time), and the run lasts the largest share, divided by Task::parallel_efficiency:
//   GangIsolatedMs = single_ms × ceil(num_batches / k) / num_batches / parallel_efficiency.
// k = 1 returns single_ms unchanged.
double GangIsolatedMs(const Task& task, double single_ms);

enum class GangRule {
  kRefuse,          // the policy places each task on one GPU: k-GPU tasks are rejected
  kEarliestFinish,  // the k GPUs (one node, one type) with the earliest predicted finish
  kFastest,         // the fastest type that has k GPUs on one node; earliest finish among those
};

// One cycle for a k-GPU task (task.gpus > 1) with `cycle` from PreFilter. `dispatch`: the
// policy binds on arrival into local queues (always kBind). Otherwise kBind when the chosen k
// GPUs can start it now, else kWait with reserve on them. kReject when no node has k GPUs of
// one type that can host it, or when `rule` is kRefuse (`policy` names it in the reason).
// Predicted drains use `model` (the oracle's contention model); claims are not waited for.
Decision DecideGang(const Task& task, const ClusterState& state, const CycleState& cycle,
                    const ContentionModel& model, GangRule rule, bool dispatch, const std::string& policy);

// A split task (Task::split, gpus 1): the batches over idle whole GPUs (no reservation, memory
// for the task) in proportion to their speed, when that ends earlier than `single_end_ms` (the
// policy's own one-GPU choice). GPUs are added fastest first (per-batch time, then id), at most
// kMaxSplitParts; each gets floor(n × its rate / total rate) batches, the rest one by one to
// the GPU that would end it first; the task ends with its slowest part. Each part runs alone on
// its GPU, which the task holds until its last part ends (as a k-GPU task). Returns kBind with
// gpus (ascending) and parts, or nullopt when splitting ends no earlier.
inline constexpr int kMaxSplitParts = 8;
std::optional<Decision> DecideSplit(const Task& task, const ClusterState& state, const CycleState& cycle,
                                    double single_end_ms);

// Binds `decision` (kBind, decision.gpus): running on every GPU when all k can start it now,
// else at the back of each GPU's local queue (listed in ClusterState::gang_of_task).
void BindGang(const Task& task, const Decision& decision, const CycleState& cycle, ClusterState& state);

// Reserves decision.gpus for `task` from decision.start_ms (replacing what it held). GPUs
// reserved by another task meanwhile are left alone. Idempotent.
void ReserveGang(const Task& task, const Decision& decision, const CycleState& cycle, ClusterState& state);
// Releases every reservation `task` holds and forgets its gang entry. Idempotent.
void UnreserveGang(int task_id, ClusterState& state);

// A queued k-GPU task heading `gpu`'s local queue starts on all its GPUs at `now_ms` when it
// heads every one of their queues and they run nothing. Returns its GPUs when it started
// (empty otherwise). The driver then starts its truth and calls OnGpuChanged for each.
std::vector<int> StartGangIfReady(ClusterState& state, int gpu, double now_ms);

// Whether the GPUs in `gpus` could start a k-GPU task that needs `need_mib` on each now:
// nothing running or queued there (claims hold nothing), and no reservation of another task that it would
// delay (it must end by that reservation's shadow time).
bool GangFitsNow(const ClusterState& state, const std::vector<int>& gpus, int task_id, double runtime_ms);

}  // namespace hase::sched
