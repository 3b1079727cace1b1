// LatencyCalibration (predict/latency_calibration.h), MeasuredRun CSVs (predict/measured_run.h)
// and `hase calibrate` end to end: fit from a CSV, saved file, used by `hase predict`.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hase/predict/latency_calibration.h"
#include "hase/predict/measured_run.h"
#include "testing.h"

namespace hase {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("hase_calibration_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(FitCalibration, FactorIsTheMeanOfPerModelLogRatios) {
  // Model a: measured 2x predicted at two batch sizes; b: 1.5x; c: 1.2x. Each model counts once:
  // factor = exp((ln 2 + ln 1.5 + ln 1.2) / 3) = 1.5326.
  std::vector<CalibrationPoint> pts = {{"a", "T4", "pytorch-eager", 1.0, 2.0},
                                       {"a", "T4", "pytorch-eager", 4.0, 8.0},
                                       {"b", "T4", "pytorch-eager", 2.0, 3.0},
                                       {"c", "T4", "pytorch-eager", 5.0, 6.0}};
  auto cal = FitCalibration(pts);
  ASSERT_TRUE(cal.ok()) << cal.status().ToString();
  const CalibrationEntry* e = cal->Find("T4", "pytorch-eager");
  ASSERT_NE(e, nullptr);
  EXPECT_NEAR(e->factor, std::exp((std::log(2.0) + std::log(1.5) + std::log(1.2)) / 3), 1e-9);
  EXPECT_EQ(e->runs, 4);
  EXPECT_EQ(e->models, 3);
  EXPECT_EQ(cal->Find("T4", "ort-cuda"), nullptr);  // per runtime
  // sigma: prior 0.13 with weight 4, plus the residuals around ln factor, over 4 + 4 - 1.
  const double lf = std::log(e->factor);
  double ss = 4 * 0.13 * 0.13;
  for (double r : {std::log(2.0), std::log(2.0), std::log(1.5), std::log(1.2)}) ss += (r - lf) * (r - lf);
  EXPECT_NEAR(e->sigma, std::sqrt(ss / 7), 1e-9);

  const CalibratedLatency c = cal->Apply(10.0, "T4", "pytorch-eager");
  EXPECT_TRUE(c.calibrated);
  EXPECT_NEAR(c.latency_ms, 10.0 * e->factor, 1e-9);
  EXPECT_NEAR(c.p10_ms, c.latency_ms * std::exp(-LatencyCalibration::kZ80 * e->sigma), 1e-9);
  EXPECT_NEAR(c.p90_ms, c.latency_ms * std::exp(LatencyCalibration::kZ80 * e->sigma), 1e-9);
  const CalibratedLatency u = cal->Apply(10.0, "A100-SXM4-40GB", "pytorch-eager");  // no entry
  EXPECT_FALSE(u.calibrated);
  EXPECT_DOUBLE_EQ(u.latency_ms, 10.0);
  EXPECT_NEAR(u.p10_ms, 10.0 * std::exp(-0.13), 1e-9);
  EXPECT_NEAR(u.p90_ms, 10.0 * std::exp(0.78), 1e-9);
}

TEST(FitCalibration, FactorIsBounded) {
  auto cal = FitCalibration({{"a", "P100-PCIE-16GB", "pytorch-eager", 1.0, 7.0}});
  ASSERT_TRUE(cal.ok());
  const CalibrationEntry* e = cal->Find("P100-PCIE-16GB", "pytorch-eager");
  EXPECT_DOUBLE_EQ(e->factor, LatencyCalibration::kMaxFactor);
  EXPECT_NEAR(e->raw_factor, 7.0, 1e-9);
}

TEST(FitCalibration, Errors) {
  EXPECT_TRUE(FitCalibration({}).status().IsInvalidArgument());
  auto bad = FitCalibration({{"resnet50", "T4", "ort-cuda", 1.0, 0.0}});
  ASSERT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_NE(bad.status().ToString().find("resnet50 on T4"), std::string::npos) << bad.status().ToString();
  // A row 1e9 ms where 12 ms is predicted is a unit mix-up: refused, not saved as a sigma of 7
  // that every later command would refuse to load.
  auto far = FitCalibration({{"resnet50", "T4", "ort-cuda", 12.0, 8.0}, {"vgg16", "T4", "ort-cuda", 12.0, 1e9}});
  ASSERT_TRUE(far.status().IsInvalidArgument());
  EXPECT_NE(far.status().ToString().find("vgg16 on T4"), std::string::npos) << far.status().ToString();
  EXPECT_NE(far.status().ToString().find("more than 10x"), std::string::npos) << far.status().ToString();
  // Up to 10x either way fits, and what it writes loads again.
  auto edge = FitCalibration({{"a", "T4", "ort-cuda", 10.0, 99.0}, {"b", "T4", "ort-cuda", 10.0, 1.01}});
  ASSERT_TRUE(edge.ok()) << edge.status().ToString();
  const std::string path = ::testing::TempDir() + "edge_calibration.json";
  ASSERT_TRUE(SaveCalibration(*edge, path).ok());
  EXPECT_TRUE(LoadCalibration(path).ok());
}

TEST(CalibrationFile, SaveLoadRoundTripAndErrors) {
  auto cal = FitCalibration({{"a", "T4", "tensorrt", 2.0, 3.0}});
  ASSERT_TRUE(cal.ok());
  const std::string path = TempPath("sub/dir/calibration.json");
  ASSERT_TRUE(SaveCalibration(*cal, path).ok());
  auto back = LoadCalibration(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->source, path);
  EXPECT_NEAR(back->Find("T4", "tensorrt")->factor, 1.5, 1e-12);
  EXPECT_EQ(back->Find("T4", "tensorrt")->models, 1);

  EXPECT_TRUE(LoadCalibration(TempPath("absent.json")).status().IsNotFound());
  const std::string out_of_bounds = TempPath("oob.json");
  Write(out_of_bounds, R"({"version": 1, "entries": [{"gpu": "T4", "runtime": "ort-cuda", "factor": 9, "sigma": 0.1}]})");
  auto oob = LoadCalibration(out_of_bounds);
  ASSERT_TRUE(oob.status().IsParse());
  EXPECT_NE(oob.status().ToString().find("factor 9 outside [0.5, 2]"), std::string::npos) << oob.status().ToString();
  const std::string garbage = TempPath("garbage.json");
  Write(garbage, "not json");
  EXPECT_TRUE(LoadCalibration(garbage).status().IsParse());
  EXPECT_TRUE(LoadCalibrationFlag("none")->empty());
  EXPECT_TRUE(LoadCalibrationFlag(TempPath("absent.json")).status().IsNotFound());
}

TEST(MeasuredRuns, ReadsRowsAndNamesTheBadLine) {
  const std::string good = TempPath("runs.csv");
  Write(good, "# measured on one box\nmodel,gpu,batch,latency_ms,runtime,precision,input_shape\n"
              "resnet50,A100-SXM4-40GB,8,5.1,pytorch-eager,,3x224x224\nvgg16,T4,1,7.5,,,\n");
  auto runs = ReadMeasuredRuns(good);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].batch, 8);
  EXPECT_EQ((*runs)[0].input_shape, (std::vector<int64_t>{3, 224, 224}));
  EXPECT_DOUBLE_EQ((*runs)[1].latency_ms, 7.5);
  EXPECT_EQ((*runs)[1].runtime, "");

  const std::string bad = TempPath("bad.csv");
  Write(bad, "model,gpu,batch,latency_ms\nresnet50,T4,1,fast\n");
  auto r = ReadMeasuredRuns(bad);
  ASSERT_TRUE(r.status().IsParse());
  EXPECT_NE(r.status().ToString().find(bad + ":2"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("latency_ms must be a number > 0"), std::string::npos);
  const std::string no_col = TempPath("nocol.csv");
  Write(no_col, "model,batch,latency_ms\nresnet50,1,3\n");
  EXPECT_NE(ReadMeasuredRuns(no_col).status().ToString().find("no 'gpu' column"), std::string::npos);
}

