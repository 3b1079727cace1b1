#include "hase/predict/learned_model.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "hase/predict/csv.h"
#include "hase/predict/evaluation.h"
#include "hase/predict/features.h"
#include "hase/predict/probe_emulation.h"
#include "testing.h"

namespace hase::predict {
namespace {

const GpuCatalog& Catalog() {
  static const GpuCatalog catalog = GpuCatalog::Builtin().value();
  return catalog;
}

// A small synthetic data set (300 gemm rows on 3 GPUs): latency = 0.02 ms + 1.3 × roofline.
std::vector<KernelSample> Synthetic(std::vector<const GpuSpec*>* gpus) {
  std::mt19937_64 rng(7);
  std::vector<KernelSample> rows;
  const char* names[] = {"T4", "V100-SXM2-16GB", "A100-SXM4-40GB"};
  for (int i = 0; i < 300; ++i) {
    KernelSample s;
    s.source = "probe";
    s.gpu = names[i % 3];
    s.family = KernelFamily::kGemm;
    s.op = "gemm";
    s.gemm_batch = 1;
    s.gemm_m = 64 << (rng() % 6);
    s.gemm_n = 64 << (rng() % 6);
    s.gemm_k = 64 << (rng() % 6);
    s.where = "synthetic:" + std::to_string(i);
    FillDerived(s);
    const GpuSpec* g = Catalog().Find(s.gpu).value();
    s.latency_ms = 0.02 + 1.3 * FixedRoofline(s, *g).roofline_ms;
    rows.push_back(s);
  }
  auto resolved = ResolveGpus(rows, Catalog());
  *gpus = resolved.value();
  return rows;
}

LearnedTrainOptions Tiny() {
  LearnedTrainOptions o;
  o.rounds = 30;
  o.max_depth = 4;
  o.eta = 0.3;
  return o;
}

TEST(LearnedModelTest, TrainSaveLoadGivesIdenticalPredictions) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = Synthetic(&gpus);
  auto model = LearnedKernelModel::Train(rows, gpus, Tiny());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_TRUE(model->HasFamily(KernelFamily::kGemm));
  EXPECT_FALSE(model->HasFamily(KernelFamily::kConv));
  auto before = model->Predict(rows, gpus);
  ASSERT_TRUE(before.ok());

  const std::string path = ::testing::TempDir() + "/hase_learned_model_test.json.gz";
  ASSERT_TRUE(model->Save(path).ok());
  auto loaded = LearnedKernelModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto after = loaded->Predict(rows, gpus);
  ASSERT_TRUE(after.ok());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ((*before)[i], (*after)[i]) << i;
  // The fit is good on its own training data (a sanity check, not a score).
  double mape = 0;
  for (size_t i = 0; i < rows.size(); ++i) mape += std::fabs((*after)[i] / rows[i].latency_ms - 1);
  EXPECT_LT(mape / rows.size(), 0.05);
  std::remove(path.c_str());
}

TEST(LearnedModelTest, SameSeedSameModel) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = Synthetic(&gpus);
  auto a = LearnedKernelModel::Train(rows, gpus, Tiny());
  auto b = LearnedKernelModel::Train(rows, gpus, Tiny());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->ToJsonText(), b->ToJsonText());
}

TEST(LearnedModelTest, DispatchFloorIsPerGpuWithMedianDefault) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = Synthetic(&gpus);
  auto model = LearnedKernelModel::Train(rows, gpus, Tiny());
  ASSERT_TRUE(model.ok());
  KernelSample s = rows[0];
  const double t4 = model->DispatchFloorMs(s, "T4");
  EXPECT_GT(t4, 0.02);  // the 2nd-percentile latency, above the 0.02 ms constant
  EXPECT_LT(t4, 0.05);
  // A GPU absent from training gets the median of the training GPUs' floors.
  const double other = model->DispatchFloorMs(s, "L4");
  EXPECT_GT(other, 0.02);
  s.source = "unknown";
  EXPECT_EQ(model->DispatchFloorMs(s, "L4"), 0);
}

