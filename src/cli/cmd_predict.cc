// `hase predict MODEL.onnx|ZOO_NAME --gpu T4|all [--batch N] [--runtime ort-cuda|ort-cuda-graph|pytorch-eager|
//  tensorrt] [--load k=v,...] [--precision tf32|tf32-conv|fp32|fp16|tensor] [--per-kernel]
//  [--format table|json] [--model FILE] [--profile FILE] [--catalog FILE]
//  [--input-shape 3x224x224] [--input-transfer] [--with B.onnx[:BATCH] ...]`
// Latency per batch (host issue and device timelines composed), throughput, GPU demand and
// (optionally) per-kernel times with the estimator used. With --with: each model's time per
// batch alone and together on one GPU, and its slowdown (sched/contention_model.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
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
#include "hase/predict/runtime_profile.h"
#include "hase/sched/contention_model.h"
#include "hase/sched/task_limits.h"
#include "hase/sim/predictor_oracle.h"

namespace hase::cli {
namespace {

struct PredictFlags {
  std::string onnx;
  std::string gpu;
  int64_t batch = 1;
  std::string input_shape;
  std::string load;
  std::string precision;  // empty = the runtime's default
  std::string runtime = DefaultRuntime().name;
  std::vector<std::string> with;  // co-located models, "path[:batch]"
  bool per_kernel = false;
  std::string format = "table";
  std::string model;
  std::string profile;
  std::string catalog;
  std::string fusion_profile;  // empty = the runtime's
  bool input_transfer = false;
  std::string calibration;     // "" = the saved one if any, "none", or a file
};

nlohmann::json ToJson(const ModelLatency& m, const LoadSnapshot& load, bool per_kernel,
                      const std::string& profile_source) {
  nlohmann::json j = {{"model", m.model},
                      {"gpu", m.gpu},
                      {"runtime", m.runtime},
                      {"precision", PrecisionName(m.precision)},
                      {"batch", m.batch},
                      {"latency_ms", m.latency_ms},
                      {"latency_p10_ms", m.latency_p10_ms},
                      {"latency_p90_ms", m.latency_p90_ms},
                      {"uncalibrated_ms", m.uncalibrated_ms},
                      {"calibration_factor", m.calibration_factor},
                      {"calibrated", m.calibrated},
                      {"throughput_samples_per_s", m.throughput_samples_per_s},
                      {"kernel_ms", m.kernel_ms},
                      {"device_ms", m.device_ms},
                      {"host_ms", m.host_ms},
                      {"idle_ms", m.idle_ms},
                      {"demand", m.demand},
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

// "models/vgg16.onnx:8" → (path, 8); no ":N" → (text, default_batch). A text that names an
// existing file is taken whole (a path may contain ':'). Errors: InvalidArgument for an empty
// text or a suffix after ':' that is not an integer >= 1.
Result<std::pair<std::string, int64_t>> ParseWith(const std::string& text, int64_t default_batch) {
  if (text.empty()) {
    return Status::InvalidArgument("empty model", "--with", "write MODEL.onnx or MODEL.onnx:BATCH");
  }
  const size_t colon = text.rfind(':');
  std::error_code ec;
  if (colon == std::string::npos || std::filesystem::is_regular_file(text, ec)) {
    return std::make_pair(text, default_batch);
  }
  const std::string suffix = text.substr(colon + 1);
  int64_t batch = 0;
  if (!suffix.empty() && suffix.size() <= 18 &&
      suffix.find_first_not_of("0123456789") == std::string::npos) {
    batch = std::stoll(suffix);
  }
  if (batch < 1 || colon == 0) {
    return Status::InvalidArgument("'" + text + "': expected MODEL.onnx or MODEL.onnx:BATCH with "
                                   "BATCH an integer >= 1", "--with");
  }
  return std::make_pair(text.substr(0, colon), batch);
}

struct Colocated {
  ModelLatency alone;
  double slowdown = 1;
  double together_ms = 0;  // per batch
};

// Each model's slowdown beside all the others: s(u_i, Σ_{j≠i} u_j).
std::vector<Colocated> Colocate(const std::vector<ModelLatency>& alone,
                                const sched::ContentionModel& model) {
  double total = 0;
  for (const ModelLatency& m : alone) total += m.demand;
  std::vector<Colocated> out;
  for (const ModelLatency& m : alone) {
    Colocated c;
    c.alone = m;
    c.slowdown = model.Slowdown(m.demand, total - m.demand);
    c.together_ms = m.latency_ms * c.slowdown;
    out.push_back(c);
  }
  return out;
}

nlohmann::json ColocationJson(const std::vector<Colocated>& together,
                              const sched::ContentionModel& model) {
  nlohmann::json models = nlohmann::json::array();
  for (const Colocated& c : together) {
    models.push_back({{"model", c.alone.model},
                      {"batch", c.alone.batch},
                      {"alone_ms", c.alone.latency_ms},
                      {"demand", c.alone.demand},
                      {"together_ms", c.together_ms},
                      {"slowdown", c.slowdown}});
  }
  return {{"kappa", model.kappa}, {"models", models}};
}

// `--gpu all`: the model priced on every GPU type of the catalog (whole GPUs, file order),
// printed fastest first.
int RunAllGpus(const PredictFlags& f, const GpuCatalog& catalog, const KernelList& kl,
               const LoadSnapshot& load, const PredictOptions& opt) {
  struct Row {
    const GpuSpec* gpu;
    ModelLatency m;
    double have_mib;
  };
  std::vector<Row> rows;
  for (const GpuSpec& spec : catalog.gpus()) {
    auto m = PredictModel(kl, spec, load, opt);
    if (!m.ok()) return Fail(m.status().WithContext("--gpu all: " + spec.id));
    rows.push_back({&spec, *m, spec.memory_gib * 1024.0});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.m.latency_ms < b.m.latency_ms; });
  const double need_mib = sim::ModelMemoryNeedMib(kl);
  if (f.format == "json") {
    nlohmann::json gpus = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json j = ToJson(r.m, load, false, "derived from datasheet");
      j["gpu_memory_mib"] = r.have_mib;
      j["fits"] = need_mib <= r.have_mib;
      gpus.push_back(std::move(j));
    }
    nlohmann::json out = {{"model", kl.model},
                          {"batch", rows.empty() ? f.batch : rows.front().m.batch},
                          {"memory_need_mib", need_mib},
                          {"gpus", gpus}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::string out;
  out += fmt::format("model       {}\n", kl.model);
  if (!rows.empty()) {
    out += fmt::format("runtime     {}   batch {}   kernels {}   memory need {:.0f} MiB\n",
                       rows.front().m.runtime, rows.front().m.batch, rows.front().m.kernels.size(),
                       need_mib);
  }
  out += fmt::format("load        sm_active {:.2f}  dram_active {:.2f}\n", load.EffectiveSmActive(),
                     load.EffectiveDramActive());
  out += fmt::format("\n{:<24} {:<10} {:>12} {:>17} {:>12} {:>7}  {}\n", "GPU", "PRECISION", "LATENCY_MS",
                     "P10–P90_MS", "SAMPLES/S", "DEMAND", "MEMORY");
  bool any_no_tf32 = false;
  for (const Row& r : rows) {
    // As the one-GPU table says: TF32 runs as FP32 before compute capability 8.0.
    const bool no_tf32 = (r.m.precision == Precision::kTf32 || r.m.precision == Precision::kTf32Conv) &&
                         r.gpu->tensor_tf32_tflops() <= 0;
    any_no_tf32 |= no_tf32;
    out += fmt::format("{:<24} {:<10} {:>11.3f}{} {:>17} {:>12.1f} {:>7.2f}  {}\n", r.gpu->id,
                       no_tf32 ? std::string("fp32*") : PrecisionName(r.m.precision), r.m.latency_ms,
                       r.m.calibrated ? "c" : " ",
                       fmt::format("{:.3f}–{:.3f}", r.m.latency_p10_ms, r.m.latency_p90_ms),
                       r.m.throughput_samples_per_s, r.m.demand,
                       need_mib <= r.have_mib
                           ? fmt::format("fits ({:.0f} MiB)", r.have_mib)
                           : fmt::format("does not fit ({:.0f} MiB)", r.have_mib));
  }
  if (any_no_tf32) out += "* the runtime's TF32 runs as FP32: no TF32 before compute capability 8.0\n";
  bool any_calibrated = false;
  for (const Row& r : rows) any_calibrated |= r.m.calibrated;
  if (any_calibrated) out += "c calibrated (hase calibrate --show)\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

int Run(const PredictFlags& f) {
  auto catalog = GpuCatalog::Load(f.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  const bool all_gpus = f.gpu == "all";
  if (all_gpus) {
    for (const auto& [flag, set] : {std::pair<const char*, bool>{"--profile", !f.profile.empty()},
                                    {"--with", !f.with.empty()},
                                    {"--per-kernel", f.per_kernel}}) {
      if (set) {
        return Fail(Status::InvalidArgument(std::string(flag) + " needs one GPU type", "--gpu all",
                                            "name one type, e.g. --gpu a100"));
      }
    }
  }
  if (all_gpus && catalog->gpus().empty()) {
    return Fail(Status::InvalidArgument("the catalog has no GPU types", "--gpu all"));
  }
  auto gpu = all_gpus ? Result<const GpuSpec*>(&catalog->gpus().front()) : catalog->Find(f.gpu);
  if (!gpu.ok()) return Fail(gpu.status().WithContext("--gpu"));
  auto load = ParseLoadFlag(f.load);
  if (!load.ok()) return Fail(load.status());
  auto runtime = FindRuntime(f.runtime);
  if (!runtime.ok()) return Fail(runtime.status().WithContext("--runtime"));
  // The batch range of workload files and POST /v1/tasks (sched/task_limits.h).
  if (Status s = sched::CheckTaskField("batch_size", static_cast<double>(f.batch), "--batch");
      !s.ok()) {
    return Fail(s);
  }

  PredictOptions opt;
  opt.runtime = *runtime;
  if (!f.precision.empty()) {
    auto precision = ParsePrecision(f.precision);
    if (!precision.ok()) return Fail(precision.status().WithContext("--precision"));
    opt.precision = *precision;
  }
  if (f.input_transfer) opt.include_input_transfer = true;
  auto calibration = LoadCalibrationFlag(f.calibration);
  if (!calibration.ok()) return Fail(calibration.status());
  opt.calibration = &*calibration;
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
  if (!f.fusion_profile.empty()) opt.runtime.fusion_profile = f.fusion_profile;
  if (!f.input_shape.empty()) {
    auto shape = ParseInputShape(f.input_shape);
    if (!shape.ok()) return Fail(shape.status().WithContext("--input-shape"));
    ko.input_shape = *shape;
  }
  auto onnx = ResolveModelArg(f.onnx);
  if (!onnx.ok()) return Fail(onnx.status());
  auto kl = BuildRuntimeKernelList(*onnx, ko, opt.runtime);
  if (!kl.ok()) return Fail(kl.status());
  for (const auto& w : kl->warnings) std::fprintf(stderr, "hase: warning: %s\n", w.c_str());
  if (all_gpus) return RunAllGpus(f, *catalog, *kl, *load, opt);
  auto m = PredictModel(*kl, **gpu, *load, opt);
  if (!m.ok()) return Fail(m.status());
  // The scheduler's fit check (PredictorOracle's memory need against the GPU's memory): a model
  // that would never be placed on this GPU type is said so, with both figures.
  const double need_mib = sim::ModelMemoryNeedMib(*kl);
  const double have_mib = (*gpu)->memory_gib * 1024.0;
  if (need_mib > have_mib) {
    std::fprintf(stderr,
                 "hase predict: warning: %s at batch %lld needs about %.0f MiB of GPU memory, more than the %s's "
                 "%.0f MiB: it does not fit, and hase serve / simulate would never place it there "
                 "(estimate: %.0f MiB runtime + fp32 weights + the two largest activations; lower --batch)\n",
                 onnx->c_str(), static_cast<long long>(m->batch), need_mib, (*gpu)->id.c_str(), have_mib,
                 sim::kRuntimeOverheadMib);
  }

  // Co-located models: each predicted alone on the same GPU, runtime and load, then slowed by
  // the others' demand.
  std::vector<ModelLatency> alone = {*m};
  for (const std::string& w : f.with) {
    auto parsed = ParseWith(w, f.batch);
    if (!parsed.ok()) return Fail(parsed.status());
    if (Status s = sched::CheckTaskField("batch_size", static_cast<double>(parsed->second),
                                         "--with " + w);
        !s.ok()) {
      return Fail(s);
    }
    KernelListOptions wo = ko;
    wo.batch = parsed->second;
    wo.input_shape.clear();
    auto wpath = ResolveModelArg(parsed->first);
    if (!wpath.ok()) return Fail(wpath.status().WithContext("--with"));
    auto wkl = BuildRuntimeKernelList(*wpath, wo, opt.runtime);
    if (!wkl.ok()) return Fail(wkl.status().WithContext("--with"));
    auto wm = PredictModel(*wkl, **gpu, *load, opt);
    if (!wm.ok()) return Fail(wm.status().WithContext("--with"));
    alone.push_back(*wm);
  }
  const std::vector<Colocated> together = Colocate(alone, sched::ContentionModel{});

  if (f.format == "json") {
    nlohmann::json j = ToJson(*m, *load, f.per_kernel, profile_source);
    j["memory_need_mib"] = need_mib;
    j["gpu_memory_mib"] = have_mib;
    if (!f.with.empty()) j["colocation"] = ColocationJson(together, sched::ContentionModel{});
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::string out;
  out += fmt::format("model       {}\n", m->model);
  out += fmt::format("gpu         {} ({})\n", (*gpu)->id, (*gpu)->name);
  const bool no_tf32 = (m->precision == Precision::kTf32 || m->precision == Precision::kTf32Conv) &&
                      (*gpu)->tensor_tf32_tflops() <= 0;
  out += fmt::format("runtime     {}   precision {}{}   batch {}   kernels {}\n", m->runtime,
                     PrecisionName(m->precision),
                     no_tf32 ? " (runs as fp32: no TF32 before compute capability 8.0)" : "",
                     m->batch, m->kernels.size());
  out += fmt::format("load        sm_active {:.2f}  dram_active {:.2f}\n",
                     load->EffectiveSmActive(), load->EffectiveDramActive());
  out += fmt::format("profile     {}\n", profile_source);
  if (m->calibrated) {
    out += fmt::format("latency     {:.3f} ms per batch, p10–p90 {:.3f}–{:.3f} (calibrated: {:.3f} ms predicted x "
                       "{:.3f}, {})\n",
                       m->latency_ms, m->latency_p10_ms, m->latency_p90_ms, m->uncalibrated_ms,
                       m->calibration_factor, calibration->source);
    out += fmt::format("predicted   {:.3f} ms = kernels {:.3f} + sync {:.3f} + transfer {:.3f}\n",
                       m->uncalibrated_ms, m->kernel_ms, m->sync_ms, m->transfer_ms);
  } else {
    out += fmt::format("latency     {:.3f} ms per batch, p10–p90 {:.3f}–{:.3f} (kernels {:.3f} + sync {:.3f} + "
                       "transfer {:.3f}; not calibrated for this GPU type x runtime)\n",
                       m->latency_ms, m->latency_p10_ms, m->latency_p90_ms, m->kernel_ms, m->sync_ms,
                       m->transfer_ms);
  }
  out += fmt::format("throughput  {:.1f} samples/s\n", m->throughput_samples_per_s);
  out += fmt::format("timelines   host issue {:.3f} ms, GPU busy {:.3f} ms, GPU idle waiting for the "
                     "host {:.3f} ms\n",
                     m->host_ms, m->device_ms, m->idle_ms);
  out += fmt::format("demand      {:.2f} of the GPU ({})\n", m->demand,
                     m->idle_ms > m->device_ms ? "host-bound: the GPU waits for kernel launches"
                                               : "device-bound");
  if (f.per_kernel) {
    out += fmt::format("\n{:>4}  {:<36} {:<14} {:>11} {:>11}  {}\n", "#", "KERNEL", "FAMILY",
                       "DEVICE_MS", "EFFECT_MS", "ESTIMATOR");
    for (const auto& k : m->kernels) {
      out += fmt::format("{:>4}  {:<36} {:<14} {:>11.4f} {:>11.4f}  {}\n", k.index,
                         k.type.size() > 36 ? k.type.substr(0, 35) + "~" : k.type,
                         KernelFamilyName(k.family), k.device_ms, k.effective_ms, k.estimator);
    }
  }
  if (!f.with.empty()) {
    out += fmt::format("\nco-located on one {} (contention model kappa {:.2f}, "
                       "sched/contention_model.h)\n",
                       (*gpu)->id, sched::ContentionModel{}.kappa);
    out += fmt::format("{:<28} {:>6} {:>11} {:>7} {:>13} {:>9}\n", "MODEL", "BATCH", "ALONE_MS",
                       "DEMAND", "TOGETHER_MS", "SLOWDOWN");
    for (const Colocated& c : together) {
      const std::string name = c.alone.model.size() > 28 ? "~" + c.alone.model.substr(c.alone.model.size() - 27) : c.alone.model;
      out += fmt::format("{:<28} {:>6} {:>11.3f} {:>7.2f} {:>13.3f} {:>9.3f}\n", name,
                         c.alone.batch, c.alone.latency_ms, c.alone.demand, c.together_ms,
                         c.slowdown);
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
  c.app->add_option("model_onnx", f->onnx, "ONNX model file or zoo model name (resnet50, yolov8n, …)")->required();
  c.app->add_option("--gpu", f->gpu, "GPU type (any name `hase gpus` resolves: T4, a100, …), or 'all': every catalog type, fastest first")
      ->required();
  c.app->add_option("--batch", f->batch, "batch size (default 1)");
  c.app->add_option("--input-shape", f->input_shape,
                    "first input's dims other than the batch, in order, e.g. 3x160x160 (default: the model's)");
  c.app->add_option("--load", f->load,
                    "background load in DCGM terms, e.g. sm_active=0.6,dram_active=0.4 "
                    "(default idle)");
  c.app->add_option("--runtime", f->runtime,
                    "ort-cuda (default), ort-cuda-graph, pytorch-eager or tensorrt: kernels, host "
                    "costs, copies and default precision (docs/predictor.md)");
  c.app->add_option("--precision", f->precision, "tf32 (TF32 tensor cores on Ampere+), tf32-conv (PyTorch: conv TF32, matmul FP32), fp32 (no TF32), fp16 (FP16 on CUDA cores, no tensor cores), or tensor (FP16 + tensor cores: what fp16 inference usually runs); default: the runtime's");
  c.app->add_option("--with", f->with,
                    "co-locate another model on the same GPU: B.onnx[:BATCH] (repeatable; BATCH "
                    "defaults to --batch; same runtime and precision); prints each model's time "
                    "alone and together");
  c.app->add_flag("--per-kernel", f->per_kernel, "print each kernel's time and estimator");
  c.app->add_option("--format", f->format, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  c.app->add_option("--model", f->model, "learned kernel model file (default: analytic only)");
  c.app->add_option("--profile", f->profile,
                    "microbenchmark profile of the GPU (docs/microbenchmark-profile.md)");
  c.app->add_option("--catalog", f->catalog, "GPU catalog YAML (default: built-in)");
  c.app->add_option("--fusion-profile", f->fusion_profile, "ort-cuda, ort-cpu, none (default: the runtime's)");
  c.app->add_option("--calibration", f->calibration,
                    "calibration file (hase calibrate), or 'none' (default: the saved one when it exists)");
  c.app->add_flag("--input-transfer", f->input_transfer,
                  "add the host-to-device copy of the inputs to the latency");
  c.run = [f] { return Run(*f); };
  return c;
}

}  // namespace hase::cli
