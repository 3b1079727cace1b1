#include "hase/kernels/fusion_profile.h"

#include <algorithm>

#include "hase/graph/ort_shape_view.h"
#include "hase/graph/topological_order.h"

#include "hase/kernels/rules/constant_folding.h"
#include "hase/kernels/rules/constant_sharing.h"
#include "hase/kernels/rules/bias_gelu_fusion.h"
#include "hase/kernels/rules/gather_slice_to_split_fusion.h"
#include "hase/kernels/rules/matmul_scale_fusion.h"
#include "hase/kernels/rules/matmul_transpose_fusion.h"
#include "hase/kernels/rules/cast_elimination.h"
#include "hase/kernels/rules/common_subexpression_elimination.h"
#include "hase/kernels/rules/conv_activation_fusion.h"
#include "hase/kernels/rules/conv_add_fusion.h"
#include "hase/kernels/rules/conv_bn_fold.h"
#include "hase/kernels/rules/dropout_elimination.h"
#include "hase/kernels/rules/function_inlining.h"
#include "hase/kernels/rules/gelu_fusion.h"
#include "hase/kernels/rules/gemm_activation_fusion.h"
#include "hase/kernels/rules/identity_elimination.h"
#include "hase/kernels/rules/insert_cast_transformer.h"
#include "hase/kernels/rules/layer_norm_fusion.h"
#include "hase/kernels/rules/mat_mul_add_fusion.h"
#include "hase/kernels/rules/noop_elimination.h"
#include "hase/kernels/rules/not_where_fusion.h"
#include "hase/kernels/rules/pad_fusion.h"
#include "hase/kernels/rules/quick_gelu_fusion.h"
#include "hase/kernels/rules/reshape_fusion.h"
#include "hase/kernels/rules/simplified_layer_norm_fusion.h"
#include "hase/kernels/rules/transpose_optimizer.h"