TEST(LearnedModelTest, DispatchFloorIsCappedAtOneAndAHalfTimesTheFastestCall) {
  // 100 convs per GPU; the 2nd percentile is the 2nd fastest call (nearest rank 2 of 100).
  std::vector<KernelSample> rows;
  const char* names[] = {"T4", "V100-SXM2-16GB"};
  for (int g = 0; g < 2; ++g) {
    for (int i = 0; i < 100; ++i) {
      KernelSample s;
      s.source = "probe";
      s.gpu = names[g];
      s.family = KernelFamily::kConv;
      s.op = "conv2d";
      s.n = 1 + i;
      s.c = s.k = 64;
      s.h = s.w = 14;
      s.r = s.s = 3;
      s.stride_h = s.stride_w = 1;
      s.pad_h = s.pad_w = 1;
      s.where = "synthetic:" + std::to_string(i);
      FillDerived(s);
      // GPU 0: fastest 0.1 ms, 2nd-percentile (rank 2 of 100) 0.4 ms → capped at 0.15 ms.
      // GPU 1: fastest 0.1 ms, 2nd percentile 0.12 ms (a real floor) → 0.12 ms.
      s.latency_ms = i == 0 ? 0.1 : (g == 0 ? 0.4 : 0.12) + 0.01 * (i - 1);
      rows.push_back(s);
    }
  }
  auto gpus = ResolveGpus(rows, Catalog());
  ASSERT_TRUE(gpus.ok());
  auto model = LearnedKernelModel::Train(rows, *gpus, Tiny());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_DOUBLE_EQ(model->DispatchFloorMs(rows[0], "T4"), 0.15);  // min(0.4, 1.5 × 0.1)
  EXPECT_DOUBLE_EQ(model->DispatchFloorMs(rows[0], "V100-SXM2-16GB"), 0.12);
  // A GPU absent from training: the median of the two (nearest rank: the lower one).
  EXPECT_DOUBLE_EQ(model->DispatchFloorMs(rows[0], "L4"), 0.12);
}

