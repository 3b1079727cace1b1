// hase: hardware-aware scheduling of inference tasks on heterogeneous GPU clusters.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/command.h"

namespace hase::cli {

int Fail(const Status& status) {
  std::fprintf(stderr, "hase: error: %s\n", status.ToString().c_str());
  return status.ExitCode();
}

}  // namespace hase::cli

int main(int argc, char** argv) {
  using namespace hase::cli;
  CLI::App app{"hase: hardware-aware scheduling of inference tasks on heterogeneous GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hase 0.1.0");
  const std::vector<Command> commands = {
      AddSimulateCommand(app), AddKernelsCommand(app), AddPredictCommand(app),
      AddGpusCommand(app),     AddTrainCommand(app),   AddEvalCommand(app),
      AddServeCommand(app),   AddDatasetCommand(app), AddQueueCommand(app), AddUsageCommand(app),
      AddCalibrateCommand(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // --help: usage on stdout, exit 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A bad command line is invalid input like any other: one hase-style line, exit 2.
    std::string where = "hase";
    for (const Command& c : commands) {
      if (c.app->parsed()) where = "hase " + c.app->get_name();
    }
    if (where == "hase" && argc > 1 && argv[1][0] != '-') {
      std::string names;
      for (const Command& c : commands) names += (names.empty() ? "" : ", ") + c.app->get_name();
      return Fail(hase::Status::InvalidArgument(
          "unknown command '" + std::string(argv[1]) + "'", "hase", "commands: " + names));
    }
    return Fail(hase::Status::InvalidArgument(e.what(), where,
                                              "see '" + where + " --help'"));
  }
  try {
    for (const Command& c : commands) {
      if (c.app->parsed()) return c.run();
    }
  } catch (const std::exception& e) {
    // Library code returns Status; reaching here is a bug, reported without a crash.
    std::fprintf(stderr, "hase: internal error: %s\n", e.what());
    return 1;
  }
  return 1;
}
