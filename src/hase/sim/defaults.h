// The embedded default cluster and workload of `hase simulate` (examples/cluster.yaml and
// examples/workload.yaml, compiled in at build time so `hase` runs without the repository).
#pragma once

namespace hase::sim {

// YAML text of examples/cluster.yaml.
const char* DefaultClusterYaml();
// YAML text of examples/workload.yaml.
const char* DefaultWorkloadYaml();

}  // namespace hase::sim
