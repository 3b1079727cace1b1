// BatchValidity: the batch sizes a model can run at, from the Reshapes that pin its batch.
//
// A constant Reshape target written for one batch (torch's x.reshape(1, 256), or a view whose
// size was traced as a constant) keeps the model's file valid at that batch only: ONNX shape
// inference happily gives [1, 256] at batch 64, and ONNX Runtime fails at run time ("The input
// tensor cannot be reshaped to the requested shape"). For every live Reshape whose data input is
// an activation with dim 0 = the bound batch N and whose target is a known constant, the input
// has k·N elements (k = elements per sample) and the target fixes P elements:
//   no -1 in the target:  valid only at N = P / k (and nowhere when k does not divide P);
//   one -1:               valid at every multiple of P' / gcd(k, P') (P' = product of the rest).
// A 0 in the target copies the input dim (the batch), so such a Reshape pins nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hase/graph/graph.h"

namespace hase::graph {

struct BatchValidity {
  std::optional<int64_t> only;  // the one batch size the model runs at (0 = none at all)
  int64_t multiple_of = 1;      // else: batch sizes that are multiples of this (1 = any)
  std::string reason;           // "Reshape 'name' fixes [1,256]"; empty when unconstrained

  bool Allows(int64_t batch) const {
    return only ? batch == *only : batch % multiple_of == 0;
  }
  // "valid only at batch 1" / "valid at batch sizes that are multiples of 4" / "valid at any
  // batch size" / "valid at no batch size".
  std::string Describe() const;
};

// Derives the constraint from `g` loaded at batch `batch` (≥ 1).
BatchValidity ComputeBatchValidity(const Graph& g, int64_t batch);

}  // namespace hase::graph
