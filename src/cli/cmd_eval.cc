// `hase eval [--model MODEL] --data PATH... [--split ...]`: scores the learned kernel model.
// With --split none (the default when --model is given) the model is scored as is; any other
// split retrains per fold with the model's training options (or defaults/flags without --model).
#include <cstdio>

#include "cli/command.h"
#include "hase/hw/gpu_catalog.h"
#include <fmt/format.h>

#include "hase/predict/analytic_estimator.h"
#include "hase/predict/csv.h"
#include "hase/predict/evaluation.h"
#include "hase/predict/learned_model.h"
#include "hase/predict/training_data.h"

namespace hase::cli {

namespace {
struct EvalArgs {
  std::string model;
  std::vector<std::string> data;
  std::string split;
  std::string catalog;
  bool keep_suspect = false;
  bool no_load = false;
  uint64_t seed = 42;
  int rounds = 0;
  long max_rows_per_group = -1;
  int threads = 2;
  std::string family;
  std::string profile_source;
  size_t calibrate = 0;
  size_t few_shot = 0;
  bool no_spec_features = false;
  std::string rows_out;
  std::string estimator = "xgboost";
  bool no_conv_algorithm = false;
};

int PrintReport(const EvalArgs& a, const std::vector<predict::EvalRow>& rows,
                const std::string& title);

int RunEval(const EvalArgs& a) {
  auto catalog = GpuCatalog::Load(a.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  std::string split_name = a.split.empty() ? (a.model.empty() ? "random" : "none") : a.split;
  auto split = predict::ParseSplitKind(split_name);
  if (!split.ok()) return Fail(split.status());
  if (*split == predict::SplitKind::kNone && a.model.empty()) {
    return Fail(Status::InvalidArgument("--split none needs --model", "--split"));
  }
  predict::LearnedKernelModel model;
  predict::LearnedTrainOptions train;
  if (!a.model.empty()) {
    auto m = predict::LearnedKernelModel::Load(a.model);
    if (!m.ok()) return Fail(m.status());
    train = m->options();
    model = std::move(m).value();
  }
  if (a.rounds > 0) train.rounds = a.rounds;
  if (a.max_rows_per_group >= 0) train.max_rows_per_group = static_cast<size_t>(a.max_rows_per_group);
  if (a.no_load) train.use_load = false;
  if (a.no_spec_features) train.spec_features = false;
  if (!a.profile_source.empty()) train.profile_source = a.profile_source;
  if (a.calibrate > 0) {
    if (a.profile_source.empty()) train.profile_source = "probe";
    train.probe_rows = a.calibrate;
  }
  train.nthread = a.threads;
  predict::LoadDataOptions lo;
  lo.keep_suspect = a.keep_suspect;
  auto data = predict::LoadTrainingData(a.data, *catalog, lo);
  if (!data.ok()) return Fail(data.status());
  for (const auto& n : data->notes) std::fprintf(stderr, "hase eval: %s\n", n.c_str());
  if (!a.family.empty()) {
    KernelFamily f;
    if (!predict::ParseKernelFamily(a.family, &f)) {
      return Fail(Status::InvalidArgument("unknown family '" + a.family + "'", "--family"));
    }
    predict::TrainingData kept;
    for (size_t i = 0; i < data->rows.size(); ++i) {
      if (data->rows[i].family != f) continue;
      kept.rows.push_back(data->rows[i]);
      kept.gpus.push_back(data->gpus[i]);
    }
    data->rows = std::move(kept.rows);
    data->gpus = std::move(kept.gpus);
    if (data->rows.empty()) return Fail(Status::InvalidArgument("no rows of that family", "--family"));
  }
  Result<std::vector<predict::EvalRow>> rows = Status::Internal("unset");
  predict::EvalStats stats;
  if (a.estimator == "analytic") {
    AnalyticParams params = DefaultAnalyticParams();
    if (a.no_conv_algorithm) params.conv_algorithm = false;
    rows = predict::ScoreAnalytic(data->rows, data->gpus, params);
    if (!rows.ok()) return Fail(rows.status());
    const std::string title =
        "hase eval: analytic estimator (no training, DefaultAnalyticParams" +
        std::string(a.no_conv_algorithm ? ", conv algorithm rule off" : "") + "), " +
        std::to_string(rows->size()) + " scored rows; baseline fitted leave-one-GPU-out";
    return PrintReport(a, *rows, title);
  }
  if (a.estimator != "xgboost") {
    return Fail(Status::InvalidArgument("unknown estimator '" + a.estimator + "'", "--estimator",
                                        "use xgboost or analytic"));
  }
  if (*split == predict::SplitKind::kNone) {
    rows = predict::ScoreModel(model, data->rows, data->gpus);
  } else {
    predict::EvalOptions eo;
    eo.split = *split;
    eo.seed = a.seed;
    eo.train = train;
    eo.calibrate_rows = a.calibrate;
    eo.few_shot = a.few_shot;
    rows = predict::CrossValidate(
        data->rows, data->gpus, eo,
        [](const std::string& fold) {
          std::fprintf(stderr, "hase eval: training fold %s\n", fold.c_str());
        },
        &stats);
  }
  if (!rows.ok()) return Fail(rows.status());
  std::string title = "hase eval: split " + split_name + ", " + std::to_string(rows->size()) +
                      " scored rows" + (a.model.empty() ? "" : ", model " + a.model);
  if (*split != predict::SplitKind::kNone) {
    title += ", retrained per fold: seed " + std::to_string(train.seed) + ", " +
             std::to_string(train.rounds) + " rounds, depth " + std::to_string(train.max_depth) +
             ", <= " + std::to_string(train.max_rows_per_group) + " rows per (source, GPU, family)" +
             (train.use_load ? "" : ", load features off") + ", normaliser figures " +
             train.profile_source +
             (train.profile_source == "probe"
                  ? " (" + std::to_string(train.probe_rows) + " rows per probe)" : "") +
             (train.spec_features ? "" : ", raw datasheet features off");
    if (a.calibrate > 0) {
      title += "\ncalibrated: held-out GPU figures from an emulated probe on " +
               std::to_string(stats.calibration_rows) +
               " of its own rows in total (excluded from scoring)";
    } else if (*split == predict::SplitKind::kLeaveGpuOut) {
      title += "\nzero-shot: held-out GPU figures from its datasheet only";
    }
    if (a.few_shot > 0) {
      title += "\nfew-shot: one scale per (source, family) of the held-out GPU fitted on " +
               std::to_string(a.few_shot) + " rows each, " + std::to_string(stats.few_shot_rows) +
               " rows in total (excluded from scoring)";
    }
  }
  return PrintReport(a, *rows, title);
}

// Prints the report and, with --rows-out, writes every scored row.
int PrintReport(const EvalArgs& a, const std::vector<predict::EvalRow>& rows,
                const std::string& title) {
  std::printf("%s", predict::FormatEvalReport(rows, title).c_str());
  if (!a.rows_out.empty()) {
    std::string csv =
        "fold,source,gpu,family,op,dtype,flops,bytes,measured_ms,predicted_ms,baseline_ms,where\n";
    for (const auto& r : rows) {
      const auto& s = r.sample;
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", r.fold, s.source, r.gpu->id,
                         KernelFamilyName(s.family), s.op, DTypeSize(s.dtype) == 2 ? "float16" : "float",
                         s.flops, s.bytes, s.latency_ms, r.predicted_ms, r.baseline_ms, s.where);
    }
    Status st = predict::WriteTextFile(a.rows_out, csv);
    if (!st.ok()) return Fail(st);
  }
  return 0;
}
}  // namespace

Command AddEvalCommand(CLI::App& parent) {
  auto args = std::make_shared<EvalArgs>();
  Command c;
  c.app = parent.add_subcommand(
      "eval", "Score the learned kernel model: MAPE, median/p90 APE, R2 per family and GPU");
  c.app->add_option("--model", args->model, "trained model file (hase train)");
  c.app->add_option("--data", args->data, "canonical CSV or dataset folder; repeatable")->required();
  c.app->add_option("--split", args->split,
                    "none | random | by-shape | leave-gpu-out | leave-source-out "
                    "(default: none with --model, else random)");
  c.app->add_option("--seed", args->seed, "split seed (default 42)")->check(NonNegativeInteger());
  c.app->add_option("--rounds", args->rounds, "override boosting rounds when retraining")->check(CLI::Range(1, 100000));
  c.app->add_option("--threads", args->threads, "XGBoost threads (default 2)");
  c.app->add_option("--max-rows-per-group", args->max_rows_per_group,
                    "override the training row cap per (source, GPU, family) when retraining");
  c.app->add_option("--family", args->family, "score only this kernel family");
  c.app->add_option("--catalog", args->catalog, "GPU catalog YAML (default: built-in)");
  c.app->add_flag("--keep-suspect", args->keep_suspect, "keep rows flagged suspect_*");
  c.app->add_flag("--no-load", args->no_load, "retrain without background-load features");
  c.app->add_option("--profile-source", args->profile_source,
                    "normaliser figures when retraining: datasheet | probe (emulated probe on each "
                    "training GPU's rows)");
  c.app->add_option("--calibrate", args->calibrate,
                    "leave-gpu-out: emulate the probe on N rows per probe of the held-out GPU "
                    "(excluded from scoring); implies --profile-source probe");
  c.app->add_option("--few-shot", args->few_shot,
                    "leave-gpu-out: fit one scale per (source, family) of the held-out GPU on K "
                    "of its rows (excluded from scoring)");
  c.app->add_option("--rows-out", args->rows_out,
                    "also write every scored row (measured, predicted) as CSV to FILE");
  c.app->add_flag("--no-spec-features", args->no_spec_features,
                  "retrain with raw datasheet GPU features missing (normalised ones only)");
  c.app->add_option("--estimator", args->estimator,
                    "xgboost (default: the learned model, retrained per fold) | analytic (the "
                    "roofline model as is; baseline fitted leave-one-GPU-out)");
  c.app->add_flag("--no-conv-algorithm", args->no_conv_algorithm,
                  "with --estimator analytic: switch off the conv algorithm rule (ablation)");
  c.run = [args] { return RunEval(*args); };
  return c;
}

}  // namespace hase::cli
