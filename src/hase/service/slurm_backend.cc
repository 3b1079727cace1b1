#include "hase/service/slurm_backend.h"

#include <algorithm>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "hase/service/run_argv.h"
#include "hase/telemetry/gpu_load_table.h"

namespace hase::service {
namespace {

// A failed command as one line: what ran, its exit code, the first line of its stderr.
Status CommandFailed(const std::string& what, const ArgvResult& r) {
  std::string err = r.err.substr(0, r.err.find('\n'));
  if (err.empty()) err = r.out.substr(0, r.out.find('\n'));
  return Status::IO(what + " exited " + std::to_string(r.exit_code) + (err.empty() ? "" : ": " + err), "slurm");
}

double Now() { return telemetry::WallClockSeconds(); }

// A Slurm client's error that says slurmctld did not answer (down, restarting, overloaded):
// the request may or may not have reached it. As printed by Slurm 22.05's clients.
bool Unreachable(const std::string& err) {
  for (const char* m : {"Unable to contact slurm controller", "Socket timed out", "Zero Bytes were transmitted",
                        "Transport endpoint is not connected", "Connection refused", "Slurm temporarily unable",
                        "backup controller in standby mode"}) {
    if (err.find(m) != std::string::npos) return true;
  }
  return false;
}
bool Unreachable(const Result<ArgvResult>& r) {
  if (!r.ok()) return r.status().message().find("timed out") != std::string::npos;
  return r->exit_code != 0 && Unreachable(r->err + r->out);
}

// `s` as one sh word in single quotes.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Where and when the job of `line` (`scontrol show job -d -o`) runs: NodeList, the first GPU
// index of its GRES detail (-1 when Slurm no longer prints it), StartTime (0 when unknown).
TaskStart StartOfJob(const std::string& line, std::map<std::string, std::string>& kv) {
  TaskStart st;
  st.node = kv["NodeList"] == "(null)" ? "" : kv["NodeList"];
  st.started_s = ParseSlurmTime(kv["StartTime"]).value_or(0);
  Result<std::vector<SlurmJobGpus>> gpus = ParseSlurmJobGpus(line);
  if (!gpus.ok()) {
    std::fprintf(stderr, "hase serve: slurm: %s\n", gpus.status().ToString().c_str());
  } else if (!gpus->empty() && !gpus->front().gpu_indices.empty()) {
    st.node = gpus->front().node;
    st.gpu_index = gpus->front().gpu_indices.front();
  }
  return st;
}

}  // namespace

Result<std::vector<SlurmNode>> ReadSlurmNodes(const SlurmOptions& options) {
  const std::string scontrol = options.bin_dir.empty() ? "scontrol" : options.bin_dir + "/scontrol";
  HASE_ASSIGN_OR_RETURN(ArgvResult r, RunArgv({scontrol, "show", "node", "-o"}, options.command_timeout_s));
  if (r.exit_code != 0) return CommandFailed("scontrol show node", r);
  return ParseScontrolNodes(r.out);
}

SlurmBackend::SlurmBackend(SlurmOptions options, SlurmGresMap gres)
    : options_(std::move(options)), gres_(std::move(gres)) {}

SlurmBackend::~SlurmBackend() { Stop(); }

std::string SlurmBackend::Cmd(const char* name) const {
  return options_.bin_dir.empty() ? std::string(name) : options_.bin_dir + "/" + name;
}

std::string SlurmBackend::JobName(int64_t task_id, int attempt) const {
  return options_.job_prefix + "-" + std::to_string(task_id) + "-" + std::to_string(attempt);
}

bool SlurmBackend::RunsOn(const sched::Gpu& gpu) const {
  auto it = gres_.lower_bound({gpu.node, ""});
  return it != gres_.end() && it->first.first == gpu.node;
}

std::vector<std::string> SlurmBackend::SbatchEnv(const LaunchRequest& q) {
  return {"HASE_TASK_ID=" + std::to_string(q.task_id), "HASE_ATTEMPT=" + std::to_string(q.attempt)};
}

std::string SlurmBackend::NativeResource(const std::string& node, const std::string& gpu_type) const {
  auto it = gres_.find({node, gpu_type});
  return it == gres_.end() ? "" : "gpu:" + it->second + ":1";
}

Result<std::vector<std::string>> SlurmBackend::SbatchArgv(const LaunchRequest& q) const {
  auto it = gres_.find({q.node, q.gpu_type});
  if (it == gres_.end()) {
    return Status::InvalidArgument("no Slurm GRES type for " + q.gpu_type + " on node " + q.node, "slurm backend");
  }
  const std::string name = JobName(q.task_id, q.attempt);
  std::vector<std::string> argv = {Cmd("sbatch"),
                                   "--parsable",
                                   "--job-name=" + name,
                                   "--nodelist=" + q.node,
                                   "--gres=gpu:" + it->second + ":" + std::to_string(std::max(1, q.gpus)),
                                   "--no-requeue"};
  if (!options_.partition.empty()) argv.push_back("--partition=" + options_.partition);
  if (!q.account.empty()) argv.push_back("--account=" + q.account);  // the team's (docs/teams.md)
  if (!options_.output_dir.empty()) argv.push_back("--output=" + options_.output_dir + "/" + name + "-%j.out");
  argv.push_back("--wrap=" + JobScript(name, q.command));
  return argv;
}

std::string SlurmBackend::JobScript(const std::string& name, const std::string& command) const {
  if (options_.output_dir.empty()) return command;
  const std::string d = ShellQuote(options_.output_dir + "/" + name);
  return "if ! mkdir " + d + ".ran 2>/dev/null; then\n"
         "  if [ -s " + d + ".exit ]; then exit \"$(cat " + d + ".exit)\"; fi\n"
         "  echo 'hase: job " + name + " already ran once (slurmctld lost its record of it): not running it again' >&2\n"
         "  exit 75\n"
         "fi\n"
         "(\n" + command + "\n)\n"
         "hase_rc=$?; echo $hase_rc > " + d + ".exit; exit $hase_rc\n";
}

std::optional<TaskEnd> SlurmBackend::EndedBehindSlurmsBack(int64_t job_id, const std::string& name) {
  if (options_.output_dir.empty()) return std::nullopt;
  const std::string exit_file = options_.output_dir + "/" + name + ".exit";
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(exit_file, ec);
  if (ec) return std::nullopt;
  const double age_s =
      std::chrono::duration<double>(std::filesystem::file_time_type::clock::now() - mtime).count();
  if (age_s < kGhostGraceS) return std::nullopt;  // it just ended: Slurm says so at the next poll
  std::ifstream f(exit_file);
  int code = 0;
  if (!(f >> code)) return std::nullopt;
  const double ended_s = Now() - age_s;
  std::fprintf(stderr,
               "hase serve: slurm: job %ld (%s) ended %.0f s ago (exit code %d, its .exit marker) but slurmctld still "
               "lists it running (a restart lost its end); taking that end and cancelling the stale record\n",
               static_cast<long>(job_id), name.c_str(), age_s, code);
  Scancel(std::to_string(job_id), name);  // frees the GPU slurmctld still holds for it
  TaskEnd e{TaskEnd::Kind::kExited, code, "", ended_s};
  if (code != 0) e.reason = "Slurm job " + std::to_string(job_id) + " ended with exit code " + std::to_string(code);
  return e;
}

TaskEnd SlurmBackend::Vanished(int64_t job_id, const std::string& name) const {
  const std::string why = "Slurm job " + std::to_string(job_id) + " (" + name + ") vanished from slurmctld";
  if (options_.output_dir.empty()) return TaskEnd{TaskEnd::Kind::kExited, -1, why, Now()};
  const std::string base = options_.output_dir + "/" + name;
  std::error_code ec;
  if (!std::filesystem::exists(base + ".ran", ec)) {
    return TaskEnd{TaskEnd::Kind::kLost, -1, why + " before it started (a slurmctld restart lost its record)", Now()};
  }
  std::ifstream f(base + ".exit");
  int code = 0;
  if (f >> code) {
    TaskEnd e{TaskEnd::Kind::kExited, code, "", Now()};
    if (code != 0) e.reason = why + " after it ended with exit code " + std::to_string(code);
    return e;
  }
  return TaskEnd{TaskEnd::Kind::kExited, -1, why + " after it started; not run again", Now()};
}

Result<int64_t> SlurmBackend::Launch(const LaunchRequest& q) {
  const std::pair<int64_t, int> key{q.task_id, q.attempt};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = jobs_.find(key); it != jobs_.end()) return it->second.job;  // already submitted
    if (unconfirmed_.count(key)) return 0;  // resolved by name at the next poll that reaches Slurm
  }
  return Submit(q);
}

