// LocalBackend: runs task commands on this host (`hase serve --executor`), through Executor
// (executor.h: setsid'd /bin/sh with CUDA_VISIBLE_DEVICES, pid and exit files that let a
// restarted daemon adopt processes). The first Backend (backend.h); behaviour is Executor's.
//
// Thread-safety: as Backend.
#pragma once

#include <memory>
#include <string>

#include "hase/service/backend.h"
#include "hase/service/executor.h"

namespace hase::service {

struct LocalBackendOptions {
  std::string dir;   // Executor files (.pid/.exit/.out/.err), created
  std::string node;  // the node this host is; "" = every node (one-node setups, tests)
  double poll_interval_s = 0.05;  // how often ended processes are looked for
};

class LocalBackend final : public Backend {
 public:
  explicit LocalBackend(LocalBackendOptions options);
  ~LocalBackend() override;

  const char* Name() const override { return "local"; }
  bool RunsOn(const sched::Gpu& gpu) const override;
  Status Start(EndCallback on_end, NodeCallback on_node) override;
  void Stop() override;
  // Handle = the process id. Never reports node events.
  Result<int64_t> Launch(const LaunchRequest& request) override;
  // Reads the executor's .pid/.exit files (the journalled handle is not needed).
  std::vector<Result<Recovered>> Recover(const std::vector<LaunchRequest>& requests,
                                         const std::vector<int64_t>& handles) override;
  // Kills every process of the task (at most one attempt runs at a time).
  void Cancel(int64_t task_id, int attempt) override;

 private:
  const LocalBackendOptions options_;
  EndCallback on_end_;  // set once by Start, before the executor's thread runs
  std::unique_ptr<Executor> executor_;
};

}  // namespace hase::service