// hase-probe's --model-out CSV: idle rows only; stream → tensorrt, graph → ort-cuda-graph (NaN
// when graph capture failed: no run).
TEST(MeasuredRuns, ReadsHaseProbeModelCsv) {
  const std::string path = TempPath("probe_models.csv");
  Write(path,
        "gpu,model,batch,load_level,kernels,kernels_timed,sum_kernel_median_ms,stream_median_ms,graph_median_ms,"
        "stream_over_sum,graph_over_sum\n"
        "NVIDIA A100-SXM4-40GB,resnet50,8,idle,57,57,1.5,1.7,1.6,1.13,1.07\n"
        "NVIDIA A100-SXM4-40GB,resnet50,8,sm_0.5,57,57,1.5,2.7,2.6,1.8,1.7\n"
        "NVIDIA A100-SXM4-40GB,vgg16,1,idle,20,20,1.0,1.2,nan,1.2,nan\n");
  auto runs = ReadMeasuredRuns(path);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].model, "resnet50");
  EXPECT_EQ((*runs)[0].runtime, "tensorrt");
  EXPECT_DOUBLE_EQ((*runs)[0].latency_ms, 1.7);
  EXPECT_EQ((*runs)[1].runtime, "ort-cuda-graph");
  EXPECT_DOUBLE_EQ((*runs)[1].latency_ms, 1.6);
  EXPECT_EQ((*runs)[2].model, "vgg16");
  EXPECT_EQ((*runs)[2].runtime, "tensorrt");
  EXPECT_EQ((*runs)[2].batch, 1);
}