Result<int64_t> SlurmBackend::Submit(const LaunchRequest& q) {
  HASE_ASSIGN_OR_RETURN(std::vector<std::string> argv, SbatchArgv(q));
  // HASE_TASK_ID/HASE_ATTEMPT reach the job through sbatch's own environment (Slurm's default
  // --export=ALL): an explicit --export=ALL,VAR=... made each launch 3-4 s slower here
  // (slurmctld 22.05.8: 6 jobs 25.8 s vs 3.3 s).
  Result<ArgvResult> r = RunArgv(argv, options_.command_timeout_s, SbatchEnv(q));
  const std::pair<int64_t, int> key{q.task_id, q.attempt};
  if (Unreachable(r)) {
    // The job may exist (sbatch timed out after sending) or not (connect failure): never
    // submit blind again; the next poll that reaches Slurm looks for it by name.
    std::fprintf(stderr, "hase serve: slurm: sbatch of %s not confirmed (%s); followed by name until Slurm answers\n",
                 JobName(q.task_id, q.attempt).c_str(),
                 r.ok() ? r->err.substr(0, r->err.find('\n')).c_str() : r.status().message().c_str());
    std::lock_guard<std::mutex> lock(mu_);
    unconfirmed_[key] = q;
    return 0;
  }
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) return CommandFailed("sbatch", *r);
  // --parsable: "ID" or "ID;CLUSTER".
  int64_t id = 0;
  if (std::sscanf(r->out.c_str(), "%ld", &id) != 1 || id <= 0) {
    return Status::IO("sbatch --parsable printed '" + r->out.substr(0, 80) + "', not a job id", "slurm");
  }
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[key] = Watched{id, false};
  unconfirmed_.erase(key);
  cv_.notify_all();
  return id;
}

