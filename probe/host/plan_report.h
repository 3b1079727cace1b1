// PlanReport: `hase-probe plan` — how the probe would launch each kernel of a list, without a
// GPU. A dry run of `hase-probe kernels` and a check that the probe covers a model.
#pragma once

#include <map>
#include <string>

#include "hase/kernels/kernel.h"

namespace hase::probe {

struct PlanCounts {
  int kernels = 0;
  int approximate = 0;                // launched, but only approximating the op (flagged rows)
  int skipped = 0;                    // view-only or nothing to write
  int failed = 0;                     // PlanKernel returned an error
  std::map<std::string, int> by_backend;  // BackendName → kernels
};

// One line per kernel ("index type → backend op [approx: note]"), then a summary line, into
// *text; returns the counts.
PlanCounts ReportPlans(const KernelList& list, std::string* text);

}  // namespace hase::probe