// `hase calibrate` fits from a CSV and saves; `hase predict --calibration FILE` then applies it.
TEST(CalibrateCli, FitSaveAndPredictUsesIt) {
  using testing::RunCommand;
  const std::string hase = testing::HaseBin();
  const std::string models = testing::SourceDir() + "/models";
  const std::string rows = TempPath("measured.csv");
  const std::string out = TempPath("cal.json");
  // Uncalibrated predictions first (the factor is measured / predicted).
  auto pred = [&](const std::string& model, const std::string& extra) {
    auto r = RunCommand(hase + " predict " + models + "/" + model + ".onnx --gpu T4 --batch 4 --runtime pytorch-eager "
                        "--format json " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const double r18 = pred("resnet18", "--calibration none")["latency_ms"].get<double>();
  const double vgg = pred("vgg11", "--calibration none")["latency_ms"].get<double>();
  Write(rows, "model,gpu,batch,latency_ms,runtime\nresnet18,T4,4," + std::to_string(1.2 * r18) +
                  ",pytorch-eager\nvgg11,T4,4," + std::to_string(1.2 * vgg) + ",pytorch-eager\n");
  auto fit = RunCommand(hase + " calibrate " + rows + " --models " + models + " --out " + out + " --format json");
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  auto j = nlohmann::json::parse(fit.out);
  ASSERT_EQ(j["entries"].size(), 1u);
  EXPECT_EQ(j["entries"][0]["gpu"], "T4");
  EXPECT_EQ(j["entries"][0]["runtime"], "pytorch-eager");
  EXPECT_NEAR(j["entries"][0]["factor"].get<double>(), 1.2, 1e-3);

  auto p = pred("resnet50", "--calibration " + out);
  EXPECT_TRUE(p["calibrated"].get<bool>());
  EXPECT_NEAR(p["calibration_factor"].get<double>(), 1.2, 1e-3);
  EXPECT_NEAR(p["latency_ms"].get<double>(), 1.2 * p["uncalibrated_ms"].get<double>(), 1e-6);
  EXPECT_LT(p["latency_p10_ms"].get<double>(), p["latency_ms"].get<double>());
  EXPECT_GT(p["latency_p90_ms"].get<double>(), p["latency_ms"].get<double>());
  // Another runtime on the same GPU type has no entry: uncalibrated, with the built-in interval.
  auto other = RunCommand(hase + " predict " + models + "/resnet50.onnx --gpu T4 --format json --calibration " + out);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_FALSE(nlohmann::json::parse(other.out)["calibrated"].get<bool>());

  // Bad input: one clear error, non-zero exit.
  auto missing = RunCommand(hase + " predict " + models + "/resnet50.onnx --gpu T4 --calibration " + TempPath("nope.json"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("no calibration file"), std::string::npos) << missing.err;
  auto nothing = RunCommand(hase + " calibrate");
  EXPECT_NE(nothing.exit_code, 0);
  EXPECT_NE(nothing.err.find("nothing to do"), std::string::npos) << nothing.err;
}

}  // namespace
}  // namespace hase