Result<std::vector<SlurmJob>> SlurmBackend::Squeue() const {
  HASE_ASSIGN_OR_RETURN(ArgvResult r, RunArgv({Cmd("squeue"), "--me", "--noheader", "--states=all",
                                               std::string("--format=") + kSqueueFormat},
                                              options_.command_timeout_s));
  if (r.exit_code != 0) return CommandFailed("squeue", r);
  return ParseSqueue(r.out);
}

Result<std::string> SlurmBackend::ShowJob(int64_t job_id) const {
  HASE_ASSIGN_OR_RETURN(ArgvResult r, RunArgv({Cmd("scontrol"), "show", "job", "-d", "-o", std::to_string(job_id)},
                                              options_.command_timeout_s));
  if (r.exit_code != 0) {
    if (r.err.find("Invalid job id") != std::string::npos) {
      return Status::NotFound("Slurm job " + std::to_string(job_id) + " is unknown to slurmctld", "slurm");
    }
    return CommandFailed("scontrol show job", r);
  }
  return r.out.substr(0, r.out.find('\n'));
}

std::optional<TaskEnd> SlurmBackend::EndOf(int64_t job_id, const std::string& state) const {
  // Only ended states need ExitCode/Reason; ask scontrol for them.
  if (!SlurmJobEnd(state, "0:0", "", job_id)) return std::nullopt;
  std::string exit_code, reason, final_state = state;
  std::optional<double> ended_s;
  std::optional<TaskStart> start;
  if (Result<std::string> line = ShowJob(job_id); line.ok()) {
    std::map<std::string, std::string> j = ParseSlurmRecord(*line);
    exit_code = j["ExitCode"];
    reason = j["Reason"];
    if (!j["JobState"].empty()) final_state = j["JobState"];
    ended_s = ParseSlurmTime(j["EndTime"]);
    start = StartOfJob(*line, j);
  }
  std::optional<TaskEnd> end = SlurmJobEnd(final_state, exit_code, reason, job_id);
  if (end) {
    end->ended_s = ended_s.value_or(Now());  // Slurm's EndTime: true also when seen late
    end->start = start;
  }
  return end;
}