TEST(LearnedModelTest, WrongVersionIsRefusedClearly) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = Synthetic(&gpus);
  auto model = LearnedKernelModel::Train(rows, gpus, Tiny());
  ASSERT_TRUE(model.ok());
  std::string text = model->ToJsonText();
  const std::string v = "\"version\":2";
  const size_t at = text.find(v);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, v.size(), "\"version\":99");
  auto bad = LearnedKernelModel::FromJsonText(text, "old.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_NE(bad.status().message().find("version 99"), std::string::npos);
  EXPECT_EQ(bad.status().where(), "old.json");

  auto not_model = LearnedKernelModel::FromJsonText("{\"format\": \"other\"}", "x.json");
  ASSERT_FALSE(not_model.ok());
  EXPECT_TRUE(not_model.status().IsInvalidArgument());
  auto not_json = LearnedKernelModel::FromJsonText("garbage", "g.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_TRUE(not_json.status().IsParse());
}

TEST(LearnedModelTest, UnknownGpuNamesTheRowAndNearestMatches) {
  std::vector<KernelSample> rows(1);
  rows[0].gpu = "Tesla T5";
  rows[0].where = "data.csv:7";
  auto r = ResolveGpus(rows, Catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound());
  EXPECT_NE(r.status().where().find("data.csv:7"), std::string::npos);
  EXPECT_NE(r.status().ToString().find("T4"), std::string::npos);
}

TEST(EvaluationTest, LeaveGpuOutTrainsOneModelPerGpu) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = Synthetic(&gpus);
  EvalOptions o;
  o.split = SplitKind::kLeaveGpuOut;
  o.train = Tiny();
  std::vector<std::string> folds;
  auto r = CrossValidate(rows, gpus, o, [&](const std::string& f) { folds.push_back(f); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(folds, (std::vector<std::string>{"A100-SXM4-40GB", "T4", "V100-SXM2-16GB"}));
  EXPECT_EQ(r->size(), rows.size());  // every row is predicted once, by the model without its GPU
  for (const auto& row : *r) EXPECT_EQ(row.fold, row.gpu->id);
  const std::string report = FormatEvalReport(*r, "t");
  EXPECT_NE(report.find("per GPU"), std::string::npos);
  EXPECT_NE(report.find("per kernel family"), std::string::npos);
}

// Synthetic GEMMs whose achieved fraction of the datasheet FP32 peak differs per GPU:
// latency = 0.02 ms + (flops / (eff × peak)), eff T4 0.5, V100 0.8, A100 0.65.
std::vector<KernelSample> UnequalGpus(std::vector<const GpuSpec*>* gpus) {
  std::vector<KernelSample> rows = Synthetic(gpus);
  for (size_t i = 0; i < rows.size(); ++i) {
    const GpuSpec& g = *(*gpus)[i];
    const double eff = g.id == "T4" ? 0.5 : g.id == "V100-SXM2-16GB" ? 0.8 : 0.65;
    rows[i].latency_ms = 0.02 + rows[i].flops / (eff * g.fp32_tflops * 1e9);
  }
  return rows;
}

TEST(LearnedModelTest, ProbeFiguresNormaliseAndAProfileMovesThePrediction) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = UnequalGpus(&gpus);
  LearnedTrainOptions o = Tiny();
  o.profile_source = "probe";
  auto model = LearnedKernelModel::Train(rows, gpus, o);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // Each training GPU's probe: the largest GEMM (2·2048³ FLOP) reaches just under eff × peak.
  const GpuSpec& t4 = *Catalog().Find("T4").value();
  const NormFigures ft4 = model->FiguresFor(t4);
  EXPECT_NEAR(ft4.fp32_tflops / t4.fp32_tflops, 0.5, 0.02);
  // A GPU absent from training: datasheet × the median efficiency of the training GPUs (A100's
  // ≈ 0.65, a little less: its largest synthetic GEMM pays the 0.02 ms constant).
  const GpuSpec& l4 = *Catalog().Find("L4").value();
  const NormFigures fl4 = model->FiguresFor(l4);
  EXPECT_NEAR(fl4.fp32_tflops / l4.fp32_tflops, 0.65, 0.05);

  // A large compute-bound GEMM on L4: a profile with half the FP32 figure doubles the prediction.
  KernelSample s = rows[0];
  s.gemm_m = s.gemm_n = s.gemm_k = 2048;
  s.flops = s.bytes = 0;
  FillDerived(s);
  NormFigures half = fl4;
  half.fp32_tflops = 0.5 * fl4.fp32_tflops;
  auto p1 = model->Predict({s}, {&l4}, false);
  auto p2 = model->Predict({s}, {&l4}, false, {{l4.id, half}});
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_NEAR((*p2)[0] / (*p1)[0], 2.0, 0.2);
  // The probe figures survive save → load.
  auto loaded = LearnedKernelModel::FromJsonText(model->ToJsonText(), "m.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_DOUBLE_EQ(loaded->FiguresFor(t4).fp32_tflops, ft4.fp32_tflops);
  auto p3 = loaded->Predict({s}, {&l4}, false, {{l4.id, half}});
  ASSERT_TRUE(p3.ok());
  EXPECT_EQ((*p3)[0], (*p2)[0]);

  // A datasheet-trained model ignores figures passed in (it was trained on datasheet peaks).
  auto sheet = LearnedKernelModel::Train(rows, gpus, Tiny());
  ASSERT_TRUE(sheet.ok());
  auto q1 = sheet->Predict({s}, {&l4}, false);
  auto q2 = sheet->Predict({s}, {&l4}, false, {{l4.id, half}});
  ASSERT_TRUE(q1.ok() && q2.ok());
  EXPECT_EQ((*q1)[0], (*q2)[0]);
  EXPECT_DOUBLE_EQ(sheet->FiguresFor(l4).fp32_tflops, l4.fp32_tflops);
}

TEST(LearnedModelTest, FloorProbeScalesTheDefaultFloorOfAnUnseenGpu) {
  // Elementwise adds on 3 GPUs with host floors 0.02 / 0.03 / 0.05 ms + bytes / bandwidth.
  std::vector<KernelSample> rows;
  const char* names[] = {"T4", "V100-SXM2-16GB", "A100-SXM4-40GB"};
  const double floor_ms[] = {0.02, 0.03, 0.05};
  for (int i = 0; i < 300; ++i) {
    KernelSample s;
    s.source = "probe";
    s.gpu = names[i % 3];
    s.family = KernelFamily::kElementwise;
    s.op = "add";
    s.elements = int64_t{1024} << (i % 12);
    s.where = "synthetic:" + std::to_string(i);
    FillDerived(s);
    rows.push_back(s);
  }
  auto gpus = ResolveGpus(rows, Catalog());
  ASSERT_TRUE(gpus.ok());
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].latency_ms = floor_ms[i % 3] + rows[i].bytes / ((*gpus)[i]->memory_bandwidth_gbps * 1e6);
  }
  LearnedTrainOptions o = Tiny();
  o.profile_source = "probe";
  auto model = LearnedKernelModel::Train(rows, *gpus, o);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // The floor probe of each training GPU is its 3 smallest adds ≈ its host floor; the median
  // over GPUs ≈ 0.03 ms. A held-out GPU whose probe reads twice the median gets twice the
  // default floor; without a probe, the default (median) floor.
  const KernelSample& s = rows[0];
  const double dflt = model->DispatchFloorMs(s, "L4");
  EXPECT_NEAR(dflt, 0.03, 0.002);
  std::vector<size_t> v100;
  for (size_t i = 1; i < rows.size(); i += 3) v100.push_back(i);
  const NormFigures probe_v100 = EmulateProbe(rows, v100, *(*gpus)[1], 3).figures;
  ASSERT_EQ(probe_v100.floor_ms.count("probe"), 1u);
  NormFigures slow;
  slow.floor_ms["probe"] = 2 * probe_v100.floor_ms.at("probe");  // V100 is the median GPU
  EXPECT_NEAR(model->DispatchFloorMs(s, "L4", &slow), 2 * dflt, 1e-12);
  // A training GPU keeps its own per-op floor.
  EXPECT_EQ(model->DispatchFloorMs(s, "T4", &slow), model->DispatchFloorMs(s, "T4"));
}

