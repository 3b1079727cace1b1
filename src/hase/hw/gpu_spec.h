// GpuSpec: the datasheet description of one NVIDIA GPU *type* (A100-SXM4-40GB, T4, …), not of
// one physical GPU in a cluster. Entries come from data/gpus.yaml (docs/gpu-catalog.md), each
// with its `source` (datasheet / whitepaper). Values are peak figures as NVIDIA publishes them;
// what kernels really reach is in MicrobenchmarkProfile (measured, or derived from these).
#pragma once

#include <string>
#include <vector>

#include "hase/hw/mig_profile.h"

namespace hase {

struct GpuSpec {
  std::string id;                    // canonical catalog name: "A100-SXM4-40GB", "T4"
  std::string name;                  // CUDA/NVML/DCGM modelName: "NVIDIA A100-SXM4-40GB"
  std::vector<std::string> aliases;  // other spellings that resolve here ("a100", "Tesla T4")
  std::string architecture;          // "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", …
  std::string chip;                  // "GA100"
  std::string compute_capability;    // "8.0"
  int sms = 0;                       // streaming multiprocessors
  double boost_clock_mhz = 0;        // MHz, datasheet boost clock (the clock the peaks assume)
  double base_clock_mhz = 0;         // MHz, datasheet base clock: the clock NVIDIA guarantees
                                     // under any load within the power limit (GPU Boost); 0 =
                                     // not in the catalog. Optional in data/gpus.yaml.
  double fp32_sustained_clock_mhz = 0;  // MHz, clock the board sustains under dense FP32
                                        // CUDA-core math (SGEMM) at its power limit, where a
                                        // source gives it (data/gpus.yaml `source` says which);
                                        // 0 = not known: SustainedClockFraction's rule applies.
  double fp32_tflops = 0;            // peak FP32, TFLOP/s (FMA = 2 FLOP), dense
  double fp16_tflops = 0;            // peak FP16 on CUDA cores, TFLOP/s; 0 = no native FP16
  double tensor_fp16_tflops = 0;     // peak FP16 tensor-core TFLOP/s, dense, FP32 accumulate;
                                     // 0 = no tensor cores
  double memory_gib = 0;             // device memory, GiB
  std::string memory_type;           // "HBM2", "GDDR6X", …
  double memory_bandwidth_gbps = 0;  // DRAM bandwidth, GB/s (1e9 B/s)
  double l2_mib = 0;                 // L2 cache, MiB
  int pcie_gen = 0;                  // host link generation (3, 4, 5)
  int pcie_lanes = 0;                // host link width (8, 16)
  std::string interconnect;          // free text: "NVLink 3 600 GB/s; PCIe 4.0 x16"
  double tdp_w = 0;                  // board power, W
  std::string source;                // where the numbers come from
  MigGeometry mig;                   // MIG profiles (data/gpus.yaml `mig:`); empty: no MIG
  // Set on the spec of one MIG instance (DeriveMigSpec, mig_profile.h), "" on whole GPUs:
  std::string mig_parent;            // parent type id, "A100-SXM4-40GB"
  std::string mig_profile;           // GPU instance profile, "1g.5gb"

  bool is_mig_instance() const { return !mig_profile.empty(); }

  bool has_tensor_cores() const { return tensor_fp16_tflops > 0; }
  // Peak TF32 tensor-core TFLOP/s, dense: tensor_fp16_tflops / 2 on compute capability >= 8.0
  // (Ampere and later), else 0 (no TF32). The halving holds for every Ampere/Ada/Hopper/Blackwell
  // datasheet in data/gpus.yaml (A100 156 vs 312, A10 62.5 vs 125, RTX 3090 35.6 vs 71,
  // L4 60 vs 121, H100 SXM5 494.7 vs 989.4; NVIDIA A100 / Ada / H100 whitepapers).
  double tensor_tf32_tflops() const;
  // Major compute capability ("8.6" → 8); 0 when unknown.
  int compute_capability_major() const;
  // Theoretical one-direction PCIe bandwidth, GB/s: per-lane rate after line coding
  // (gen3 0.985, gen4 1.969, gen5 3.938 GB/s per lane; PCI-SIG base specs) × lanes.
  double pcie_peak_gbps() const;
};

}  // namespace hase
