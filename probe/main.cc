// hase-probe: measures this machine's GPU for hase. Thin: parse, call, print
// (probe_options.h lists the subcommands; README.md § probe shows probe/run.sh).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "csv.h"
#include "gpu/gpu_context.h"
#include "gpu/kernel_timing.h"
#include "gpu/microbench.h"
#include "gpu/stressor.h"
#include "kernel_list_json.h"
#include "nvml_device.h"
#include "plan_report.h"
#include "probe_options.h"
#include "profile_yaml.h"

namespace {

// Set by SIGTERM/SIGINT in the stressor process: a signal handler can only reach a global.
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int Fail(const hase::Status& st) {
  std::fprintf(stderr, "hase-probe: error: %s\n", st.ToString().c_str());
  return st.ExitCode();
}

std::string SelfExe(const char* argv0) {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return argv0;
}

std::string NowUtc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

int Info(const hase::probe::ProbeOptions& o) {
  auto ctx = hase::probe::gpu::GpuContext::Create(o.device, 0);
  if (!ctx.ok()) return Fail(ctx.status());
  const cudaDeviceProp& p = (*ctx)->props();
  nlohmann::json j;
  j["name"] = p.name;
  j["compute_capability"] = fmt::format("{}.{}", p.major, p.minor);
  j["sms"] = p.multiProcessorCount;
  j["memory_bytes"] = p.totalGlobalMem;
  j["l2_bytes"] = p.l2CacheSize;
  j["max_threads_per_sm"] = p.maxThreadsPerMultiProcessor;
  j["pci_bus_id"] = (*ctx)->pci_bus_id();
  j["cuda_driver"] = (*ctx)->driver_version();
  auto nvml = hase::probe::NvmlDevice::Open((*ctx)->pci_bus_id());
  j["nvml"] = nvml.ok();
  if (nvml.ok()) {
    j["driver"] = (*nvml)->driver_version();
    j["nvml_name"] = (*nvml)->name();
    j["gpm"] = (*nvml)->has_gpm();
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

int Micro(const hase::probe::ProbeOptions& o) {
  using namespace hase::probe;
  auto ctx = gpu::GpuContext::Create(o.device, 0);
  if (!ctx.ok()) return Fail(ctx.status());
  MeasuredProfile prof;
  std::vector<MicroResult> raw;
  gpu::MicroOptions mo;
  mo.quick = o.quick;
  if (auto st = gpu::RunMicrobenchmarks(**ctx, mo, &prof, &raw); !st.ok()) return Fail(st);
  prof.gpu = (*ctx)->props().name;
  prof.tool = o.quick ? "hase-probe micro --quick" : "hase-probe micro";
  prof.measured_at = NowUtc();
  prof.host = Hostname();
  prof.cuda = (*ctx)->driver_version();
  if (auto nvml = NvmlDevice::Open((*ctx)->pci_bus_id()); nvml.ok()) {
    prof.driver = (*nvml)->driver_version();
  }
  std::ofstream out(o.profile_out);
  out << ProfileYaml(prof, raw);
  if (!out) return Fail(hase::Status::IO("cannot write", o.profile_out));
  if (!o.micro_csv.empty()) {
    auto csv = CsvWriter::Create(o.micro_csv, {"gpu", "name", "value", "unit", "detail"});
    if (!csv.ok()) return Fail(csv.status());
    for (const auto& r : raw) {
      if (auto st = (*csv)->WriteRow({prof.gpu, r.name, FormatNumber(r.value), r.unit, r.detail});
          !st.ok()) {
        return Fail(st);
      }
    }
  }
  for (const auto& r : raw) {
    std::printf("%-14s %12.3f %-8s %s\n", r.name.c_str(), r.value, r.unit.c_str(),
                r.detail.c_str());
  }
  return 0;
}

int Plan(const hase::probe::ProbeOptions& o) {
  int failed = 0;
  for (const auto& f : o.kernel_files) {
    auto list = hase::probe::LoadKernelListJson(f);
    if (!list.ok()) return Fail(list.status());
    std::string text;
    failed += hase::probe::ReportPlans(*list, &text).failed;
    std::printf("%s", text.c_str());
  }
  return failed == 0 ? 0 : 1;
}

int Stress(const hase::probe::ProbeOptions& o) {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  hase::Status st = hase::probe::gpu::RunStressor(o.device, o.stress, o.duration_s, g_stop);
  if (!st.ok()) return Fail(st);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto opts = hase::probe::ParseProbeArgs(args);
  if (!opts.ok()) return Fail(opts.status());
  if (!opts->help.empty()) {
    std::printf("%s", opts->help.c_str());
    return 0;
  }
  using hase::probe::Subcommand;
  switch (opts->command) {
    case Subcommand::kInfo: return Info(*opts);
    case Subcommand::kMicro: return Micro(*opts);
    case Subcommand::kStress: return Stress(*opts);
    case Subcommand::kPlan: return Plan(*opts);
    case Subcommand::kKernels: {
      hase::Status st = hase::probe::gpu::RunKernelTiming(*opts, SelfExe(argv[0]));
      return st.ok() ? 0 : Fail(st);
    }
    case Subcommand::kNone: break;
  }
  return Fail(hase::Status::InvalidArgument("no subcommand", "", "run hase-probe --help"));
}
