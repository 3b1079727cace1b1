// Node attributes between ONNX's AttributeProto and hase's graph::Attribute (graph.h), both ways:
// the loader reads them, and the code that hands nodes back to ONNX (shape inference over
// ORT's view, function bodies) writes them.
#pragma once

#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "hase/graph/graph.h"

namespace hase::graph {

// INT/INTS/FLOAT/FLOATS/STRING/STRINGS/TENSOR as Attribute documents them; GRAPH, SPARSE_TENSOR,
// TENSORS, … become kOther with no content.
Attribute AttributeFromProto(const onnx::AttributeProto& a);

// `a` as an AttributeProto named `name`; nullopt for kOther (no content to write). A kTensor
// carries its dtype, dims and raw bytes when the file stored it as raw_data.
std::optional<onnx::AttributeProto> AttributeToProto(const std::string& name, const Attribute& a);

}  // namespace hase::graph
