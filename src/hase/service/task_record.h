// TaskRecord: one task as the daemon stores and reports it — what was asked (spec), where it
// went (placement), and what happened (state, times, exit code).
//
// States (stored as text in the journal; never rename):
//   queued     accepted, waiting in the central queue
//   bound      placed on a GPU, waiting in that GPU's local queue (dispatching policies)
//   running    started on its GPU (by the executor, or by an outside runner/Kubernetes)
//   succeeded  ended with exit code 0          (terminal)
//   failed     ended with a non-zero exit code (terminal)
//   cancelled  cancelled by a client           (terminal)
//   rejected   can never run on this cluster   (terminal; `reason` says why)
// Times are wall-clock seconds since the Unix epoch (0 = not yet). Predicted times come from
// the policy's LatencyOracle and ContentionModel at placement.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/task.h"

namespace hase::service {

enum class TaskState { kQueued, kBound, kRunning, kSucceeded, kFailed, kCancelled, kRejected };

const char* TaskStateName(TaskState s);
// Inverse of TaskStateName. InvalidArgument for an unknown name.
Result<TaskState> ParseTaskState(std::string_view name);
bool IsTerminal(TaskState s);

// What a client submits.
struct TaskSpec {
  std::string key;          // client idempotency key: a second submit with it returns the
                            // first task (no duplicate); "" = none
  std::string name;         // for people; defaults to "task-<id>"
  std::string model;        // zoo name or ONNX path, as `hase simulate` workloads
  int64_t batch_size = 1;
  // The input the task is priced at. A client states input_shape ([C, H, W] after the batch,
  // "3x640x640" in JSON) or input_size (H = W); with neither the daemon takes the shape the
  // model's ONNX declares (Daemon::WithInputShape) before journalling, so a journalled task
  // says what it was priced at. Both empty/0 only where no ONNX can be read (a latency table's
  // model-only row prices it).
  int64_t input_size = 0;            // square side, pixels; 0 = not stated / not square
  std::vector<int64_t> input_shape;  // dims after the batch; empty = not stated
  int64_t num_batches = 1;  // from "samples" as ceil(samples / batch_size) when given
  int priority = 0;
  double memory_mib = 0;    // 0 = derive from the model
  int gpus = 1;             // GPUs wanted at once (Kubernetes nvidia.com/gpu); k > 1: k GPUs of
                            // one type on one node, all started together (sched/gang.h)
  double parallel_efficiency = 1.0;  // gpus > 1: sched::Task::parallel_efficiency
  std::string command;      // shell command the executor runs; "" = run by someone else
  std::string pod;          // "namespace/name" when the task came from the Kubernetes extender
  std::string runtime;      // predict/runtime_profile.h name; "" = the daemon's --runtime
  // The team it belongs to (docs/teams.md). With teams configured (`hase serve --teams`) the
  // daemon fills it before journalling: a pod's namespace mapping, else the default team.
  // "" = none (no teams configured).
  std::string team;
};

// Journal keys of pods from the Kubernetes extender: "k8s:<metadata.uid>", or
// "k8s:<namespace>/<name>" for a pod that has no UID.
inline constexpr std::string_view kPodKeyPrefix = "k8s:";
// The pod's metadata.uid from such a key; "" for other keys and for the name form.
inline std::string PodUidOfKey(const std::string& key) {
  if (key.rfind(kPodKeyPrefix, 0) != 0 || key.find('/') != std::string::npos) return "";
  return key.substr(kPodKeyPrefix.size());
}

struct TaskRecord {
  int64_t id = 0;                 // journal row id, from 1, never reused
  TaskSpec spec;
  TaskState state = TaskState::kQueued;
  int gpu = -1;                   // Cluster GPU id, -1 when not placed
  std::string node;               // its node, "" when not placed
  int gpu_index = -1;             // its index on the node
  // A k-GPU task (spec.gpus > 1) once placed: all its GPUs by Cluster id, ascending (gpu is
  // the first); empty otherwise. Journalled (column `gpus`, schema 2).
  std::vector<int> gang;
  std::vector<int> gang_indices;  // their indices on `node`, in the same order
  double submitted_s = 0;
  double placed_s = 0;
  double started_s = 0;
  double ended_s = 0;
  double predicted_start_s = 0;   // at placement
  double predicted_end_s = 0;     // at placement
  double predicted_isolated_ms = 0;  // oracle: whole task alone on its GPU's type
  int exit_code = 0;              // valid in succeeded / failed
  std::string reason;             // rejected / failed / re-queued: why
  int attempts = 0;               // placements so far (a re-queue after a failure adds one)
  int64_t pid = 0;                // executor process id while running, 0 otherwise

  // The sched::Task the policies see (id = record id).
  sched::Task ToSchedTask() const;
};

}  // namespace hase::service
