// SlurmBackend: runs each placed task as a Slurm batch job pinned to the node and GPU type hase
// chose, follows it to its end, cancels through scancel, and reports node health
// (`hase serve --backend slurm`). Uses the Slurm CLI (sbatch, squeue, scontrol, scancel) via
// fork/exec with argument vectors (run_argv.h): no task field reaches a shell except the
// user's own command, which Slurm runs as the job script.
//
// Submission: sbatch --parsable --job-name=<prefix>-<task id>-<attempt> --nodelist=NODE
//   --gres=gpu:TYPE:1 --no-requeue [--partition=P] [--output=DIR/<name>-%j.out] --wrap=<command>
// with HASE_TASK_ID and HASE_ATTEMPT added to sbatch's environment (the job inherits it).
// --no-requeue: a job whose node fails ends NODE_FAIL and hase re-queues the task (once);
// Slurm's own requeue would run the same job name again behind hase's back.
// Slurm sets CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS to the GPU it picked among that node's GPUs
// of the type (GRES cannot name one index; the index hase chose is a hint only). Read-back:
// once squeue shows a job RUNNING, `scontrol show job -d -o ID` gives the node's
// `GRES=gpu:t4:1(IDX:2)` and StartTime, reported through the start callback (the daemon moves
// the task to that GPU). A job that ends before a poll sees it running keeps hase's index:
// Slurm forgets the indices at the end (its StartTime/EndTime are still reported).
//
// Exactly once across kill -9: the daemon journals the task as running before Launch; the job
// name encodes (task id, attempt), so Recover finds a job the previous daemon submitted even
// when it died before journalling the job id, and never submits it again. A job Slurm no
// longer knows (finished more than MinJobAge seconds before the restart; no slurmdbd needed)
// is reported ended with exit code -1.
//
// Following: one `squeue --me --states=all` per poll for every watched job; an ended job's
// ExitCode, Reason, StartTime and EndTime come from `scontrol show job -d -o ID` (slurm_text.h
// maps states), so an end seen late (a restart) carries Slurm's times, not hase's. Node
// health: `scontrol show node -o` every node_poll_interval_s; each change of a node's
// SlurmNodeCondition (usable, drained, down) is reported. Before a NODE_FAIL end is reported
// the nodes are read again, so the daemon learns the node is down first and the end is then
// stale (one re-queue per task, not two).
//
// Thread-safety: as Backend. Slurm commands run outside the backend's lock.
#pragma once

#include <condition_variable>
#include <map>
#include <set>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hase/service/backend.h"
#include "hase/service/slurm_cluster.h"
#include "hase/service/slurm_text.h"

namespace hase::service {

struct SlurmOptions {
  // Affects behaviour.
  std::string partition;            // --partition for sbatch and discovery; "" = Slurm's default
  std::string job_prefix = "hase";  // job names are <prefix>-<task id>-<attempt>; one per hase instance
  std::string output_dir;           // job stdout+stderr as DIR/<name>-%j.out (a path the nodes
                                    // see); "" = Slurm's default (slurm-%j.out in hase's cwd)
  std::string bin_dir;              // where sbatch etc. are; "" = PATH
  double command_timeout_s = 10;    // any one Slurm command, s
  // Affects performance.
  double poll_interval_s = 0.5;       // job states, s (one squeue per poll while jobs run)
  double node_poll_interval_s = 5;    // node health, s
};

// `scontrol show node -o`, parsed. Errors: IO (scontrol missing, failing or timing out, with
// its stderr), Parse.
Result<std::vector<SlurmNode>> ReadSlurmNodes(const SlurmOptions& options);

class SlurmBackend final : public Backend {
 public:
  // `gres`: the Slurm GRES type for each (node, catalog type) the cluster has (slurm_cluster.h).
  SlurmBackend(SlurmOptions options, SlurmGresMap gres);
  ~SlurmBackend() override;
  SlurmBackend(const SlurmBackend&) = delete;
  SlurmBackend& operator=(const SlurmBackend&) = delete;

  const char* Name() const override { return "slurm"; }
  bool RunsOn(const sched::Gpu& gpu) const override;
  Status Start(EndCallback on_end, NodeCallback on_node) override;
  void SetStartCallback(StartCallback on_start) override;
  bool ReportsStarts() const override { return true; }
  void Stop() override;
  // Handle = the Slurm job id; the same launch again returns the same job. 0 = submission not
  // confirmed: sbatch could not reach slurmctld or timed out (it may or may not have created
  // the job); the backend follows it by name and, once squeue answers, adopts the job of that
  // name or submits it then (never twice). Errors: InvalidArgument (no GRES type for that node
  // and GPU type), IO (sbatch refused the job: its message).
  Result<int64_t> Launch(const LaunchRequest& request) override;
  std::vector<Result<Recovered>> Recover(const std::vector<LaunchRequest>& requests,
                                         const std::vector<int64_t>& handles) override;
  void Cancel(int64_t task_id, int attempt) override;
  // Its run-once marker (JobScript) exists: the job started (false without an output directory).
  bool StartedAnyway(int64_t task_id, int attempt) const override;
  // "gpu:<gres type>:1", "" when the node has no such GPU.
  std::string NativeResource(const std::string& node, const std::string& gpu_type) const override;

