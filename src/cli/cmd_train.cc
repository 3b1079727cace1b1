// `hase train --data PATH... --out MODEL [--seed S]`: trains the learned kernel latency model
// (docs/predictor-learned.md) from canonical CSVs and/or dataset folders.
#include <cstdio>

#include "cli/command.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/predict/learned_model.h"
#include "hase/predict/training_data.h"

namespace hase::cli {

namespace {
struct TrainArgs {
  std::vector<std::string> data;
  std::string out;
  std::string catalog;
  bool keep_suspect = false;
  bool no_load = false;
  bool no_spec_features = false;
  predict::LearnedTrainOptions options;
};

int RunTrain(const TrainArgs& a) {
  auto catalog = GpuCatalog::Load(a.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  predict::LoadDataOptions lo;
  lo.keep_suspect = a.keep_suspect;
  auto data = predict::LoadTrainingData(a.data, *catalog, lo);
  if (!data.ok()) return Fail(data.status());
  for (const auto& n : data->notes) std::fprintf(stderr, "hase train: %s\n", n.c_str());
  predict::LearnedTrainOptions o = a.options;
  o.use_load = !a.no_load;
  o.spec_features = !a.no_spec_features;
  std::fprintf(stderr, "hase train: %zu rows, seed %llu, %d rounds, depth %d\n", data->rows.size(),
               static_cast<unsigned long long>(o.seed), o.rounds, o.max_depth);
  auto model = predict::LearnedKernelModel::Train(data->rows, data->gpus, o);
  if (!model.ok()) return Fail(model.status());
  Status st = model->Save(a.out);
  if (!st.ok()) return Fail(st);
  std::printf("wrote %s (families:", a.out.c_str());
  for (KernelFamily f : model->families()) std::printf(" %s", KernelFamilyName(f));
  std::printf(")\n");
  return 0;
}
}  // namespace

Command AddTrainCommand(CLI::App& parent) {
  auto args = std::make_shared<TrainArgs>();
  Command c;
  c.app = parent.add_subcommand("train", "Train the learned kernel latency model (XGBoost)");
  c.app->add_option("--data", args->data,
                    "canonical training CSV (docs/training-data.md) or dataset folder "
                    "(neusight, deepbench, tophub, bencyq_hase); repeatable")
      ->required();
  c.app->add_option("--out", args->out, "model file to write (.json or .json.gz)")->required();
  c.app->add_option("--seed", args->options.seed, "XGBoost seed (default 42)")->check(NonNegativeInteger());
  c.app->add_option("--rounds", args->options.rounds, "boosting rounds per family (default 250)")
      ->check(CLI::Range(1, 100000));
  c.app->add_option("--max-depth", args->options.max_depth, "tree depth (default 8)");
  c.app->add_option("--eta", args->options.eta, "learning rate (default 0.1)");
  c.app->add_option("--threads", args->options.nthread, "XGBoost threads (default 2)");
  c.app->add_option("--max-rows-per-group", args->options.max_rows_per_group,
                    "cap rows per (source, GPU, family), seeded subsample (default 4000; 0 = all)");
  c.app->add_option("--catalog", args->catalog, "GPU catalog YAML (default: built-in)");
  c.app->add_flag("--keep-suspect", args->keep_suspect, "keep rows flagged suspect_*");
  c.app->add_flag("--no-load", args->no_load, "ignore background-load features (ablation)");
  c.app->add_option("--profile-source", args->options.profile_source,
                    "normaliser figures: datasheet (default) | probe (emulated probe on each "
                    "training GPU's own rows; docs/predictor-learned.md)");
  c.app->add_option("--probe-rows", args->options.probe_rows,
                    "rows per emulated probe with --profile-source probe (default 3)");
  c.app->add_flag("--no-spec-features", args->no_spec_features,
                  "raw datasheet GPU features missing (normalised ones only)");
  c.run = [args] { return RunTrain(*args); };
  return c;
}

}  // namespace hase::cli
