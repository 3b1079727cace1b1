#include "probe_options.h"

#include <algorithm>

#include <CLI/CLI.hpp>

namespace hase::probe {

Result<ProbeOptions> ParseProbeArgs(const std::vector<std::string>& args) {
  ProbeOptions o;
  CLI::App app{"hase-probe: measures this machine's GPU for hase (microbenchmarks, kernel "
               "timings under background load)",
               "hase-probe"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  CLI::App* info = app.add_subcommand("info", "Print the GPU's name, driver and limits as JSON");
  info->add_option("--device", o.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);

  CLI::App* micro = app.add_subcommand("micro", "Run microbenchmarks, write a profile");
  micro->add_option("--out", o.profile_out, "Microbenchmark profile (YAML)")->required();
  micro->add_option("--csv", o.micro_csv, "Raw measurements (CSV)");
  micro->add_flag("--quick", o.quick, "Small sizes, few repetitions (smoke test)");
  micro->add_option("--device", o.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);

  std::string schedule = "idle";
  bool no_tf32 = false;
  CLI::App* kern = app.add_subcommand("kernels", "Time hase kernels under background loads");
  kern->add_option("--kernels", o.kernel_files, "`hase kernels --format json` output(s)")
      ->required();
  kern->add_option("--out", o.rows_out, "Training-set CSV (docs/training-data.md)")->required();
  kern->add_option("--model-out", o.model_out, "Whole-model timing CSV");
  kern->add_option("--load-out", o.load_out, "NVML/GPM readings under DCGM field names (CSV)");
  kern->add_option("--load", schedule, "Background loads, ';'-separated (idle;sm=0.5;dram=0.6)");
  kern->add_option("--warmup", o.warmup, "Untimed launches per kernel")->check(CLI::NonNegativeNumber);
  kern->add_option("--reps", o.reps, "Timed launches per kernel")->check(CLI::PositiveNumber);
  kern->add_option("--settle-ms", o.settle_ms, "Wait after starting a stressor (ms)")
      ->check(CLI::NonNegativeNumber);
  kern->add_option("--sample-ms", o.sample_ms, "NVML sampling period (ms)")
      ->check(CLI::PositiveNumber);
  kern->add_flag("--no-tf32", no_tf32, "Forbid TF32 in FP32 conv/gemm");
  kern->add_option("--max-kernels", o.max_kernels, "Time only the first N kernels (0 = all)")
      ->check(CLI::NonNegativeNumber);
  kern->add_option("--device", o.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);

  std::string level = "idle";
  CLI::App* stress = app.add_subcommand("stress", "Hold a background load until stopped");
  stress->add_option("level", level, "Load level: idle or sm=,occ=,dram=,tensor=,period_ms=")
      ->required();
  stress->add_option("--duration-s", o.duration_s, "Stop after S seconds (0 = until signalled)")
      ->check(CLI::NonNegativeNumber);
  stress->add_option("--device", o.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);

  CLI::App* plan = app.add_subcommand("plan", "Show how each kernel would be launched (no GPU)");
  plan->add_option("--kernels", o.kernel_files, "`hase kernels --format json` output(s)")
      ->required();

  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 wants them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    o.help = app.help();
    for (CLI::App* sub : {info, micro, kern, stress, plan}) {
      if (sub->parsed()) o.help = sub->help();
    }
    return o;
  } catch (const CLI::CallForAllHelp&) {
    o.help = app.help("", CLI::AppFormatMode::All);
    return o;
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(e.what(), "hase-probe command line",
                                   "run `hase-probe --help`");
  }
  if (info->parsed()) o.command = Subcommand::kInfo;
  if (micro->parsed()) o.command = Subcommand::kMicro;
  if (plan->parsed()) o.command = Subcommand::kPlan;
  if (stress->parsed()) {
    o.command = Subcommand::kStress;
    auto l = ParseStressLevel(level);
    if (!l.ok()) return l.status().WithContext("hase-probe stress");
    o.stress = *l;
  }
  if (kern->parsed()) {
    o.command = Subcommand::kKernels;
    o.tf32 = !no_tf32;
    auto s = ParseStressSchedule(schedule);
    if (!s.ok()) return s.status().WithContext("hase-probe kernels --load");
    o.schedule = *s;
  }
  return o;
}

}  // namespace hase::probe
