// `hase dataset convert --in DIR [--source S] --out FILE.csv`: converts a public kernel dataset
// folder to the canonical training CSV (docs/training-data.md).
#include <cstdio>

#include "cli/command.h"
#include "hase/predict/datasets/converters.h"
#include "hase/predict/training_set.h"

namespace hase::cli {

Command AddDatasetCommand(CLI::App& parent) {
  struct Args {
    std::string in, out, source = "auto";
  };
  auto args = std::make_shared<Args>();
  Command c;
  c.app = parent.add_subcommand("dataset", "Kernel training datasets");
  c.app->require_subcommand(1);
  CLI::App* conv = c.app->add_subcommand("convert", "Convert a dataset folder to canonical CSV");
  conv->add_option("--in", args->in, "dataset folder (e.g. ../shared/data/kernels/neusight)")
      ->required();
  conv->add_option("--out", args->out, "canonical CSV to write (.csv or .csv.gz)")->required();
  conv->add_option("--source", args->source, "neusight | deepbench | tophub | bencyq | auto");
  c.run = [args] {
    predict::ConvertReport report;
    auto rows = predict::ConvertSource(args->source, args->in, &report);
    if (!rows.ok()) return Fail(rows.status());
    Status st = predict::WriteTrainingCsv(args->out, *rows,
                                          {"converted by: hase dataset convert --in " + args->in,
                                           report.ToString()});
    if (!st.ok()) return Fail(st);
    std::printf("%s\nwrote %s\n", report.ToString().c_str(), args->out.c_str());
    return 0;
  };
  return c;
}

}  // namespace hase::cli
