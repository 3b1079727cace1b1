// ProbeOptions: the command line of `hase-probe`, parsed without touching a GPU.
//
//   hase-probe info    [--device N]
//   hase-probe micro   --out PROFILE.yaml [--csv RAW.csv] [--quick] [--device N]
//   hase-probe kernels --kernels K.json [--kernels …] --out ROWS.csv [--model-out MODEL.csv]
//                      [--load-out LOAD.csv] [--load "idle;sm=0.5;dram=0.6"] [--warmup 5]
//                      [--reps 25] [--settle-ms 1000] [--sample-ms 100] [--no-tf32]
//                      [--max-kernels N] [--device N]
//   hase-probe stress  LEVEL [--duration-s S] [--device N]
//   hase-probe plan    --kernels K.json [--kernels …]   (no GPU: what `kernels` would launch)
#pragma once

#include <string>
#include <vector>

#include "hase/base/status.h"
#include "stress_level.h"

namespace hase::probe {

enum class Subcommand { kNone, kInfo, kMicro, kKernels, kStress, kPlan };

struct ProbeOptions {
  Subcommand command = Subcommand::kNone;
  std::string help;  // non-empty when --help was asked for: print it and exit 0
  int device = 0;    // CUDA device ordinal

  // micro
  std::string profile_out;  // microbenchmark profile (docs/microbenchmark-profile.md)
  std::string micro_csv;    // every raw measurement, one row each ("" = none)
  bool quick = false;       // smaller sizes and fewer repetitions (tests, smoke runs)

  // kernels
  std::vector<std::string> kernel_files;  // `hase kernels --format json` outputs (also plan)
  std::string rows_out;     // training-set CSV (docs/training-data.md)
  std::string model_out;    // whole-model timing CSV ("" = none)
  std::string load_out;     // NVML/GPM readings under DCGM field names ("" = none)
  std::vector<StressLevel> schedule = {StressLevel{}};  // background loads, in order
  int warmup = 5;           // untimed launches before timing each kernel, >= 0
  int reps = 25;            // timed launches per kernel (median reported), >= 1
  double settle_ms = 1000;  // wait after starting a stressor before timing, ms
  double sample_ms = 100;   // NVML sampling period, ms (GPM needs >= 100 ms windows)
  bool tf32 = true;         // allow TF32 for FP32 conv/gemm (ORT's CUDA EP default)
  int max_kernels = 0;      // time only the first N kernels of each list (0 = all)

  // stress
  StressLevel stress;
  double duration_s = 0;    // 0 = until SIGTERM/SIGINT or stdin closes
};

// Parses `args` (without the program name). Errors: InvalidArgument with CLI11's message and
// the usage hint (unknown flag, missing required flag, bad number, bad load level).
Result<ProbeOptions> ParseProbeArgs(const std::vector<std::string>& args);

}  // namespace hase::probe