std::vector<Result<Backend::Recovered>> SlurmBackend::Recover(const std::vector<LaunchRequest>& requests,
                                                              const std::vector<int64_t>& handles) {
  std::vector<Result<Recovered>> out;
  if (requests.empty()) return out;
  std::map<std::string, SlurmJob> by_name;
  Result<std::vector<SlurmJob>> listed = Squeue();
  for (int retry = 0; retry < 4 && !listed.ok(); ++retry) {  // slurmctld restarting: ~4 s
    std::this_thread::sleep_for(std::chrono::seconds(1));
    listed = Squeue();
  }
  if (listed.ok()) {
    for (SlurmJob& j : *listed) {
      auto [it, fresh] = by_name.emplace(j.name, j);
      if (!fresh && j.id > it->second.id) it->second = j;  // the newest job of that name
    }
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    const LaunchRequest& q = requests[i];
    const int64_t handle = i < handles.size() ? handles[i] : 0;
    if (!listed.ok()) {
      // Slurm unreachable: never resubmit blind (the job may exist). With a journalled job id
      // the monitor follows it; without one the task fails with the reason rather than run twice.
      std::fprintf(stderr, "hase serve: slurm: recovery cannot list jobs: %s\n", listed.status().ToString().c_str());
      Recovered rec;
      rec.handle = handle;
      if (handle > 0) {
        std::lock_guard<std::mutex> lock(mu_);
        jobs_[{q.task_id, q.attempt}] = Watched{handle, false};
      } else {
        // Followed by name: adopted or submitted once Slurm answers (never twice).
        std::lock_guard<std::mutex> lock(mu_);
        unconfirmed_[{q.task_id, q.attempt}] = q;
      }
      out.push_back(rec);
      continue;
    }
    int64_t job = 0;
    std::string state;
    if (auto it = by_name.find(JobName(q.task_id, q.attempt)); it != by_name.end()) {
      job = it->second.id;
      state = it->second.state;
    } else if (handle > 0) {
      Result<std::string> j = ShowJob(handle);
      std::map<std::string, std::string> kv;
      if (j.ok()) kv = ParseSlurmRecord(*j);
      if (j.ok() && kv["JobName"] == JobName(q.task_id, q.attempt)) {
        job = handle;
        state = kv["JobState"];
      } else {
        // Gone (ended more than MinJobAge s before the restart, or a slurmctld restart lost
        // it and may have given its id to another job).
        Recovered rec;
        rec.handle = handle;
        rec.end = Vanished(handle, JobName(q.task_id, q.attempt));
        if (rec.end->kind == TaskEnd::Kind::kExited && rec.end->exit_code == -1 && options_.output_dir.empty()) {
          rec.end->reason = "Slurm job " + std::to_string(handle) +
                            " is no longer known to slurmctld (ended more than MinJobAge s before the restart)";
        }
        out.push_back(rec);
        continue;
      }
    } else {
      out.push_back(Status::NotFound("no Slurm job named " + JobName(q.task_id, q.attempt), "slurm"));
      continue;
    }
    Recovered rec;
    rec.handle = job;
    rec.end = EndOf(job, state);
    if (!rec.end) {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_[{q.task_id, q.attempt}] = Watched{job, false};  // its start is read back by the next poll
    }
    out.push_back(rec);
  }
  return out;
}

void SlurmBackend::Cancel(int64_t task_id, int attempt) {
  std::string arg;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (unconfirmed_.erase({task_id, attempt})) {
      arg = "--name=" + JobName(task_id, attempt);  // it may exist: cancel whatever has its name
    } else if (auto it = jobs_.find({task_id, attempt}); it != jobs_.end()) {
      arg = std::to_string(it->second.job);
    } else {
      return;  // never launched, or already ended
    }
  }
  Scancel(arg, "task " + std::to_string(task_id));
}

bool SlurmBackend::StartedAnyway(int64_t task_id, int attempt) const {
  if (options_.output_dir.empty()) return false;
  std::error_code ec;
  return std::filesystem::exists(options_.output_dir + "/" + JobName(task_id, attempt) + ".ran", ec);
}

void SlurmBackend::Scancel(const std::string& arg, const std::string& what) {
  Result<ArgvResult> r = RunArgv({Cmd("scancel"), arg}, options_.command_timeout_s);
  if (r.ok() && r->exit_code == 0) return;
  if (Unreachable(r)) {
    // slurmctld down: a cancel that hase acknowledged must still reach the job.
    std::lock_guard<std::mutex> lock(mu_);
    cancel_retry_.insert(arg);
  }
  std::fprintf(stderr, "hase serve: slurm: scancel %s for %s failed%s: %s\n", arg.c_str(), what.c_str(),
               Unreachable(r) ? " (retried at each poll until Slurm answers)" : "",
               r.ok() ? r->err.c_str() : r.status().ToString().c_str());
}