TEST(EvaluationTest, CalibrationRowsAreExcludedFromScoring) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = UnequalGpus(&gpus);
  EvalOptions o;
  o.split = SplitKind::kLeaveGpuOut;
  o.train = Tiny();
  o.calibrate_rows = 2;
  auto refused = CrossValidate(rows, gpus, o, nullptr);  // datasheet-trained: refused
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsInvalidArgument());

  o.train.profile_source = "probe";
  o.train.probe_rows = 2;
  EvalStats stats;
  auto r = CrossValidate(rows, gpus, o, nullptr, &stats);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Each held-out GPU's probe reads its 2 largest fp32 GEMMs (no fp16, no elementwise rows).
  EXPECT_EQ(stats.calibration_rows, 6u);
  EXPECT_EQ(r->size(), rows.size() - 6);
  std::set<std::string> scored;
  for (const auto& row : *r) scored.insert(row.sample.where);
  for (const auto& g : {"T4", "V100-SXM2-16GB", "A100-SXM4-40GB"}) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (gpus[i]->id == g) idx.push_back(i);
    }
    for (size_t i : EmulateProbe(rows, idx, *gpus[idx[0]], 2).rows_used) {
      EXPECT_EQ(scored.count(rows[i].where), 0u) << rows[i].where;
    }
  }

  // Few-shot: 5 more rows per (source, family) of each held-out GPU fit a scale, not scored.
  o.few_shot = 5;
  auto f = CrossValidate(rows, gpus, o, nullptr, &stats);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(stats.few_shot_rows, 15u);
  EXPECT_EQ(f->size(), rows.size() - 6 - 15);
}

TEST(EvaluationTest, ByShapeHoldsOutWholeShapes) {
  std::vector<const GpuSpec*> gpus;
  std::vector<KernelSample> rows = Synthetic(&gpus);
  EvalOptions o;
  o.split = SplitKind::kByShape;
  o.train = Tiny();
  auto r = CrossValidate(rows, gpus, o, nullptr);
  ASSERT_TRUE(r.ok());
  std::set<std::string> test_keys;
  for (const auto& row : *r) test_keys.insert(ShapeKey(row.sample));
  // No test shape appears among training rows: every row of a test shape is in the test set.
  size_t rows_with_test_shape = 0;
  for (const auto& s : rows) rows_with_test_shape += test_keys.count(ShapeKey(s));
  EXPECT_EQ(rows_with_test_shape, r->size());
}

}  // namespace
}  // namespace hase::predict

namespace hase::predict {
namespace {

// The committed default model (data/kernel-model.json.gz, data/README-kernel-model.md) loads
// and reproduces a NeuSight measurement: Tesla T4, Conv2d(64 → 136, 3x3, pad 1) on
// (63, 64, 33, 33), 2.2965 ms (neusight/conv/Tesla T4.csv). The model predicts it within 1 %;
// the test allows 10 %.
TEST(DefaultModelTest, LoadsAndPredictsAKnownKernel) {
  auto model = LearnedKernelModel::Load(hase::testing::SourceDir() + "/data/kernel-model.json.gz");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (KernelFamily f : {KernelFamily::kConv, KernelFamily::kGemm, KernelFamily::kElementwise,
                         KernelFamily::kNormalization}) {
    EXPECT_TRUE(model->HasFamily(f)) << KernelFamilyName(f);
    EXPECT_GT(model->KernelRows(f), 1000u) << KernelFamilyName(f);
  }
  KernelSample s;
  s.source = "neusight";
  s.gpu = "T4";
  s.family = KernelFamily::kConv;
  s.op = "conv2d";
  s.n = 63; s.c = 64; s.h = s.w = 33; s.k = 136; s.r = s.s = 3; s.pad_h = s.pad_w = 1;
  FillDerived(s);
  const GpuSpec* t4 = Catalog().Find("T4").value();
  auto p = model->Predict({s}, {t4});
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR((*p)[0], 2.29651205, 0.10 * 2.29651205);
}

}  // namespace
}  // namespace hase::predict
