// `hase predict MODEL.onnx --gpu T4 [--batch N] [--load k=v,...] [--precision tf32|fp32|fp16|tensor]
//  [--per-kernel] [--format table|json] [--model FILE] [--profile FILE] [--catalog FILE]
//  [--input-shape 3x224x224] [--input-transfer]`
// Latency per batch, throughput and (optionally) per-kernel times with the estimator used.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "hase/hw/gpu_catalog.h"
#include "hase/hw/microbenchmark_profile.h"
#include "hase/kernels/kernel_list_builder.h"
#include "hase/predict/analytic_estimator.h"
#include "hase/predict/load_flag.h"
#include "hase/predict/learned_estimator.h"
#include "hase/predict/predict_model.h"

namespace hase::cli {
namespace {

struct PredictFlags {
  std::string onnx;
  std::string gpu;
  int64_t batch = 1;
  std::string input_shape;
  std::string load;
  std::string precision = PrecisionName(kDefaultPrecision);
  bool per_kernel = false;
  std::string format = "table";
  std::string model;
  std::string profile;
  std::string catalog;
  std::string fusion_profile = "ort-cuda";
  bool input_transfer = false;
};

nlohmann::json ToJson(const ModelLatency& m, const LoadSnapshot& load, bool per_kernel,
                      const std::string& profile_source) {
  nlohmann::json j = {{"model", m.model},
                      {"gpu", m.gpu},
                      {"precision", PrecisionName(m.precision)},
                      {"batch", m.batch},
                      {"latency_ms", m.latency_ms},
                      {"throughput_samples_per_s", m.throughput_samples_per_s},
                      {"kernel_ms", m.kernel_ms},
                      {"sync_ms", m.sync_ms},
                      {"transfer_ms", m.transfer_ms},
                      {"kernels", m.kernels.size()},
                      {"fallback_kernels", m.fallback_kernels},
                      {"profile", profile_source},
                      {"load",
                       {{"sm_active", load.EffectiveSmActive()},
                        {"dram_active", load.EffectiveDramActive()}}}};
  if (per_kernel) {
    nlohmann::json ks = nlohmann::json::array();
    for (const auto& k : m.kernels) {
      ks.push_back({{"index", k.index},
                    {"type", k.type},
                    {"family", KernelFamilyName(k.family)},
                    {"device_ms", k.device_ms},
                    {"effective_ms", k.effective_ms},
                    {"estimator", k.estimator}});
    }
    j["per_kernel"] = ks;
  }
  return j;
}

int Run(const PredictFlags& f) {
  auto catalog = GpuCatalog::Load(f.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  auto gpu = catalog->Find(f.gpu);
  if (!gpu.ok()) return Fail(gpu.status().WithContext("--gpu"));
  auto load = ParseLoadFlag(f.load);
  if (!load.ok()) return Fail(load.status());
  auto precision = ParsePrecision(f.precision);
  if (!precision.ok()) return Fail(precision.status().WithContext("--precision"));
  if (f.batch < 1) {
    return Fail(Status::InvalidArgument("--batch must be >= 1", "--batch"));
  }

  PredictOptions opt;
  opt.precision = *precision;
  opt.include_input_transfer = f.input_transfer;
  std::string profile_source = "derived from datasheet";
  if (!f.profile.empty()) {
    auto p = LoadMicrobenchmarkProfile(f.profile, *catalog);
    if (!p.ok()) return Fail(p.status());
    if (p->gpu != (*gpu)->id) {
      return Fail(Status::InvalidArgument(
          "profile is for " + p->gpu + ", not " + (*gpu)->id, f.profile,
          "pass a profile measured on the --gpu type"));
    }
    profile_source = p->source;
    opt.profile = *p;
  }
  // Learned kernel model (docs/predictor-learned.md); families it does not cover fall back to
  // the analytic estimator inside PredictModel. Must outlive PredictModel below.
  std::unique_ptr<predict::LearnedEstimator> learned;
  if (!f.model.empty()) {
    auto est = predict::LearnedEstimator::Load(f.model);
    if (!est.ok()) return Fail(est.status());
    learned = std::move(est).value();
    opt.estimator = learned.get();
  }

  KernelListOptions ko;
  ko.batch = f.batch;
  ko.profile = f.fusion_profile;
  if (!f.input_shape.empty()) {
    auto shape = ParseInputShape(f.input_shape);
    if (!shape.ok()) return Fail(shape.status().WithContext("--input-shape"));
    ko.input_shape = *shape;
  }
  auto kl = BuildKernelList(f.onnx, ko);
  if (!kl.ok()) return Fail(kl.status());
  auto m = PredictModel(*kl, **gpu, *load, opt);
  if (!m.ok()) return Fail(m.status());

  if (f.format == "json") {
    std::printf("%s\n", ToJson(*m, *load, f.per_kernel, profile_source).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::string out;
  out += fmt::format("model       {}\n", m->model);
  out += fmt::format("gpu         {} ({})\n", (*gpu)->id, (*gpu)->name);
  out += fmt::format("precision   {}   batch {}   kernels {}\n", PrecisionName(m->precision),
                     m->batch, m->kernels.size());
  out += fmt::format("load        sm_active {:.2f}  dram_active {:.2f}\n",
                     load->EffectiveSmActive(), load->EffectiveDramActive());
  out += fmt::format("profile     {}\n", profile_source);
  out += fmt::format("latency     {:.3f} ms per batch (kernels {:.3f} + sync {:.3f} + transfer "
                     "{:.3f})\n",
                     m->latency_ms, m->kernel_ms, m->sync_ms, m->transfer_ms);
  out += fmt::format("throughput  {:.1f} samples/s\n", m->throughput_samples_per_s);
  if (f.per_kernel) {
    out += fmt::format("\n{:>4}  {:<36} {:<14} {:>11} {:>11}  {}\n", "#", "KERNEL", "FAMILY",
                       "DEVICE_MS", "EFFECT_MS", "ESTIMATOR");
    for (const auto& k : m->kernels) {
      out += fmt::format("{:>4}  {:<36} {:<14} {:>11.4f} {:>11.4f}  {}\n", k.index,
                         k.type.size() > 36 ? k.type.substr(0, 35) + "~" : k.type,
                         KernelFamilyName(k.family), k.device_ms, k.effective_ms, k.estimator);
    }
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

Command AddPredictCommand(CLI::App& parent) {
  auto f = std::make_shared<PredictFlags>();
  Command c;
  c.app = parent.add_subcommand("predict", "Predict a model's latency and throughput on a GPU type");
  c.app->add_option("model_onnx", f->onnx, "ONNX model file")->required();
  c.app->add_option("--gpu", f->gpu, "GPU type (any name `hase gpus` resolves: T4, a100, …)")
      ->required();
  c.app->add_option("--batch", f->batch, "batch size (default 1)");
  c.app->add_option("--input-shape", f->input_shape,
                    "first input's dims after batch, e.g. 3x160x160 (default: the model's)");
  c.app->add_option("--load", f->load,
                    "background load in DCGM terms, e.g. sm_active=0.6,dram_active=0.4 "
                    "(default idle)");
  c.app->add_option("--precision", f->precision, "tf32 (default: ORT CUDA EP, TF32 tensor cores on Ampere+), fp32 (no TF32), fp16, or tensor (FP16 + tensor cores)");
  c.app->add_flag("--per-kernel", f->per_kernel, "print each kernel's time and estimator");
  c.app->add_option("--format", f->format, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  c.app->add_option("--model", f->model, "learned kernel model file (default: analytic only)");
  c.app->add_option("--profile", f->profile,
                    "microbenchmark profile of the GPU (docs/microbenchmark-profile.md)");
  c.app->add_option("--catalog", f->catalog, "GPU catalog YAML (default: built-in)");
  c.app->add_option("--fusion-profile", f->fusion_profile, "ort-cuda (default), ort-cpu, none");
  c.app->add_flag("--input-transfer", f->input_transfer,
                  "add the host-to-device copy of the inputs to the latency");
  c.run = [f] { return Run(*f); };
  return c;
}

}  // namespace hase::cli