  // <prefix>-<task id>-<attempt>.
  std::string JobName(int64_t task_id, int attempt) const;
  // With an output directory, the job script (sbatch --wrap) runs the command at most once per
  // job name: its first line makes DIR/<name>.ran (mkdir: atomic) and the command's exit code
  // goes to DIR/<name>.exit. A job that slurmctld runs again because a kill -9 lost its record
  // of the first run (state saved up to a few seconds late) finds the marker and replays the
  // recorded exit code (or exits 75 when the first run left none) without running the command.
  // A job slurmctld forgot entirely ("vanished") is re-queued when it never started (no
  // marker). Without an output directory the command is the job script as given.
  std::string JobScript(const std::string& name, const std::string& command) const;
  // The sbatch argument vector for `request` (tests check it holds no shell), and the
  // variables added to sbatch's environment (the job inherits them).
  Result<std::vector<std::string>> SbatchArgv(const LaunchRequest& request) const;
  static std::vector<std::string> SbatchEnv(const LaunchRequest& request);

 private:
  std::string Cmd(const char* name) const;
  Result<std::vector<SlurmJob>> Squeue() const;
  // `scontrol show job -d -o ID`: its first line; NotFound when slurmctld no longer knows it.
  Result<std::string> ShowJob(int64_t job_id) const;
  // How job `job_id` (seen in `state`) ended, nullopt while it runs. Reads ExitCode, Reason,
  // StartTime, EndTime and (when still printed) the GPU index.
  std::optional<TaskEnd> EndOf(int64_t job_id, const std::string& state) const;
  // The end of job `job_id` (named `name`) that slurmctld no longer knows, from the run-once
  // markers (JobScript): never started → kLost (re-queued), ended → its recorded exit code,
  // started without a recorded end (or no output directory) → failed.
  TaskEnd Vanished(int64_t job_id, const std::string& name) const;
  // A job slurmctld still lists as running whose script wrote its exit code (JobScript) more
  // than kGhostGraceS ago: a slurmctld restart lost its end and would hold its GPU for good.
  // Returns that end (exit code and time from the marker) and scancels the stale record;
  // nullopt otherwise or without an output directory.
  std::optional<TaskEnd> EndedBehindSlurmsBack(int64_t job_id, const std::string& name);
  static constexpr double kGhostGraceS = 10;
  // One sbatch for `request`: the job id, 0 when slurmctld was unreachable or silent (the
  // launch is then unconfirmed_), or sbatch's error.
  Result<int64_t> Submit(const LaunchRequest& request);
  // scancel ARG (a job id or --name=NAME); kept for the next poll when slurmctld is unreachable.
  void Scancel(const std::string& arg, const std::string& what);
  void Loop();
  void PollJobs();
  void PollNodes();

  const SlurmOptions options_;
  const SlurmGresMap gres_;
  EndCallback on_end_;      // set once by Start, before the thread runs
  NodeCallback on_node_;    // set once by Start
  StartCallback on_start_;  // set before Start (SetStartCallback), may be empty

  mutable std::mutex mu_;
  std::condition_variable cv_;
  struct Watched {
    int64_t job = 0;
    bool start_reported = false;  // its TaskStart went to on_start_
  };
  std::map<std::pair<int64_t, int>, Watched> jobs_;      // guarded by mu_: (task, attempt) → job
  // Launches whose sbatch outcome is unknown (slurmctld unreachable): resolved by name at the
  // next poll that reaches Slurm. Guarded by mu_.
  std::map<std::pair<int64_t, int>, LaunchRequest> unconfirmed_;
  std::set<std::string> cancel_retry_;                   // guarded by mu_: scancel args to retry
  // Guarded by mu_: unfollowed jobs (id, name) scancel'ed, and those seen at the last poll.
  std::set<std::pair<int64_t, std::string>> swept_, unwanted_before_;
  std::map<std::string, NodeCondition> node_condition_;  // guarded by mu_: last reported
  bool stop_ = false;                                // guarded by mu_
  std::thread thread_;
};

}  // namespace hase::service
