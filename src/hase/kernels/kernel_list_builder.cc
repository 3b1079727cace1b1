#include "hase/kernels/kernel_list_builder.h"

#include <unordered_set>

#include "hase/graph/onnx_loader.h"
#include "hase/graph/topological_order.h"
#include "hase/kernels/cost_model.h"
#include "hase/kernels/fusion_profile.h"

namespace hase {
namespace {

TensorInfo GraphTensor(const graph::Graph& g, const std::string& name) {
  TensorInfo t;
  t.name = name;
  if (const graph::Value* v = g.FindValue(name)) {
    t.shape = v->shape;
    t.dtype = static_cast<DType>(v->elem_type);
  }
  return t;
}

}  // namespace

Result<std::vector<int64_t>> ParseInputShape(const std::string& text) {
  return graph::ParseShape(text);
}

Result<KernelList> BuildKernelList(const std::string& onnx_path, const KernelListOptions& options) {
  if (options.batch < 1) {
    return Status::InvalidArgument("batch must be ≥ 1, got " + std::to_string(options.batch),
                                   "--batch");
  }
  HASE_ASSIGN_OR_RETURN(kernels::RuleList rules,
                        kernels::MakeFusionProfile(options.profile, options.disabled_rules));
  graph::LoadOptions lo;
  lo.batch = options.batch;
  lo.input_shape = options.input_shape;
  HASE_ASSIGN_OR_RETURN(graph::LoadedGraph loaded, graph::LoadOnnxGraph(onnx_path, lo));
  if (options.strict && !loaded.unknown_op_nodes.empty()) {
    const graph::Node* first = nullptr;
    for (const auto& n : loaded.graph.nodes()) {
      if (n.name == loaded.unknown_op_nodes.front()) first = &n;
    }
    return Status::Unsupported(
        "unknown op '" + (first ? first->op_type : std::string("?")) + "'",
        onnx_path + ": node '" + loaded.unknown_op_nodes.front() + "'",
        "drop --strict to estimate it conservatively");
  }
  graph::Graph& g = loaded.graph;
  kernels::ApplyFusionRules(g, rules);

  KernelList out;
  out.model = onnx_path;
  out.profile = options.profile;
  out.batch = options.batch;
  out.warnings = loaded.warnings;
  for (const auto& in : g.inputs()) out.graph_inputs.push_back(GraphTensor(g, in));
  for (const auto& o : g.outputs()) out.graph_outputs.push_back(GraphTensor(g, o));
  if (!out.graph_inputs.empty() && !out.graph_inputs[0].shape.empty()) {
    out.batch = out.graph_inputs[0].shape[0];
  }

  // Constants: initializers, plus (under "none", where nothing is folded) values computed only
  // from constants, so that weights read through an Identity still count as weights.
  std::unordered_set<std::string> constants;
  for (const auto& n : g.nodes()) {
    for (const auto& in : n.inputs) {
      if (!in.empty() && g.IsConstant(in)) constants.insert(in);
    }
  }
  for (const auto& n : g.nodes()) {
    if (n.removed || n.inputs.empty()) continue;
    bool all = true;
    for (const auto& in : n.inputs) all = all && (in.empty() || constants.count(in));
    if (all) {
      for (const auto& o : n.outputs) constants.insert(o);
    }
  }

  const std::unordered_set<std::string> unknown(loaded.unknown_op_nodes.begin(),
                                                loaded.unknown_op_nodes.end());
  int index = 0;
  for (graph::NodeId id : graph::OrtTopologicalOrder(g)) {
    const graph::Node& n = g.node(id);
    if (!kernels::HasCostFormula(n) && !unknown.count(n.name)) {
      if (options.strict) {
        return Status::Unsupported("no cost formula for op '" + n.op_type + "'",
                                   onnx_path + ": node '" + n.name + "'",
                                   "drop --strict to estimate it conservatively");
      }
      out.warnings.push_back("no cost formula for op '" + n.op_type + "' at node '" + n.name +
                             "': estimated conservatively (1 FLOP per output element)");
    }
    out.kernels.push_back(kernels::CostKernel(g, n, index++, constants));
  }
  return out;
}

}  // namespace hase
