#include "hase/kernels/kernel_list_builder.h"

#include <unordered_set>

#include "hase/graph/batch_validity.h"
#include "hase/graph/onnx_loader.h"
#include "hase/graph/topological_order.h"
#include "hase/kernels/cost_model.h"
#include "hase/kernels/cpu_placement.h"
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

// InvalidArgument for a --batch the model's Reshapes do not allow, with the sizes that fit.
Status BatchError(const graph::BatchValidity& v, int64_t batch, const std::string& path, bool input_shape_given) {
  std::string hint = "the model pins its batch; re-export it with a dynamic reshape "
                     "(e.g. x.flatten(1) instead of x.reshape(1, -1))";
  if (input_shape_given) {
    // At another input size a batch that "fits" only has the element count: a Reshape written
    // for the model's own grid (YOLO's [1, 4, 8400] at 640 px) would mix the images of the batch.
    hint = "the model's Reshapes fix the sizes of its own input shape: use that (drop --input-shape), or "
           "re-export the model with dynamic spatial dims for this input size";
  } else if (v.only && *v.only > 0) {
    hint = "pass --batch " + std::to_string(*v.only) + "; " + hint;
  } else if (!v.only) {
    hint = "pass a --batch that is a multiple of " + std::to_string(v.multiple_of) + "; " + hint;
  }
  return Status::InvalidArgument("batch " + std::to_string(batch) + " does not fit the model: it is " +
                                     v.Describe() + " (" + v.reason + ")",
                                 path, hint);
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
  lo.ort_view = !rules.empty();
  Result<graph::LoadedGraph> load = graph::LoadOnnxGraph(onnx_path, lo);
  if (!load.ok() && load.status().IsInvalidArgument()) {
    // Shape inference may reject a batch the model pins (Reshape(x, [-1, 512]) at an odd
    // batch): load at a batch it accepts, if any of a few does, to say which sizes fit.
    for (int64_t b : {1, 2, 4, 8}) {
      if (b == options.batch) continue;
      graph::LoadOptions other = lo;
      other.batch = b;
      if (auto ok = graph::LoadOnnxGraph(onnx_path, other); ok.ok()) {
        const graph::BatchValidity v = graph::ComputeBatchValidity(ok->graph, b);
        if (!v.Allows(options.batch)) return BatchError(v, options.batch, onnx_path, !options.input_shape.empty());
        break;
      }
    }
  }
  if (!load.ok()) return load.status();
  graph::LoadedGraph loaded = std::move(*load);
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
  const graph::BatchValidity validity = graph::ComputeBatchValidity(g, options.batch);
  if (!validity.Allows(options.batch)) return BatchError(validity, options.batch, onnx_path, !options.input_shape.empty());
  kernels::ApplyFusionRules(g, rules);

  KernelList out;
  out.model = onnx_path;
  out.profile = options.profile;
  out.batch = options.batch;
  out.warnings = loaded.warnings;
  out.batch_validity = validity.Describe();
  out.ort_release = kernels::FusionProfileOrtRelease(options.profile);
  if (!validity.reason.empty()) {
    out.warnings.push_back("the model is " + validity.Describe() + ": " + validity.reason);
    if (!options.input_shape.empty() && (validity.only || validity.multiple_of > 1)) {
      // YOLO's [1, 4, 8400] at 3x320x320 and batch 4: the element count fits, the grid does not.
      out.warnings.push_back("with --input-shape other than the model's own, a Reshape that fixes sizes was "
                             "written for the model's own input: at batch " + std::to_string(options.batch) +
                             " it only has the element count, and mixes the images of the batch (ONNX Runtime "
                             "runs the same kernels; their cost is that of the reshaped tensors)");
    }
  }
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

  // ORT's CUDA EP leaves shape arithmetic on the host (cpu_placement.h).
  const std::vector<bool> cpu_placed = options.profile == "ort-cuda"
                                           ? kernels::CpuPlacedNodes(g)
                                           : std::vector<bool>(g.nodes().size(), false);
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
    if (n.attributes.count("fused_pad") && n.op_type == "MaxPool") {
      out.warnings.push_back("node '" + n.name +
                             "': a zero Pad was fused into MaxPool (which pads with -inf), as ONNX Runtime's "
                             "PadFusion does; the runtime's results differ from the model's where a window "
                             "holds only padding and negative values");
    }
    out.kernels.push_back(kernels::CostKernel(g, n, index++, constants));
    out.kernels.back().cpu_placed = cpu_placed[id];
  }
  return out;
}

}  // namespace hase
