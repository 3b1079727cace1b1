// NodeMap: which cluster node a DCGM series belongs to.
//
// dcgm-exporter labels every series with `Hostname` (`hostname` since 2026), but that label is
// often not the node's name: "localhost" when the exporter runs with host networking off, the
// exporter's pod name under Kubernetes. A GPU whose label names no cluster node would silently
// lose its load. ResolveNodes therefore maps each observation, in this order:
//   1. its UUID in `uuid_to_node` (`hase serve --gpu-node UUID=NODE`);
//   2. its host label, when that names a cluster node;
//   3. the node of the target it was read from (`--dcgm URL=NODE`), when that names one;
// and otherwise leaves it unresolved (kept under its label, reported by the source's Health()).
// With an empty `nodes` set every label is accepted as is (tests, tools without a cluster).
//
// Thread-safety: pure functions over values.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hase/telemetry/gpu_load_table.h"
#include "hase/telemetry/mig_match.h"

namespace hase::telemetry {

struct NodeMap {
  std::set<std::string> nodes;                      // cluster node names; empty: accept any
  std::map<std::string, std::string> uuid_to_node;  // "GPU-…" → node
  // MIG instances the cluster file declares, by (node, GPU index), in file order; a GPU
  // absent here is declared whole (its instances' series fold into it). Health reads it.
  std::map<std::pair<std::string, int>, std::vector<MigInstanceDecl>> mig;
};

// Rewrites key.host of each observation as above (host_label keeps the label). Returns one
// line per GPU left unresolved (MIG instance observations follow their GPU, not listed again), naming the label, the GPU and `source` (a URL), with a hint.
std::vector<std::string> ResolveNodes(std::vector<GpuObservation>& gpus, const NodeMap& map,
                                      std::string_view target_node, std::string_view source);

// Parses "UUID=NODE". Errors: InvalidArgument naming the text.
Result<std::pair<std::string, std::string>> ParseUuidNode(std::string_view text);

}  // namespace hase::telemetry