void SlurmBackend::SetStartCallback(StartCallback on_start) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable()) on_start_ = std::move(on_start);
}

Status SlurmBackend::Start(EndCallback on_end, NodeCallback on_node) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return Status::OK();
  on_end_ = std::move(on_end);
  on_node_ = std::move(on_node);
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
  return Status::OK();
}

void SlurmBackend::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SlurmBackend::Loop() {
  double next_nodes = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    PollJobs();
    if (Now() >= next_nodes) {
      PollNodes();
      next_nodes = Now() + options_.node_poll_interval_s;
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::duration<double>(options_.poll_interval_s), [this] { return stop_; });
  }
}

void SlurmBackend::PollJobs() {
  std::map<std::pair<int64_t, int>, Watched> watched;
  std::map<std::pair<int64_t, int>, LaunchRequest> unconfirmed;
  std::set<std::string> cancels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    watched = jobs_;
    unconfirmed = unconfirmed_;
    cancels.swap(cancel_retry_);
  }
  if (watched.empty() && unconfirmed.empty() && cancels.empty()) return;
  Result<std::vector<SlurmJob>> listed = Squeue();
  if (!listed.ok()) {
    std::fprintf(stderr, "hase serve: slurm: %s\n", listed.status().ToString().c_str());
    std::lock_guard<std::mutex> lock(mu_);
    cancel_retry_.insert(cancels.begin(), cancels.end());
    return;
  }
  for (const std::string& arg : cancels) Scancel(arg, "a cancel retried");
  if (!unconfirmed.empty()) {
    // Launches sbatch could not confirm: the job of that name when Slurm has one, else submit
    // it now (Slurm answers again, so sbatch's outcome is known this time).
    std::map<std::string, int64_t> newest;
    for (const SlurmJob& j : *listed) newest[j.name] = std::max(newest[j.name], j.id);
    for (const auto& [key, q] : unconfirmed) {
      auto it = newest.find(JobName(key.first, key.second));
      if (it != newest.end()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (unconfirmed_.erase(key)) jobs_[key] = watched[key] = Watched{it->second, false};
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!unconfirmed_.count(key)) continue;  // cancelled meanwhile
      }
      Result<int64_t> id = Submit(q);
      if (!id.ok()) {
        // Refused now (not unreachable): the task fails with sbatch's message.
        {
          std::lock_guard<std::mutex> lock(mu_);
          unconfirmed_.erase(key);
        }
        on_end_(key.first, key.second, TaskEnd{TaskEnd::Kind::kExited, -1, id.status().ToString(), Now()});
      }
    }
  }
  std::map<int64_t, const SlurmJob*> by_id;
  for (const SlurmJob& j : *listed) by_id[j.id] = &j;
  // Jobs of this hase (by name prefix) that no task follows: a slurmctld restart that lost its
  // last seconds of state may bring back a job hase cancelled or replaced (it then runs the
  // command again), or keep listing a job whose end it lost (holding its GPU). Cancelled when
  // seen unfollowed at two polls in a row (a job sbatch just created is followed within
  // milliseconds), once each.
  {
    std::set<int64_t> followed;
    for (const auto& [key, w] : watched) followed.insert(w.job);
    std::set<std::string> unconfirmed_names;
    for (const auto& [key, q] : unconfirmed) unconfirmed_names.insert(JobName(key.first, key.second));
    std::set<std::pair<int64_t, std::string>> unwanted;  // (id, name): ids are reused
    for (const SlurmJob& j : *listed) {
      if (followed.count(j.id) || unconfirmed_names.count(j.name) || j.name.rfind(options_.job_prefix + "-", 0) != 0) {
        continue;
      }
      if (j.state != "PENDING" && j.state != "RUNNING" && j.state != "CONFIGURING" && j.state != "COMPLETING" &&
          j.state != "SUSPENDED" && j.state != "REQUEUED") {
        continue;
      }
      unwanted.insert({j.id, j.name});
      bool cancel = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        bool now_followed = false;
        for (const auto& [key, w] : jobs_) now_followed = now_followed || w.job == j.id;
        cancel = !now_followed && unwanted_before_.count({j.id, j.name}) && swept_.insert({j.id, j.name}).second;
      }
      if (!cancel) continue;
      std::fprintf(stderr,
                   "hase serve: slurm: job %ld (%s, %s) is not one hase follows (a slurmctld restart lost the end or "
                   "cancel hase saw): cancelling it\n",
                   static_cast<long>(j.id), j.name.c_str(), j.state.c_str());
      Scancel(std::to_string(j.id), j.name);
    }
    std::lock_guard<std::mutex> lock(mu_);
    unwanted_before_ = std::move(unwanted);
  }
  struct Ended {
    int64_t task;
    int attempt;
    TaskEnd end;
  };
  std::vector<Ended> ended;
  struct Started {
    int64_t task;
    int attempt;
    TaskStart start;
  };
  std::vector<Started> started;
  bool lost = false;
  for (const auto& [key, w] : watched) {
    std::optional<TaskEnd> end;
    const std::string name = JobName(key.first, key.second);
    // By id and name: after a slurmctld restart that lost recent state, an id may be reused.
    if (auto it = by_id.find(w.job); it != by_id.end() && it->second->name == name) {
      const std::string& state = it->second->state;
      if (!w.start_reported && on_start_ && (state == "RUNNING" || state == "COMPLETING")) {
        // Where Slurm put it: the GPU index among the node's GPUs of the type, and when.
        if (Result<std::string> line = ShowJob(w.job); line.ok()) {
          std::map<std::string, std::string> j = ParseSlurmRecord(*line);
          if (j["JobState"] == "RUNNING" || j["JobState"] == "COMPLETING") {
            started.push_back({key.first, key.second, StartOfJob(*line, j)});
          }
        }
      }
      end = EndOf(w.job, state);
      if (!end) end = EndedBehindSlurmsBack(w.job, name);
    } else {
      Result<std::string> j = ShowJob(w.job);
      std::map<std::string, std::string> kv;
      if (j.ok()) kv = ParseSlurmRecord(*j);
      if (j.ok() && kv["JobName"] == name) {
        end = EndOf(w.job, kv["JobState"]);
      } else if (j.ok() || j.status().IsNotFound()) {
        end = Vanished(w.job, name);
      }
    }
    if (end) {
      if (w.start_reported) end->start.reset();  // the daemon has it
      lost = lost || end->kind == TaskEnd::Kind::kLost;
      ended.push_back({key.first, key.second, *end});
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Started& s : started) {
      if (auto it = jobs_.find({s.task, s.attempt}); it != jobs_.end()) it->second.start_reported = true;
    }
    for (const Ended& e : ended) jobs_.erase({e.task, e.attempt});
  }
  for (const Started& s : started) on_start_(s.task, s.attempt, s.start);
  // A NODE_FAIL end: tell the daemon the node is down first, so it re-queues the node's tasks
  // once (the end then finds its task re-queued and changes nothing).
  if (lost) PollNodes();
  for (const Ended& e : ended) on_end_(e.task, e.attempt, e.end);
}

