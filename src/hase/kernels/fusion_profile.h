// Fusion profiles: the ordered rule list one runtime / execution provider applies, as data.
// Modelled on ORT's graph_transformer_utils.cc: level-1 ("basic") rules first, valid for every
// provider, then the level-2 ("extended") fusions the named provider supports.
//
//   ort-cuda (default)  ORT's CUDA execution provider, the kernels a GPU launches; reproduces
//                       onnxruntime 1.17.3, the last release whose CUDA conv-activation fusion
//                       fuses a residual Conv → Add → Relu (1.18.0–1.19.2 refuse it, PR #20282,
//                       in 1.18.0 by date; 1.20.0 on has no CUDA FusedConv, PR #19470; details
//                       in rules/conv_activation_fusion.h). Known deviation:
//                       Pad → AveragePool is fused (PadFusion gained it in July 2024, PR #21556).
//   ort-cpu             ORT's CPU execution provider at level "extended" (no NCHWc layout);
//                       reproduces onnxruntime-node 1.30.0 (tools/ort/package.json), checked
//                       node for node on every zoo model (tests/data/ort_cpu_ops.json).
//                       Between the levels, FunctionInlining: a float16 node without a CPU
//                       kernel whose op has an ONNX function body (Softmax 13, …) is replaced by
//                       the body. Ends with InsertCastTransformer: float16 nodes without a CPU
//                       float16 kernel run in float between Casts.
//   none                no rewrites: one kernel per ONNX node.
// Each rule header names the ORT source file and lines it mirrors (in the v1.21.0 release text,
// the one ORT release read line by line; docs/kernels-json.md "ORT sources") and what differs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/graph/graph.h"
#include "hase/kernels/fusion_rule.h"

namespace hase::kernels {

using RuleList = std::vector<std::unique_ptr<const FusionRule>>;

// "ort-cuda", "ort-cpu", "none" — in this order.
std::vector<std::string> FusionProfileNames();

// The ONNX Runtime release a profile reproduces: "onnxruntime 1.17.3 (CUDA EP)" for ort-cuda,
// "onnxruntime-node 1.30.0 (CPU EP, level extended)" for ort-cpu, "" for none and unknown names.
std::string FusionProfileOrtRelease(const std::string& profile);

// The rules of `profile`, minus those named in `disabled` (every instance of a name:
// LayerNormFusion is registered at level 1 and at level 2 on ort-cpu, as in ORT). Errors:
// Unsupported (unknown profile, listing the known ones); InvalidArgument (a disabled name that
// is no rule of it).
Result<RuleList> MakeFusionProfile(const std::string& profile,
                                   const std::vector<std::string>& disabled = {});

// Applies `rules` to `g`: each rule in order makes one top-down pass over the live nodes whose
// op is one of its anchors; the whole list repeats until a pass changes nothing (at most
// kMaxPasses, like ORT's transformer manager steps; a rule that ShouldOnlyApplyOnce runs in the
// first pass only), then each rule that AppliesAfterOptimizationLevels runs once. Returns the
// number of rewrites applied.
constexpr int kMaxPasses = 10;
int ApplyFusionRules(graph::Graph& g, const RuleList& rules);

}  // namespace hase::kernels