namespace hase::kernels {
namespace {

// Level 1 ("basic"): standard ops only, every provider. `ort_1_21_level1`: with the level-1
// LayerNormFusion of current releases (ort-cpu); ort-cuda's 1.17.3 has none (docs/kernels-json.md).
void AddBasicRules(RuleList* r, bool ort_1_21_level1) {
  // ORT's order (graph_transformer_utils.cc:L213-L236): its rewrite rules, then ConstantSharing
  // (first pass only), CommonSubexpressionElimination (compares initializers by identity, so
  // after ConstantSharing), ConstantFolding (after both: folded values are never shared).
  r->push_back(std::make_unique<rules::IdentityElimination>());
  r->push_back(std::make_unique<rules::DropoutElimination>());
  r->push_back(std::make_unique<rules::CastElimination>());
  r->push_back(std::make_unique<rules::NoopElimination>());
  r->push_back(std::make_unique<rules::NotWhereFusion>());
  r->push_back(std::make_unique<rules::ConstantSharing>());
  r->push_back(std::make_unique<rules::CommonSubexpressionElimination>());
  r->push_back(std::make_unique<rules::ConstantFolding>());
  r->push_back(std::make_unique<rules::ConvAddFusion>());  // before ConvBnFold, as in ORT
  r->push_back(std::make_unique<rules::ConvBnFold>());
  r->push_back(std::make_unique<rules::MatMulAddFusion>());
  r->push_back(std::make_unique<rules::ReshapeFusion>());  // after MatMulAddFusion, as in ORT
  if (ort_1_21_level1) {
    // Fuses only when the model imports ai.onnx ≥ 17 (then the level-2 instance does nothing);
    // after ReshapeFusion, before TransposeOptimizer, as in ORT (graph_transformer_utils.cc:L244).
    r->push_back(std::make_unique<rules::LayerNormFusion>(rules::LayerNormFusion::Level::kBasic));
  }
  r->push_back(std::make_unique<rules::PadFusion>());
  r->push_back(std::make_unique<rules::TransposeOptimizer>());  // last of level 1, as in ORT
}

}  // namespace

std::vector<std::string> FusionProfileNames() { return {"ort-cuda", "ort-cpu", "none"}; }

std::string FusionProfileOrtRelease(const std::string& profile) {
  if (profile == "ort-cuda") return "onnxruntime 1.17.3 (CUDA EP)";
  if (profile == "ort-cpu") return "onnxruntime-node 1.30.0 (CPU EP, level extended)";
  return "";
}

Result<RuleList> MakeFusionProfile(const std::string& profile,
                                   const std::vector<std::string>& disabled) {
  RuleList r;
  if (profile == "ort-cuda") {
    AddBasicRules(&r, /*ort_1_21_level1=*/false);
    // Level 2 ("extended"), CUDA provider set.
    r.push_back(std::make_unique<rules::ConvActivationFusion>(rules::ConvActivationFusion::Cuda()));
    r.push_back(std::make_unique<rules::GeluFusion>());
    r.push_back(
        std::make_unique<rules::LayerNormFusion>(rules::LayerNormFusion::Level::kExtendedOnly));
    r.push_back(std::make_unique<rules::SimplifiedLayerNormFusion>(/*allow_float16=*/true));
    r.push_back(std::make_unique<rules::BiasGeluFusion>());  // after GeluFusion, as in ORT
    r.push_back(std::make_unique<rules::QuickGeluFusion>(/*allow_float16=*/true));
  } else if (profile == "ort-cpu") {
    AddBasicRules(&r, /*ort_1_21_level1=*/true);
    // Partitioning, between the levels: a node the CPU EP has no kernel for and whose op has
    // an ONNX function body is replaced by the body (graph_partitioner.cc InlineNodes).
    r.push_back(std::make_unique<rules::FunctionInlining>());
    // Level 2 ("extended"), CPU provider set. GemmActivationFusion is CPU-only.
    r.push_back(std::make_unique<rules::GemmActivationFusion>());
    r.push_back(std::make_unique<rules::ConvActivationFusion>(rules::ConvActivationFusion::Cpu()));
    r.push_back(std::make_unique<rules::GeluFusion>());
    r.push_back(
        std::make_unique<rules::LayerNormFusion>(rules::LayerNormFusion::Level::kExtended));
    r.push_back(std::make_unique<rules::SimplifiedLayerNormFusion>(/*allow_float16=*/false));
    r.push_back(std::make_unique<rules::GatherSliceToSplitFusion>());  // after EmbedLayerNorm
    r.push_back(std::make_unique<rules::MatmulTransposeFusion>());  // before BiasGelu, as in ORT
    r.push_back(std::make_unique<rules::BiasGeluFusion>());  // after GeluFusion, as in ORT
    r.push_back(std::make_unique<rules::QuickGeluFusion>(/*allow_float16=*/false));
    r.push_back(std::make_unique<rules::MatMulScaleFusion>());  // after FastGeluFusion, as in ORT
    // After partitioning and the level 2+ transformers, once (AppliesAfterOptimizationLevels).
    r.push_back(std::make_unique<rules::InsertCastTransformer>());
  } else if (profile != "none") {
    return Status::Unsupported("unknown fusion profile '" + profile + "'", "--profile",
                               "use one of: ort-cuda, ort-cpu, none");
  }
  for (const std::string& d : disabled) {
    // Every rule of that name (LayerNormFusion is registered at levels 1 and 2), as ORT's
    // rules_and_transformers_to_disable matches by name.
    const auto named = [&](const auto& rule) { return rule->Name() == d; };
    if (std::find_if(r.begin(), r.end(), named) == r.end()) {
      return Status::InvalidArgument("profile '" + profile + "' has no rule '" + d + "'",
                                     "--disable");
    }
    r.erase(std::remove_if(r.begin(), r.end(), named), r.end());
  }
  return r;
}

int ApplyFusionRules(graph::Graph& g, const RuleList& rules) {
  int applied = 0;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    int this_pass = 0;
    for (const auto& rule : rules) {
      if (pass > 0 && rule->ShouldOnlyApplyOnce()) continue;  // graph_transformer_mgr.cc:L32
      if (rule->AppliesAfterOptimizationLevels()) continue;   // below, once
      const int before = this_pass;
      if (rule->IsGraphTransformer()) {
        this_pass += rule->ApplyToGraph(g);
        // ORT re-resolves the graph (and re-infers its shapes) after a transformer changed it.
        if (this_pass != before && rule->RefinesOrtShapes()) graph::RefreshOrtShapes(g);
        continue;
      }
      const std::vector<std::string> anchors = rule->AnchorOps();
      // Like an ORT transformer: one pass over a snapshot of the topological order.
      for (graph::NodeId id : graph::OrtTopologicalOrder(g)) {
        const graph::Node& n = g.node(id);
        if (n.removed || (!anchors.empty() &&
                          std::find(anchors.begin(), anchors.end(), n.op_type) == anchors.end())) {
          continue;
        }
        if (rule->TryApply(g, id) != RuleEffect::kUnchanged) ++this_pass;
      }
      if (this_pass != before && rule->RefinesOrtShapes()) graph::RefreshOrtShapes(g);
    }
    applied += this_pass;
    if (this_pass == 0) break;
  }
  for (const auto& rule : rules) {  // inference_session.cc:L1332-L1349
    if (rule->AppliesAfterOptimizationLevels()) applied += rule->ApplyToGraph(g);
  }
  return applied;
}

}  // namespace hase::kernels
