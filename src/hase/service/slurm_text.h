// Slurm's text, parsed: `scontrol show node -o`, `scontrol show job -o`, `squeue -o` lines and
// the state names in them, as Slurm 22.05 prints them (tests/data/service/slurm/ holds output
// captured from a real slurmctld). Pure functions, no I/O; the Slurm backend runs the commands.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/service/backend.h"

namespace hase::service {

// One `scontrol show ... -o` line as Key → value. Values may contain spaces (Reason=hase test
// [root@...]): a space-separated word without '=' continues the previous value.
std::map<std::string, std::string> ParseSlurmRecord(std::string_view line);

// One typed generic resource of a node, from `Gres=gpu:a100:2,gpu:l4:2(S:0)`.
struct SlurmGres {
  std::string name;   // "gpu"
  std::string type;   // "a100"; "" when untyped ("gpu:2")
  int count = 0;
};
// Parses a Gres= value ("(null)" or "" = none). Errors: Parse naming the bad item.
Result<std::vector<SlurmGres>> ParseGres(std::string_view gres);

struct SlurmNode {
  std::string name;
  std::string state;                // as printed: "IDLE", "MIXED+DRAIN", "DOWN*+NOT_RESPONDING"
  std::vector<SlurmGres> gres;      // every gres; GPUs are name == "gpu"
  std::vector<std::string> partitions;
  std::string reason;               // Reason=, "" when none
};
// Every node of `scontrol show node -o` output. Errors: Parse (a line without NodeName=, a
// bad Gres=), with the line number.
Result<std::vector<SlurmNode>> ParseScontrolNodes(std::string_view text);

// Whether Slurm would start a job on a node in `state`: false for DOWN, DRAIN (draining or
// drained), FAIL, FUTURE, POWERED_DOWN/POWERING_DOWN, NOT_RESPONDING ('*'), MAINT, REBOOT,
// UNKNOWN; true for IDLE, MIXED, ALLOCATED, COMPLETING, PLANNED (with no such flag).
bool SlurmNodeUsable(std::string_view state);
// What `state` means for hase (backend.h NodeCondition): down for DOWN, FAIL, NOT_RESPONDING
// ('*'; jobs there end NODE_FAIL); drained for the other unusable states (DRAIN, MAINT,
// REBOOT, POWERED_DOWN, UNKNOWN, ...: nothing new starts, running jobs go on); usable otherwise.
NodeCondition SlurmNodeCondition(std::string_view state);
// True when the state's only trouble is that slurmctld has not heard from the node yet or
// lately (NOT_RESPONDING, NO_RESPOND, UNKNOWN, sinfo's '*'), with no DOWN, FAIL, DRAIN or
// other administrative flag: what every node shows for a few seconds after a slurmctld
// restart. Slurm itself sets DOWN only after SlurmdTimeout; the backend keeps the node's last
// condition meanwhile (draining or failing it then cancelled jobs that had just started).
bool SlurmNodeUnsettled(std::string_view state);

// One line of `squeue --noheader -o %i|%j|%T|%N`.
struct SlurmJob {
  int64_t id = 0;
  std::string name;
  std::string state;  // "PENDING", "RUNNING", "COMPLETED", ...
  std::string nodes;  // "" while pending
};
// `squeue` lines in the format kSqueueFormat. Errors: Parse (a line with the wrong number of
// fields or a non-numeric id; array/het job ids like "12_3" are skipped, hase never submits them).
inline constexpr const char* kSqueueFormat = "%i|%j|%T|%N";
Result<std::vector<SlurmJob>> ParseSqueue(std::string_view text);

// Exit code from `ExitCode=E:S` (E the exit code, S the signal): S > 0 → 128 + S, else E.
// -1 when unparsable.
int ParseSlurmExitCode(std::string_view exit_code);

// How a job in Slurm state `state` ended, or nullopt while it has not (PENDING, RUNNING,
// COMPLETING, SUSPENDED, REQUEUED, ...). `exit_code` is the ExitCode= value of the job ("" =
// unknown) and `reason` its Reason=. Mapping (job states: `man squeue`, JOB STATE CODES):
//   COMPLETED → exited with its code (0)             CANCELLED → cancelled (outside hase)
//   FAILED, TIMEOUT, OUT_OF_MEMORY, DEADLINE, BOOT_FAIL, PREEMPTED → exited non-zero
//   NODE_FAIL → lost (re-queued by the daemon)
// A time as `scontrol show job` prints it ("2026-12-04T16:55:56": slurmctld's local time, no
// zone), as wall seconds since the epoch, read in this process's local time zone (TZ; hase and
// slurmctld must agree on it). nullopt for "Unknown", "None", "N/A", "" and anything unparsable.
std::optional<double> ParseSlurmTime(std::string_view text);

// What one job was given on one node, from `scontrol show job -d -o`'s detail
// (`Nodes=t4-0 CPU_IDs=2 Mem=0 GRES=gpu:t4:1(IDX:2)`).
struct SlurmJobGpus {
  std::string node;              // as printed (one node name for hase's single-node jobs)
  std::vector<int> gpu_indices;  // IDX of every GPU GRES, ascending ("IDX:0-1,3" → 0 1 3)
};
// Every `Nodes=` detail of a `scontrol show job -d -o` line that names GPU indices. Empty while
// the job pends and after it ended (Slurm prints `GRES=` empty then). Errors: Parse (a bad IDX
// list, quoted).
Result<std::vector<SlurmJobGpus>> ParseSlurmJobGpus(std::string_view line);

std::optional<TaskEnd> SlurmJobEnd(std::string_view state, std::string_view exit_code, std::string_view reason,
                                   int64_t job_id);

}  // namespace hase::service