void SlurmBackend::PollNodes() {
  Result<std::vector<SlurmNode>> nodes = ReadSlurmNodes(options_);
  if (!nodes.ok()) {
    std::fprintf(stderr, "hase serve: slurm: %s\n", nodes.status().ToString().c_str());
    return;
  }
  std::set<std::string> ours;
  for (const auto& [key, gres] : gres_) ours.insert(key.first);
  struct Change {
    std::string node;
    NodeCondition condition;
    std::string reason;
  };
  std::vector<Change> changes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const SlurmNode& n : *nodes) {
      if (!ours.count(n.name)) continue;
      if (SlurmNodeUnsettled(n.state)) continue;  // e.g. after a slurmctld restart: keep its last condition
      const NodeCondition now = SlurmNodeCondition(n.state);
      // Assumed usable until seen otherwise.
      auto [it, fresh] = node_condition_.emplace(n.name, NodeCondition::kUsable);
      if (it->second == now) continue;
      it->second = now;
      changes.push_back({n.name, now,
                         "Slurm node state " + n.state + (n.reason.empty() ? "" : " (" + n.reason + ")")});
    }
  }
  for (const Change& c : changes) {
    const char* what = c.condition == NodeCondition::kUsable    ? "usable"
                       : c.condition == NodeCondition::kDrained ? "drained"
                                                                 : "down";
    std::fprintf(stderr, "hase serve: slurm: node %s %s: %s\n", c.node.c_str(), what, c.reason.c_str());
    if (on_node_) on_node_(c.node, c.condition, c.reason);
  }
}

}  // namespace hase::service
