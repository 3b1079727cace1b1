#include "nvml_device.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace hase::probe {
namespace {

// ---- The subset of nvml.h the probe uses (layouts from nvml.h, CUDA 12.x). ----
using nvmlReturn_t = int;  // NVML_SUCCESS == 0
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlGpmSample_t = struct nvmlGpmSample_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of time a kernel ran over the last sample period
  unsigned int memory;  // percent of time device memory was read or written
};
struct nvmlMemory_t {
  unsigned long long total, free, used;  // bytes
};
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
struct nvmlGpmSupport_t {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION = 1
  unsigned int isSupportedDevice;
};
struct nvmlGpmMetric_t {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
constexpr int kGpmMetricMax = 98;  // NVML_GPM_METRIC_MAX in CUDA 12.0; we pass numMetrics = 5
struct nvmlGpmMetricsGet_t {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION = 1
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kGpmMetricMax];
};
// nvmlGpmMetricId_t values.
constexpr unsigned kGpmGraphicsUtil = 1, kGpmSmUtil = 2, kGpmSmOccupancy = 3,
                   kGpmAnyTensorUtil = 5, kGpmDramBwUtil = 10;

template <typename F>
F Bind(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

struct NvmlDevice::Impl {
  void* lib = nullptr;
  nvmlDevice_t dev = nullptr;
  bool gpm = false;
  nvmlGpmSample_t prev = nullptr, cur = nullptr;
  bool have_prev = false;
  std::string name, driver;

  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*gpm_support)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
  nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*gpm_free)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_get)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_metrics)(nvmlGpmMetricsGet_t*) = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;

  std::string Err(nvmlReturn_t r) const {
    return error_string ? fmt::format("{} ({})", error_string(r), r) : fmt::format("code {}", r);
  }
  ~Impl() {
    if (gpm_free) {
      if (prev) gpm_free(prev);
      if (cur) gpm_free(cur);
    }
    if (dev && shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

NvmlDevice::NvmlDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NvmlDevice::~NvmlDevice() = default;
bool NvmlDevice::has_gpm() const { return impl_->gpm; }
std::string NvmlDevice::name() const { return impl_->name; }
std::string NvmlDevice::driver_version() const { return impl_->driver; }

Result<std::unique_ptr<NvmlDevice>> NvmlDevice::Open(const std::string& pci_bus_id) {
  auto impl = std::make_unique<Impl>();
  impl->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!impl->lib) {
    return Status::NotFound("libnvidia-ml.so.1 not found", "NVML",
                            "install the NVIDIA driver; load columns stay empty without it");
  }
  void* l = impl->lib;
  impl->init = Bind<decltype(impl->init)>(l, "nvmlInit_v2");
  impl->shutdown = Bind<decltype(impl->shutdown)>(l, "nvmlShutdown");
  impl->by_pci = Bind<decltype(impl->by_pci)>(l, "nvmlDeviceGetHandleByPciBusId_v2");
  impl->get_name = Bind<decltype(impl->get_name)>(l, "nvmlDeviceGetName");
  impl->driver_version = Bind<decltype(impl->driver_version)>(l, "nvmlSystemGetDriverVersion");
  impl->util = Bind<decltype(impl->util)>(l, "nvmlDeviceGetUtilizationRates");
  impl->mem = Bind<decltype(impl->mem)>(l, "nvmlDeviceGetMemoryInfo");
  impl->clock = Bind<decltype(impl->clock)>(l, "nvmlDeviceGetClockInfo");
  impl->error_string = Bind<decltype(impl->error_string)>(l, "nvmlErrorString");
  impl->gpm_support = Bind<decltype(impl->gpm_support)>(l, "nvmlGpmQueryDeviceSupport");
  impl->gpm_alloc = Bind<decltype(impl->gpm_alloc)>(l, "nvmlGpmSampleAlloc");
  impl->gpm_free = Bind<decltype(impl->gpm_free)>(l, "nvmlGpmSampleFree");
  impl->gpm_get = Bind<decltype(impl->gpm_get)>(l, "nvmlGpmSampleGet");
  impl->gpm_metrics = Bind<decltype(impl->gpm_metrics)>(l, "nvmlGpmMetricsGet");
  if (!impl->init || !impl->shutdown || !impl->by_pci || !impl->util || !impl->mem ||
      !impl->clock) {
    return Status::Internal("libnvidia-ml.so.1 lacks a required entry point", "NVML",
                            "update the NVIDIA driver");
  }
  if (nvmlReturn_t r = impl->init(); r != 0) {
    impl->shutdown = nullptr;
    return Status::Internal("nvmlInit failed: " + impl->Err(r), "NVML");
  }
  if (nvmlReturn_t r = impl->by_pci(pci_bus_id.c_str(), &impl->dev); r != 0) {
    impl->shutdown();
    impl->shutdown = nullptr;
    return Status::NotFound("no NVML device with PCI bus id " + pci_bus_id + ": " + impl->Err(r),
                            "NVML");
  }
  char buf[256] = {0};
  if (impl->get_name && impl->get_name(impl->dev, buf, sizeof buf) == 0) impl->name = buf;
  buf[0] = 0;
  if (impl->driver_version && impl->driver_version(buf, sizeof buf) == 0) impl->driver = buf;
  if (impl->gpm_support && impl->gpm_alloc && impl->gpm_free && impl->gpm_get &&
      impl->gpm_metrics) {
    nvmlGpmSupport_t support{1, 0};
    if (impl->gpm_support(impl->dev, &support) == 0 && support.isSupportedDevice &&
        impl->gpm_alloc(&impl->prev) == 0 && impl->gpm_alloc(&impl->cur) == 0) {
      impl->gpm = true;
    }
  }
  return std::unique_ptr<NvmlDevice>(new NvmlDevice(std::move(impl)));
}

Result<NvmlReading> NvmlDevice::Read() {
  Impl& m = *impl_;
  NvmlReading r;
  nvmlUtilization_t u{};
  if (m.util(m.dev, &u) == 0) {
    r.gpu_util_pct = u.gpu;
    r.mem_copy_util_pct = u.memory;
  }
  nvmlMemory_t mem{};
  if (m.mem(m.dev, &mem) == 0) {
    r.fb_used_bytes = static_cast<double>(mem.used);
    r.fb_free_bytes = static_cast<double>(mem.free);
  }
  unsigned clock = 0;
  if (m.clock(m.dev, kNvmlClockSm, &clock) == 0) r.sm_clock_mhz = clock;
  if (m.gpm) {
    if (nvmlReturn_t e = m.gpm_get(m.dev, m.cur); e != 0) {
      return Status::Internal("nvmlGpmSampleGet failed: " + m.Err(e), "NVML GPM");
    }
    if (m.have_prev) {
      auto q = std::make_unique<nvmlGpmMetricsGet_t>();
      q->version = 1;
      const unsigned ids[] = {kGpmGraphicsUtil, kGpmSmUtil, kGpmSmOccupancy, kGpmAnyTensorUtil,
                              kGpmDramBwUtil};
      q->numMetrics = 5;
      q->sample1 = m.prev;
      q->sample2 = m.cur;
      for (int i = 0; i < 5; ++i) q->metrics[i].metricId = ids[i];
      if (m.gpm_metrics(q.get()) == 0) {
        std::optional<double>* out[] = {&r.gpm_graphics_util_pct, &r.gpm_sm_util_pct,
                                        &r.gpm_sm_occupancy_pct, &r.gpm_any_tensor_util_pct,
                                        &r.gpm_dram_bw_util_pct};
        for (int i = 0; i < 5; ++i) {
          if (q->metrics[i].nvmlReturn == 0) *out[i] = q->metrics[i].value;
        }
      }
    }
    std::swap(m.prev, m.cur);
    m.have_prev = true;
  }
  return r;
}

}  // namespace hase::probe
