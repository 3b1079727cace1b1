#include "profile_yaml.h"

#include <fmt/format.h>

namespace hase::probe {
namespace {

// YAML double-quoted scalar.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string ProfileYaml(const MeasuredProfile& p, const std::vector<MicroResult>& raw) {
  std::string y;
  y += "# hase microbenchmark profile, written by hase-probe micro\n";
  y += "format: hase-microbenchmark-profile/1\n";
  y += "gpu: " + Quote(p.gpu) + "\n";
  if (!p.tool.empty()) y += "tool: " + Quote(p.tool) + "\n";
  if (!p.measured_at.empty()) y += "measured_at: " + Quote(p.measured_at) + "\n";
  if (!p.host.empty()) y += "host: " + Quote(p.host) + "\n";
  if (!p.driver.empty()) y += "driver: " + Quote(p.driver) + "\n";
  if (!p.cuda.empty()) y += "cuda: " + Quote(p.cuda) + "\n";
  y += fmt::format("dram_bandwidth_gbps: {:.1f}\n", p.dram_bandwidth_gbps);
  y += fmt::format("l2_bandwidth_gbps: {:.1f}\n", p.l2_bandwidth_gbps);
  y += fmt::format("fp32_tflops: {:.3f}\n", p.fp32_tflops);
  y += fmt::format("fp16_tflops: {:.3f}\n", p.fp16_tflops);
  y += fmt::format("tensor_fp16_tflops: {:.3f}\n", p.tensor_fp16_tflops);
  y += fmt::format("tensor_tf32_tflops: {:.3f}\n", p.tensor_tf32_tflops);
  y += fmt::format("launch_overhead_us: {:.3f}\n", p.launch_overhead_us);
  y += fmt::format("h2d_gbps: {:.2f}\n", p.h2d_gbps);
  y += fmt::format("d2h_gbps: {:.2f}\n", p.d2h_gbps);
  if (!raw.empty()) {
    y += "# raw measurements (median of repetitions):\n";
    for (const auto& r : raw) {
      y += fmt::format("#   {}: {:.4g} {} ({})\n", r.name, r.value, r.unit, r.detail);
    }
  }
  return y;
}

}  // namespace hase::probe
