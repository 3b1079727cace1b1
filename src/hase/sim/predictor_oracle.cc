#include "hase/sim/predictor_oracle.h"

#include <algorithm>

#include <fmt/format.h>

#include "hase/kernels/kernel_list_builder.h"
#include "hase/predict/predict_model.h"

namespace hase::sim {

double ModelMemoryNeedMib(const KernelList& list) {
  double peak_act = 0;
  for (const Kernel& k : list.kernels) {
    peak_act = std::max(peak_act, static_cast<double>(k.activation_bytes_read + k.bytes_written));
  }
  return kRuntimeOverheadMib + (4.0 * static_cast<double>(list.total_parameters()) + 2.0 * peak_act) / (1024.0 * 1024.0);
}

Status SetRuntimeAndPrecision(const std::string& runtime, const std::string& precision,
                              PredictorOracleOptions& options) {
  if (!precision.empty()) {
    Result<Precision> p = ParsePrecision(precision);
    if (!p.ok()) return p.status().WithContext("--precision");
    options.precision = *p;
  }
  Result<RuntimeProfile> rt = FindRuntime(runtime);
  if (!rt.ok()) return rt.status().WithContext("--runtime");
  options.runtime = *rt;
  return Status::OK();
}

std::string PredictorOracle::ModelPath(const std::string& model) const {
  if (model.size() > 5 && model.substr(model.size() - 5) == ".onnx") return model;
  return options_.models_dir + "/" + model + ".onnx";
}

Result<sched::TaskProfile> PredictorOracle::Profile(const sched::Task& task,
                                                    const sched::GpuType& type) const {
  const std::string key = sched::ProfileKey(task);
  std::shared_ptr<const Result<KernelList>> kl;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto hit = per_batch_.find({key, type.name});
    if (hit != per_batch_.end()) {
      if (!hit->second.ok()) return hit->second.status();
      sched::TaskProfile p = *hit->second;
      p.isolated_ms *= static_cast<double>(task.num_batches);
      if (task.memory_mib > 0) p.memory_mib = task.memory_mib;
      return p;
    }
    auto it = kernels_.find(key);
    if (it != kernels_.end()) kl = it->second;
  }
  RuntimeProfile runtime = options_.runtime;
  if (!task.runtime.empty()) {
    Result<RuntimeProfile> rt = FindRuntime(task.runtime);
    if (!rt.ok()) return rt.status().WithContext("task " + task.name);
    runtime = *rt;
  }
  if (!kl) {
    KernelListOptions ko;
    ko.batch = task.batch_size;
    ko.input_shape = {3, task.input_size, task.input_size};
    Result<KernelList> built = BuildRuntimeKernelList(ModelPath(task.model), ko, runtime);
    kl = std::make_shared<const Result<KernelList>>(
        built.ok() ? std::move(built) : Result<KernelList>(built.status().WithContext(
                                            "model " + task.model)));
    std::lock_guard<std::mutex> lock(mu_);
    kernels_.emplace(key, kl);
  }
  Result<sched::TaskProfile> per_batch = [&]() -> Result<sched::TaskProfile> {
    if (!kl->ok()) return kl->status();
    Result<const GpuSpec*> gpu = catalog_.Find(type.name);
    if (!gpu.ok()) return gpu.status();
    PredictOptions po;
    po.runtime = runtime;
    po.precision = options_.precision;
    HASE_ASSIGN_OR_RETURN(ModelLatency ml,
                          PredictModel(**kl, **gpu, LoadSnapshot::Idle(), po));
    sched::TaskProfile p;
    p.isolated_ms = ml.latency_ms;
    p.demand = std::clamp(ml.demand, 0.01, 1.0);
    p.memory_mib = ModelMemoryNeedMib(**kl);
    return p;
  }();
  {
    std::lock_guard<std::mutex> lock(mu_);
    per_batch_.emplace(std::make_pair(key, type.name), per_batch);
  }
  if (!per_batch.ok()) return per_batch.status();
  sched::TaskProfile p = *per_batch;
  p.isolated_ms *= static_cast<double>(task.num_batches);
  if (task.memory_mib > 0) p.memory_mib = task.memory_mib;
  return p;
}

}  // namespace hase::sim
