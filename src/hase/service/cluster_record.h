// ClusterRecord: which GPU each cluster id was when the journal was written, so that a restart
// under an edited cluster file (`hase serve --config`) maps a journalled placement to the same
// physical GPU, or knows that GPU is gone.
//
// The journal keeps a task's GPU as the cluster id plus its node and index on the node. Ids are
// dense positions in the file, so removing or reordering GPUs renumbers them; and a node whose
// GPU 0 was an A100 and is now declared a T4 is a different GPU to the oracle and to
// calibration. `<state>/cluster.json` (written at each start, atomically) records per id the
// node, index, MIG slot and type name; Resolve() matches a journal row against the cluster
// now by (node, index, MIG slot) and type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/sched/cluster.h"

namespace hase::service {

struct RecordedGpu {
  std::string node;
  int index = 0;         // physical index on the node
  int mig_slot = -1;     // MIG instance position, -1 = whole GPU
  std::string type;      // GpuType::name
};

class ClusterRecord {
 public:
  // The record of `cluster` now.
  static ClusterRecord Of(const sched::Cluster& cluster);
  // `<dir>/cluster.json`; nullopt when absent (a journal from before the record existed).
  // Parse error when unreadable, naming the file.
  static Result<std::optional<ClusterRecord>> Load(const std::string& dir);
  // Writes `<dir>/cluster.json` (temp file + rename). IO error naming the file.
  Status Save(const std::string& dir) const;

  const std::vector<RecordedGpu>& gpus() const { return gpus_; }

 private:
  std::vector<RecordedGpu> gpus_;  // by cluster id
};

// The id in `now` of the GPU a journal row names (cluster id `old_id`, node, index on the
// node), or -1 when `now` has no such GPU or declares it another type. With `before` (the
// record of the run that wrote the row) the match is by node, index, MIG slot and type; without
// it (older journals) by id when node and index still agree there, else by node and index.
int ResolveGpu(const sched::Cluster& now, const ClusterRecord* before, int old_id, const std::string& node,
               int index);

}  // namespace hase::service
