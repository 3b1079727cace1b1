// The `hase` command line: one subcommand per file (cmd_<name>.cc), each thin — parse flags,
// call the library, print. Subcommands are listed explicitly in main.cc (no self-registration).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hase/base/status.h"

namespace hase::cli {

// One subcommand: the CLI11 app it added to the parent and what to run when it was chosen.
// run returns the process exit status (0 on success; Status::ExitCode() on failure).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Prints "hase: error: <status>" to stderr and returns its exit code.
int Fail(const Status& status);

// Validator for unsigned flags (seeds): rejects a leading '-' that CLI11 would otherwise wrap
// to a huge unsigned value.
inline CLI::Validator NonNegativeInteger() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return !s.empty() && s[0] == '-' ? "must be a non-negative integer, got " + s : "";
      },
      "UINT", "NonNegativeInteger");
}

// The model zoo directory: <prefix>/share/hase/models next to an installed `hase`
// (cmake --install), else the source tree's models/ (install_paths.cc).
std::string DefaultModelsDir();

// The .onnx file a model argument names (model_arg.cc): `arg` itself when it exists or looks
// like a path (has a '/' or ends in .onnx: the loader then reports it missing); else the zoo
// model of that name, `models_dir`/ARG.onnx (`models_dir` empty = DefaultModelsDir()).
// Errors: NotFound for a bare name that is neither, the hint listing the zoo's names.
Result<std::string> ResolveModelArg(const std::string& arg, const std::string& models_dir = "");
// Zoo model names in `dir` (file stems of its *.onnx files), sorted; empty if none or no dir.
std::vector<std::string> ZooNames(const std::string& dir);
// "give the path to an .onnx file or a zoo model: convnext_tiny, densenet121, …" for `dir`.
std::string ZooNamesHint(const std::string& dir);

// Each Add*Command adds its subcommand to `parent`. Defined in cmd_<name>.cc.
Command AddKernelsCommand(CLI::App& parent);
Command AddCalibrateCommand(CLI::App& parent);  // cmd_calibrate.cc
Command AddGpusCommand(CLI::App& parent);
Command AddPredictCommand(CLI::App& parent);
Command AddTrainCommand(CLI::App& parent);
Command AddEvalCommand(CLI::App& parent);
Command AddSimulateCommand(CLI::App& parent);
Command AddServeCommand(CLI::App& parent);
Command AddDatasetCommand(CLI::App& parent);
Command AddQueueCommand(CLI::App& parent);
Command AddUsageCommand(CLI::App& parent);

}  // namespace hase::cli
