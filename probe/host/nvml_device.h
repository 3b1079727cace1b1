// NvmlDevice: reads one GPU's load through NVML, loaded at run time with dlopen.
//
// NVML (libnvidia-ml.so.1) ships with the driver, not the CUDA toolkit, so build machines lack
// it (and its header): the probe declares the handful of NVML entry points it uses itself
// (signatures and struct layouts from nvml.h of CUDA 12.x / driver R525+) and binds them at run
// time. GPM metrics (Hopper and later) are read when nvmlGpmQueryDeviceSupport says so.
// Thread-safety: one thread at a time (the LoadSampler's thread).
#pragma once

#include <memory>
#include <string>

#include "dcgm_fields.h"
#include "hase/base/status.h"

namespace hase::probe {

class NvmlDevice {
 public:
  // Opens NVML and the GPU with PCI bus id `pci_bus_id` ("0000:3B:00.0", as
  // cudaDeviceGetPCIBusId gives it; NVML and CUDA may number devices differently).
  // Errors: NotFound when libnvidia-ml.so.1 is absent (no driver) or no GPU has that bus id;
  // Internal when an NVML call fails.
  static Result<std::unique_ptr<NvmlDevice>> Open(const std::string& pci_bus_id);
  ~NvmlDevice();
  NvmlDevice(const NvmlDevice&) = delete;
  NvmlDevice& operator=(const NvmlDevice&) = delete;

  // Reads utilisation, memory and SM clock now and, with GPM, the GPM metrics over the interval
  // since the previous Read() (the first Read() has no GPM values). t_s is left 0.
  Result<NvmlReading> Read();

  bool has_gpm() const;
  std::string name() const;            // "NVIDIA H100 80GB HBM3"
  std::string driver_version() const;  // "550.54.15"

  struct Impl;

 private:
  explicit NvmlDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hase::probe
