#include "plan_report.h"

#include <fmt/format.h>

#include "kernel_plan.h"

namespace hase::probe {

PlanCounts ReportPlans(const KernelList& list, std::string* text) {
  PlanCounts c;
  for (const Kernel& k : list.kernels) {
    ++c.kernels;
    auto plan = PlanKernel(k);
    if (!plan.ok()) {
      ++c.failed;
      *text += fmt::format("{:4} {:<32} ERROR {}\n", k.index, k.type, plan.status().ToString());
      continue;
    }
    ++c.by_backend[BackendName(plan->backend)];
    if (plan->backend == Backend::kSkip) ++c.skipped;
    else if (plan->approximate) ++c.approximate;
    *text += fmt::format("{:4} {:<32} {:<12} {:<24}{}\n", k.index, k.type,
                         BackendName(plan->backend), plan->op,
                         plan->note.empty() ? "" : (plan->approximate ? "  approx: " : "  ") +
                                                        plan->note);
  }
  std::string backends;
  for (const auto& [b, n] : c.by_backend) backends += fmt::format(" {}={}", b, n);
  *text += fmt::format("{}: {} kernels, {} approximate, {} skipped, {} errors;{}\n", list.model,
                       c.kernels, c.approximate, c.skipped, c.failed, backends);
  return c;
}

}  // namespace hase::probe
