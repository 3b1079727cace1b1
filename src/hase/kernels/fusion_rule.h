// FusionRule: one named, local, meaning-preserving graph rewrite (modelled on ONNX Runtime's
// RewriteRule, include/onnxruntime/core/optimizer/rewrite_rule.h).
//
// A rule declares the op types it anchors on. Match(graph, node) runs cheap, selective checks
// first (op, domain, opset, single consumer, not a graph output, constant operands) and returns
// what it found, or nullopt when the rule does not apply — "does not apply" is not an error.
// Apply(graph, found) alone changes the graph and reports its effect. Rules hold no mutable
// state (configuration fixed at construction is fine), so one instance may be shared.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hase/graph/graph.h"

namespace hase::kernels {

enum class RuleEffect {
  kUnchanged,      // the rule did not apply
  kModified,       // the anchor (and maybe others) changed; the anchor is still live
  kRemovedAnchor,  // the anchor node was removed
};

class FusionRule {
 public:
  virtual ~FusionRule() = default;
  // Rule name = class name, e.g. "ConvBnFold"; used by --disable and in docs.
  virtual std::string Name() const = 0;
  // ONNX op types the rule may start from (anchor nodes), e.g. {"Conv"}; empty = every op.
  virtual std::vector<std::string> AnchorOps() const = 0;
  // Tries the rule at live node `id`. Non-virtual entry; the hooks are Match/Apply.
  RuleEffect TryApply(graph::Graph& g, graph::NodeId id) const { return DoTryApply(g, id); }
  // A whole-graph transformer (ORT's GraphTransformer that walks the graph itself and keeps
  // state across nodes, e.g. TransposeOptimizer) returns true: ApplyFusionRules then calls
  // ApplyToGraph once per pass instead of TryApply per anchor.
  virtual bool IsGraphTransformer() const { return false; }
  // Rewrites `g`; returns the number of changes (0 = unchanged). Only for graph transformers.
  virtual int ApplyToGraph(graph::Graph& g) const { (void)g; return 0; }
  // True for a rule whose rewrite gives ORT's shape inference new facts — a constant where a
  // computed value was (ConstantFolding, ReshapeFusion) — so that ApplyFusionRules re-infers
  // ORT's view of the shapes (graph::RefreshOrtShapes) after it changed the graph. Removals and
  // rewirings (eliminations, CSE) and fusions into ORT's own ops teach inference nothing.
  virtual bool RefinesOrtShapes() const { return false; }
  // True for a rule ApplyFusionRules runs in its first pass only (ORT's
  // GraphTransformer::ShouldOnlyApplyOnce, e.g. ConstantSharing in an inference build).
  virtual bool ShouldOnlyApplyOnce() const { return false; }
  // True for a transformer ORT's InferenceSession::TransformGraph applies once after the
  // optimisation levels (InsertCastTransformer): ApplyFusionRules runs it once, after the
  // passes of the other rules have converged, so that no rule sees what it changed. Such a rule
  // is a graph transformer (IsGraphTransformer).
  virtual bool AppliesAfterOptimizationLevels() const { return false; }

 private:
  virtual RuleEffect DoTryApply(graph::Graph& g, graph::NodeId id) const = 0;
};

// Typed base: Found is what Match discovered (node ids, value names) and Apply consumes.
template <typename Found>
class RewriteRule : public FusionRule {
 protected:
  virtual std::optional<Found> Match(const graph::Graph& g, graph::NodeId id) const = 0;
  virtual RuleEffect Apply(graph::Graph& g, const Found& found) const = 0;

 private:
  RuleEffect DoTryApply(graph::Graph& g, graph::NodeId id) const final {
    std::optional<Found> f = Match(g, id);
    return f ? Apply(g, *f) : RuleEffect::kUnchanged;
  }
};

}  // namespace hase::kernels
