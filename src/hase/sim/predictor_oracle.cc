#include "hase/sim/predictor_oracle.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "hase/graph/model_proto_reader.h"
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

Result<std::vector<int64_t>> PredictorOracle::DeclaredInputShape(const std::string& model) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = declared_.find(model); it != declared_.end()) return it->second;
  }
  const std::string path = ModelPath(model);
  Result<std::vector<int64_t>> dims = [&]() -> Result<std::vector<int64_t>> {
    HASE_ASSIGN_OR_RETURN(onnx::ModelProto m, graph::ReadModelProto(path));
    std::set<std::string> inits;
    for (const auto& t : m.graph().initializer()) inits.insert(t.name());
    for (const auto& in : m.graph().input()) {
      if (inits.count(in.name())) continue;
      if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) {
        return Status::InvalidArgument("the first input '" + in.name() + "' of " + path + " has no shape");
      }
      const auto& shape = in.type().tensor_type().shape();
      std::vector<int64_t> out;
      std::string text;
      bool fixed = true;
      for (int i = 1; i < shape.dim_size(); ++i) {  // dim 0 is the batch
        const auto& d = shape.dim(i);
        const bool has = d.has_dim_value() && d.dim_value() > 0;
        fixed = fixed && has;
        out.push_back(has ? d.dim_value() : 0);
        text += (i > 1 ? "x" : "") + (has ? std::to_string(d.dim_value()) : (d.dim_param().empty() ? "?" : d.dim_param()));
      }
      if (!fixed) {
        return Status::InvalidArgument(fmt::format("{} declares input '{}' as {} (not fixed): its input size is not "
                                                   "known", path, in.name(), text));
      }
      return out;
    }
    return Status::InvalidArgument(path + " has no graph input");
  }();
  std::lock_guard<std::mutex> lock(mu_);
  return declared_.emplace(model, std::move(dims)).first->second;
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
      p.isolated_p10_ms *= static_cast<double>(task.num_batches);
      p.isolated_p90_ms *= static_cast<double>(task.num_batches);
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
    ko.input_shape = sched::InputDims(task);  // empty: the model's own dims
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
    po.calibration = options_.calibration.get();
    HASE_ASSIGN_OR_RETURN(ModelLatency ml,
                          PredictModel(**kl, **gpu, LoadSnapshot::Idle(), po));
    sched::TaskProfile p;
    p.isolated_ms = ml.latency_ms;
    p.isolated_p10_ms = ml.latency_p10_ms;
    p.isolated_p90_ms = ml.latency_p90_ms;
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
  p.isolated_p10_ms *= static_cast<double>(task.num_batches);
  p.isolated_p90_ms *= static_cast<double>(task.num_batches);
  if (task.memory_mib > 0) p.memory_mib = task.memory_mib;
  return p;
}

}  // namespace hase::sim
