#include "hase/hw/gpu_spec.h"

#include <charconv>

namespace hase {

int GpuSpec::compute_capability_major() const {
  int major = 0;
  std::from_chars(compute_capability.data(), compute_capability.data() + compute_capability.size(),
                  major);
  return major;
}

double GpuSpec::tensor_tf32_tflops() const {
  return compute_capability_major() >= 8 ? tensor_fp16_tflops / 2 : 0.0;
}

double GpuSpec::pcie_peak_gbps() const {
  // Per-lane, per-direction payload rates after line coding (PCI-SIG base specifications):
  // gen3 8 GT/s × 128/130, gen4 16 GT/s × 128/130, gen5 32 GT/s × 128/130, divided by 8 bits.
  double per_lane = 0;
  switch (pcie_gen) {
    case 1: per_lane = 0.25; break;
    case 2: per_lane = 0.5; break;
    case 3: per_lane = 0.985; break;
    case 4: per_lane = 1.969; break;
    case 5: per_lane = 3.938; break;
    default: per_lane = pcie_gen > 5 ? 7.877 : 0.985; break;
  }
  return per_lane * (pcie_lanes > 0 ? pcie_lanes : 16);
}

}  // namespace hase
