// ConstantSharing: small constant initializers with the same dtype, dims and values become one;
// every node that read a duplicate reads the kept one. Nothing is removed by this rule itself,
// but CommonSubexpressionElimination (next in the list) compares initializers by identity, so
// two Unsqueeze(x, axes=[0]) whose axes are separate initializers merge only after this.
// torch.onnx writes one Constant per use (Swin-T: hundreds of [0], [1], [-1], [2]).
// Mirrors ORT's ConstantSharing (onnxruntime/core/optimizer/constant_sharing.cc), a level-1
// graph transformer, all EPs, applied in the first optimisation step only.
// Conditions (ORT's): an initializer (or a Constant node, which ORT and the loader turn into
// one) that is not a graph output; dims all known with 1–8 elements (a scalar counts 1);
// dtype float16, float, double, int32 or int64; its values held in the file; at least one live
// node reads it. Equal = same dtype, same dims, same values bit for bit. The first one met in
// node order is kept (ORT keeps the first one its hash map yields: which one is kept is not
// observable in the node list).
// Not modelled: initializers that are also graph inputs (ORT: not constant when the IR
// version ≥ 4; hase treats them as constants), uses inside subgraphs (ORT skips those). hase
// holds values as doubles, so two int64 values above 2^53 that round to the same double would
// be shared where ORT keeps them apart (Slice's INT64_MAX ends are equal in both).
// Mirrors: onnxruntime v1.21.0 onnxruntime/core/optimizer/constant_sharing.cc:L176-L251
//   (ApplyImpl: candidates L186-L195, IsAllowedToShare L39-L63 with TENSOR_ELEM_COUNT_THRESHOLD
//   = 8 in constant_sharing.h:L41, supported dtypes L17-L23, a consumer needed L219-L223,
//   InitializerValue equality L134-L142, consumers rewired L92-L118), ShouldOnlyApplyOnce
//   constant_sharing.h:L32-L39; registered at level 1 for every EP, before
//   CommonSubexpressionElimination, at graph_transformer_utils.cc:L225-L235. ort-cuda's 1.17.3
//   has the same rule by date: shapes of up to 8 elements since PR #15461 (merged April 2023,
//   before 1.15.0; scalars only from PR #12878, September 2022). Pinned tags' text
//   not read (docs/kernels-json.md "ORT sources"); checked against onnxruntime-node 1.30.0
//   (tests/kernels/front_end_cases_test.cc, CommonSubexpressionElimination).
#pragma once

#include "hase/kernels/fusion_rule.h"

namespace hase::kernels::rules {

class ConstantSharing : public FusionRule {
 public:
  // ORT's ConstantSharing::TENSOR_ELEM_COUNT_THRESHOLD.
  static constexpr int64_t kMaxElements = 8;

  std::string Name() const override { return "ConstantSharing"; }
  std::vector<std::string> AnchorOps() const override { return {}; }
  bool IsGraphTransformer() const override { return true; }
  bool ShouldOnlyApplyOnce() const override { return true; }
  // Returns the number of initializers replaced by an equal one.
  int ApplyToGraph(graph::Graph& g) const override;

 private:
  RuleEffect DoTryApply(graph::Graph&, graph::NodeId) const override {
    return RuleEffect::kUnchanged;
  }
};

}  // namespace hase::kernels::rules
