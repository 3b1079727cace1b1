#include "hase/hw/mig_profile.h"

#include <algorithm>
#include <cctype>

#include "hase/hw/gpu_spec.h"

namespace hase {

std::string CanonicalMigProfileName(std::string_view name) {
  std::string s(name);
  if (s.size() > 4 && (s.rfind("MIG ", 0) == 0 || s.rfind("mig ", 0) == 0)) s = s.substr(4);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const MigProfile* MigGeometry::Find(std::string_view name) const {
  const std::string want = CanonicalMigProfileName(name);
  for (const MigProfile& p : profiles) {
    if (CanonicalMigProfileName(p.name) == want) return &p;
  }
  return nullptr;
}

std::string MigGeometry::ProfileNames() const {
  std::string out;
  for (const MigProfile& p : profiles) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

std::string MigTypeId(std::string_view parent_id, std::string_view profile) {
  return std::string(parent_id) + "-MIG-" + std::string(profile);
}

Result<GpuSpec> DeriveMigSpec(const GpuSpec& parent, std::string_view profile) {
  if (!parent.mig.supported()) {
    return Status::NotFound("GPU type " + parent.id + " has no MIG profiles", parent.id,
                            "MIG runs on A30, A100, H100, H200 (data/gpus.yaml `mig:`)");
  }
  const MigProfile* p = parent.mig.Find(profile);
  if (p == nullptr) {
    return Status::NotFound("no MIG profile '" + std::string(profile) + "' on " + parent.id,
                            parent.id, "valid profiles: " + parent.mig.ProfileNames());
  }
  GpuSpec g = parent;
  g.id = MigTypeId(parent.id, p->name);
  g.name = parent.name + " MIG " + p->name;
  g.aliases.clear();
  g.mig = MigGeometry{};
  g.mig_parent = parent.id;
  g.mig_profile = p->name;
  const double sm_share = static_cast<double>(p->sms) / parent.sms;
  const double mem_share = static_cast<double>(p->memory_slices) / parent.mig.memory_slices;
  g.sms = p->sms;
  g.fp32_tflops = parent.fp32_tflops * sm_share;
  g.fp16_tflops = parent.fp16_tflops * sm_share;
  g.tensor_fp16_tflops = parent.tensor_fp16_tflops * sm_share;
  g.memory_gib = p->memory_gib;
  g.memory_bandwidth_gbps = parent.memory_bandwidth_gbps * mem_share;
  g.l2_mib = parent.l2_mib * mem_share;
  g.source = "derived from " + parent.id + " by MIG profile " + p->name + " (" +
             std::to_string(p->sms) + " of " + std::to_string(parent.sms) + " SMs, " +
             std::to_string(p->memory_slices) + " of " + std::to_string(parent.mig.memory_slices) +
             " memory slices): " + parent.mig.source;
  return g;
}

}  // namespace hase
