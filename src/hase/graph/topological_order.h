// OrtTopologicalOrder: the live nodes of a Graph in the order ONNX Runtime executes them and
// writes them to an optimised model file.
//
// ORT's GraphViewer sorts by a reverse depth-first search from the leaf nodes (nodes without
// consumers) on an explicit stack: each node's producers are pushed in ascending node index, so
// the highest-index producer is explored first, and a node is emitted after all its producers
// (post-order); see
// onnxruntime/core/graph/graph_viewer.cc (ReverseDFSFrom with NodeCompare) in ORT 1.x. Node
// index here is Node::order_key, which fusion rules renew as ORT does for nodes it creates.
// Reproducing it lets `hase kernels --profile ort-cpu` match ORT's optimised graph node for
// node, and gives the launch order of ORT's sequential executor.
#pragma once

#include <vector>

#include "hase/graph/graph.h"

namespace hase::graph {

// Live node ids in ORT's topological order. O(nodes + edges).
std::vector<NodeId> OrtTopologicalOrder(const Graph& g);

}  // namespace hase::graph
