#include "kernel_timing.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "child_process.h"
#include "csv.h"
#include "cuda_status.h"
#include "event_timer.h"
#include "gpu_context.h"
#include "kernel_list_json.h"
#include "load_sampler.h"
#include "model_runner.h"
#include "nvml_device.h"
#include "training_row.h"

namespace hase::probe::gpu {
namespace {

constexpr size_t kConvWorkspaceBytes = 512u << 20;

std::vector<std::string> ModelHeader() {
  std::vector<std::string> h = {"gpu", "model", "batch", "load_level", "kernels",
                                "kernels_timed", "sum_kernel_median_ms", "stream_median_ms",
                                "graph_median_ms", "stream_over_sum", "graph_over_sum"};
  for (const auto& f : DcgmFieldNames()) h.push_back(f);
  return h;
}

std::vector<std::string> LoadHeader() {
  std::vector<std::string> h = {"gpu", "load_level", "model", "t_s"};
  for (const auto& f : DcgmFieldNames()) h.push_back(f);
  return h;
}

void AppendDcgm(const NvmlReading& r, std::vector<std::string>* row) {
  for (const auto& v : DcgmValues(r)) row->push_back(v ? FormatNumber(*v) : "");
}

// Whole-model time as one CUDA graph; NaN when capture is not possible.
double GraphMedianMs(GpuContext& ctx, const ModelRunner& runner, int reps) {
  cudaStream_t s = ctx.stream();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nan("");
  }
  Status launched = runner.LaunchAll();
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  double result = std::nan("");
  if (launched.ok() && end == cudaSuccess &&
      cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    auto ms = TimeOnStream(s, 2, reps, [&] {
      return CudaStatus(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
    });
    if (ms.ok()) {
      auto m = Median(*ms);
      if (m.ok()) result = *m;
    }
  } else {
    std::fprintf(stderr, "hase-probe: CUDA graph capture failed (%s); graph time left empty\n",
                 launched.ok() ? cudaGetErrorString(end) : launched.ToString().c_str());
  }
  (void)cudaGetLastError();
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  return result;
}

}  // namespace

Status RunKernelTiming(const ProbeOptions& o, const std::string& self_exe) {
  std::vector<KernelList> lists;
  for (const auto& f : o.kernel_files) {
    HASE_ASSIGN_OR_RETURN(KernelList l, LoadKernelListJson(f));
    if (l.model.empty()) l.model = f;
    lists.push_back(std::move(l));
  }
  HASE_ASSIGN_OR_RETURN(auto ctx, GpuContext::Create(o.device, kConvWorkspaceBytes));
  const std::string gpu = ctx->props().name;

  std::unique_ptr<NvmlDevice> nvml;
  if (auto n = NvmlDevice::Open(ctx->pci_bus_id()); n.ok()) {
    nvml = std::move(*n);
  } else {
    std::fprintf(stderr, "hase-probe: no NVML (%s): load columns stay empty\n",
                 n.status().ToString().c_str());
  }
  const std::string driver = nvml ? nvml->driver_version() : "cuda " + ctx->driver_version();
  std::fprintf(stderr, "hase-probe: %s (driver %s, GPM %s)\n", gpu.c_str(), driver.c_str(),
               nvml && nvml->has_gpm() ? "yes" : "no");

  std::vector<std::unique_ptr<ModelRunner>> runners;
  ModelRunner::Options ro;
  ro.tf32 = o.tf32;
  ro.max_kernels = o.max_kernels;
  for (const auto& l : lists) {
    HASE_ASSIGN_OR_RETURN(auto r, ModelRunner::Create(l, *ctx, ro));
    int skipped = 0;
    for (int i = 0; i < r->size(); ++i) {
      if (!r->launchable(i)) {
        ++skipped;
        std::fprintf(stderr, "hase-probe: %s kernel %d (%s) not timed: %s\n", l.model.c_str(),
                     r->kernel(i).index, r->kernel(i).type.c_str(), r->skip_reason(i).c_str());
      }
    }
    std::fprintf(stderr, "hase-probe: %s: %d kernels, %d launchable, %.1f MiB on the device\n",
                 l.model.c_str(), r->size(), r->size() - skipped, r->device_bytes() / 1048576.0);
    runners.push_back(std::move(r));
  }

  const std::vector<std::string> comments = {
      kTrainingSchemaComment,
      fmt::format("# written by hase-probe kernels on {} (driver {}), warmup {}, reps {}, tf32 {}",
                  gpu, driver, o.warmup, o.reps, o.tf32 ? "on" : "off")};
  HASE_ASSIGN_OR_RETURN(auto rows, CsvWriter::Create(o.rows_out, TrainingHeader(), comments));
  std::unique_ptr<CsvWriter> model_csv, load_csv;
  if (!o.model_out.empty()) {
    HASE_ASSIGN_OR_RETURN(model_csv, CsvWriter::Create(o.model_out, ModelHeader()));
  }
  if (!o.load_out.empty()) {
    HASE_ASSIGN_OR_RETURN(load_csv, CsvWriter::Create(o.load_out, LoadHeader()));
  }

  LoadSampler sampler(
      [&nvml]() -> Result<NvmlReading> {
        if (!nvml) return Status::NotFound("no NVML");
        return nvml->Read();
      },
      o.sample_ms);
  cudaStream_t s = ctx->stream();

  for (const StressLevel& level : o.schedule) {
    const std::string name = level.Name();
    std::unique_ptr<ChildProcess> stressor;
    if (!level.idle()) {
      HASE_ASSIGN_OR_RETURN(stressor, ChildProcess::Start({self_exe, "stress", name, "--device",
                                                           std::to_string(o.device)},
                                                          "ready", 60000));
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.settle_ms));
    }
    for (size_t m = 0; m < runners.size(); ++m) {
      const ModelRunner& r = *runners[m];
      const KernelList& list = lists[m];
      sampler.Start();
      std::vector<Summary> summaries(r.size());
      double sum_ms = 0;
      int timed = 0;
      for (int i = 0; i < r.size(); ++i) {
        if (!r.launchable(i)) continue;
        HASE_ASSIGN_OR_RETURN(std::vector<double> ms,
                              TimeOnStream(s, o.warmup, o.reps, [&] { return r.Launch(i); }));
        HASE_ASSIGN_OR_RETURN(summaries[i], Summarize(ms));
        sum_ms += summaries[i].median;
        ++timed;
      }
      const int model_reps = std::max(5, o.reps / 2);
      HASE_ASSIGN_OR_RETURN(std::vector<double> stream_ms,
                            TimeOnStream(s, 2, model_reps, [&] { return r.LaunchAll(); }));
      HASE_ASSIGN_OR_RETURN(double stream_median, Median(stream_ms));
      const double graph_median = GraphMedianMs(*ctx, r, model_reps);
      std::vector<NvmlReading> readings = sampler.Stop();
      const NvmlReading load = AverageReadings(readings);

      for (int i = 0; i < r.size(); ++i) {
        if (!r.launchable(i)) continue;
        TimedKernel t;
        t.model = list.model;
        t.batch = list.batch;
        t.gpu = gpu;
        t.load_level = name;
        t.kernel = &r.kernel(i);
        t.plan = &r.plan(i);
        t.latency_ms = summaries[i];
        t.load = load;
        HASE_RETURN_IF_ERROR(rows->WriteRow(TrainingRow(t)));
      }
      if (model_csv) {
        std::vector<std::string> row = {
            gpu, list.model, FormatNumber(list.batch), name, FormatNumber(int64_t{r.size()}),
            FormatNumber(int64_t{timed}), FormatNumber(sum_ms), FormatNumber(stream_median),
            FormatNumber(graph_median), FormatNumber(stream_median / sum_ms),
            FormatNumber(graph_median / sum_ms)};
        AppendDcgm(load, &row);
        HASE_RETURN_IF_ERROR(model_csv->WriteRow(row));
      }
      if (load_csv) {
        for (const auto& rd : readings) {
          std::vector<std::string> row = {gpu, name, list.model, FormatNumber(rd.t_s)};
          AppendDcgm(rd, &row);
          HASE_RETURN_IF_ERROR(load_csv->WriteRow(row));
        }
      }
      const LoadSnapshot snap = ToLoadSnapshot(load);
      std::printf("%-28s %-22s kernels %3d  sum %8.3f ms  stream %8.3f ms  graph %8.3f ms  "
                  "sm_active %s  dram_active %s\n",
                  list.model.c_str(), name.c_str(), timed, sum_ms, stream_median, graph_median,
                  snap.sm_active ? fmt::format("{:.2f}", *snap.sm_active).c_str() : "-",
                  snap.dram_active ? fmt::format("{:.2f}", *snap.dram_active).c_str() : "-");
      std::fflush(stdout);
    }
    if (stressor) {
      const bool alive = stressor->Running();
      stressor->Stop();
      if (!alive) {
        return Status::Internal("the stressor for '" + name + "' exited during timing",
                                "hase-probe kernels", "run `hase-probe stress " + name +
                                                          "` by hand to see its error");
      }
    }
    HASE_RETURN_IF_ERROR(rows->Flush());
  }
  return Status::OK();
}

}  // namespace hase::probe::gpu
