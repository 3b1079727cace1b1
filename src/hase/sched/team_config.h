// TeamConfig: the teams that share a cluster and the terms they share it on — per-team
// guaranteed and maximum GPUs (quota.h), fair-share weights and decay (fair_share.h), and
// preemption limits. Semantics and the Slurm / Kueue terms they map to: docs/teams.md.
//
// Read from the `teams:`, `fair_share:` and `preemption:` keys of a cluster file (or any YAML
// file holding them: `hase serve --teams FILE`):
//
//   default_team: default          # team of tasks that name none (listed or not)
//   teams:
//     - name: vision               # [A-Za-z0-9_.-]+, unique
//       guaranteed_gpus: 2         # nominal quota: GPUs it gets back whenever it has work
//       max_gpus: 6                # borrowing limit: GPUs it may hold at most (default: all)
//       shares: 1                  # fair-share weight (Slurm "fairshare="), default 1
//       slurm_account: vision      # Slurm account its jobs are charged to (sbatch --account)
//       namespaces: [vision-prod]  # Kubernetes namespaces whose pods belong to it
//   fair_share:
//     half_life_s: 604800          # usage decay half-life, s (Slurm PriorityDecayHalfLife,
//                                  # default 7 days); 0 = no decay
//     reference: A100-SXM4-40GB    # the GPU type one "equivalent" second is measured on
//   preemption:
//     enabled: false               # preempt at batch boundaries (simulator; docs/teams.md)
//     max_per_task: 2              # a task is preempted at most this often
//     min_run_s: 60                # nor before it has run this long since its last start
//
// Unit of quotas: GPUs, one per task (every hase task requests one GPU, as a pod requests
// nvidia.com/gpu: 1): co-located tasks each count, so co-location adds throughput, not quota.
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"
#include "hase/sched/task.h"

namespace hase::sched {

struct TeamQuota {
  std::string name;
  int guaranteed_gpus = 0;  // nominal quota, GPUs (>= 0)
  int max_gpus = std::numeric_limits<int>::max();  // GPUs held at most (>= guaranteed)
  double shares = 1;        // fair-share weight, > 0
  std::string slurm_account;            // "" = the backend's default account
  std::vector<std::string> namespaces;  // Kubernetes namespaces mapped to it

  bool unlimited() const { return max_gpus == std::numeric_limits<int>::max(); }
};

struct FairShareOptions {
  double half_life_s = 7 * 86400.0;        // usage decay half-life, s; 0 = none
  std::string reference = "A100-SXM4-40GB";  // catalog type of one equivalent GPU-second
};

struct PreemptionOptions {
  bool enabled = false;
  int max_per_task = 2;   // preemptions of one task at most, >= 0
  double min_run_s = 60;  // a task runs at least this long after a (re)start first, s, >= 0
};

struct TeamConfig {
  std::vector<TeamQuota> teams;  // file order; the default team is added when not listed
  std::string default_team = "default";
  FairShareOptions fair_share;
  PreemptionOptions preemption;

  // True when the file listed teams: quotas and per-team figures apply.
  bool enabled() const { return !teams.empty(); }
  // Index of team `name` ("" = the default team), or -1.
  int Find(const std::string& name) const;
  // Index of `task`'s team (Task::team, "" = default), or -1 for a team not listed.
  int TeamOf(const Task& task) const { return Find(task.team); }
  // The team Kubernetes namespace `ns` is mapped to; "" when none is.
  std::string TeamOfNamespace(const std::string& ns) const;
  // The team names, in config order, for error hints.
  std::string Names() const;
  // InvalidArgument when the guarantees add up to more GPUs than `cluster` has (they could
  // not all be honoured at once).
  Status CheckAgainst(const Cluster& cluster) const;
  // InvalidArgument naming the first task whose team is not listed.
  Status CheckTasks(const std::vector<Task>& tasks) const;
};

// Parses the team keys of a YAML document (see above). A document without `teams:` gives a
// disabled config (enabled() false), not an error. Errors: Parse (not YAML, FILE:LINE),
// InvalidArgument (a bad or duplicate name, guaranteed < 0, max < guaranteed, shares <= 0,
// a namespace mapped twice, an unknown key; FILE:LINE).
Result<TeamConfig> ParseTeamConfig(std::string_view text, const std::string& where);
// Reads FILE then ParseTeamConfig. Errors: IO.
Result<TeamConfig> LoadTeamConfig(const std::string& path);

}  // namespace hase::sched
