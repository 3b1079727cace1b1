// `hase gpus [--format table|json] [--catalog FILE]`: lists the GPU catalog.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hase/hw/gpu_catalog.h"

namespace hase::cli {
namespace {

struct GpusFlags {
  std::string format = "table";
  std::string catalog;
};

nlohmann::json ToJson(const GpuSpec& g) {
  return {{"id", g.id},
          {"name", g.name},
          {"aliases", g.aliases},
          {"architecture", g.architecture},
          {"chip", g.chip},
          {"compute_capability", g.compute_capability},
          {"sms", g.sms},
          {"boost_clock_mhz", g.boost_clock_mhz},
          {"fp32_tflops", g.fp32_tflops},
          {"fp16_tflops", g.fp16_tflops},
          {"tensor_fp16_tflops", g.tensor_fp16_tflops},
          {"memory_gib", g.memory_gib},
          {"memory_type", g.memory_type},
          {"memory_bandwidth_gbps", g.memory_bandwidth_gbps},
          {"l2_mib", g.l2_mib},
          {"pcie_gen", g.pcie_gen},
          {"pcie_lanes", g.pcie_lanes},
          {"interconnect", g.interconnect},
          {"tdp_w", g.tdp_w},
          {"source", g.source}};
}

int Run(const GpusFlags& f) {
  auto catalog = GpuCatalog::Load(f.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  if (f.format == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& g : catalog->gpus()) arr.push_back(ToJson(g));
    std::printf("%s\n", arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::string out = fmt::format("{:<20} {:<13} {:>4} {:>5} {:>7} {:>7} {:>7} {:>6} {:>7} {:>6} {:>5}\n",
                                "GPU", "ARCH", "CC", "SMS", "FP32", "FP16", "TENSOR", "MEM",
                                "BW", "L2", "TDP");
  out += fmt::format("{:<20} {:<13} {:>4} {:>5} {:>7} {:>7} {:>7} {:>6} {:>7} {:>6} {:>5}\n", "",
                     "", "", "", "TFLOP/s", "TFLOP/s", "TFLOP/s", "GiB", "GB/s", "MiB", "W");
  for (const auto& g : catalog->gpus()) {
    out += fmt::format(
        "{:<20} {:<13} {:>4} {:>5} {:>7.1f} {:>7.1f} {:>7.1f} {:>6.0f} {:>7.0f} {:>6.2f} {:>5.0f}\n",
        g.id, g.architecture, g.compute_capability, g.sms, g.fp32_tflops, g.fp16_tflops,
        g.tensor_fp16_tflops, g.memory_gib, g.memory_bandwidth_gbps, g.l2_mib, g.tdp_w);
  }
  out += fmt::format("{} GPU types. Tensor = dense FP16 with FP32 accumulate; sources: "
                     "`hase gpus --format json`.\n", catalog->size());
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

Command AddGpusCommand(CLI::App& parent) {
  auto flags = std::make_shared<GpusFlags>();
  Command c;
  c.app = parent.add_subcommand("gpus", "List the GPU types hase knows (data/gpus.yaml)");
  c.app->add_option("--format", flags->format, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  c.app->add_option("--catalog", flags->catalog,
                    "GPU catalog YAML to use instead of the built-in data/gpus.yaml");
  c.run = [flags] { return Run(*flags); };
  return c;
}

}  // namespace hase::cli
