// StressLevel: one steady background load the stressor process (`hase-probe stress`) holds.
//
// Three independent pressures, each on its own CUDA stream of the stressor process:
//  - SM occupancy: `sm` × (number of SMs) persistent blocks spin on the clock, one block per SM
//    (each block asks for more than half an SM's shared memory, so no two share an SM), each
//    with `occupancy` × (max resident threads per SM) threads;
//  - DRAM pressure: streaming copy kernels (2 × 256 MiB buffers, larger than any L2) busy for a
//    `dram` fraction of every period;
//  - tensor-pipe pressure: FP16 tensor-core GEMMs (cuBLAS) busy for a `tensor` fraction of
//    every period.
// Without MPS, kernels of two processes time-slice on the GPU instead of running side by side;
// with MPS (nvidia-cuda-mps-control -d) they share SMs. Which one applied is recorded by the
// measured DCGM fields, not assumed.
//
// Text form (flags, CSV `load` column): "idle", or comma-separated key=value pairs with keys
// sm, occ, dram, tensor (fractions 0–1) and period_ms (> 0), e.g. "sm=0.5,occ=0.25,dram=0.3".
// A schedule is levels separated by ';': "idle;sm=0.5;dram=0.6;tensor=0.6".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"

namespace hase::probe {

struct StressLevel {
  double sm = 0;            // fraction of SMs holding one spinning persistent block, 0–1
  double occupancy = 0.5;   // fraction of an SM's max resident threads per block, (0, 1]
  double dram = 0;          // fraction of each period streaming kernels run, 0–1
  double tensor = 0;        // fraction of each period tensor-core GEMMs run, 0–1
  double period_ms = 20;    // duty-cycle period, ms

  bool idle() const { return sm == 0 && dram == 0 && tensor == 0; }
  // Canonical text: "idle", or the non-default keys in the order sm, occ, dram, tensor,
  // period_ms ("sm=0.5,dram=0.3"); occ appears only when sm > 0. Parses back to an equal level.
  std::string Name() const;
  bool operator==(const StressLevel&) const = default;
};

// Parses one level. Errors: InvalidArgument naming the bad key or value (unknown key, value
// outside its range, not a number, empty text).
Result<StressLevel> ParseStressLevel(std::string_view text);

// Parses a ';'-separated schedule of levels (at least one). Errors as ParseStressLevel, with
// the level's position in `where`.
Result<std::vector<StressLevel>> ParseStressSchedule(std::string_view text);

// Launch shape of the persistent SM-occupancy kernel.
struct PersistentGrid {
  int blocks = 0;             // one per occupied SM; 0 when sm == 0
  int threads_per_block = 0;  // a multiple of 32 (a warp)
  double achieved_sm = 0;         // blocks / num_sms
  double achieved_occupancy = 0;  // threads_per_block / max_threads_per_sm (a block holds at
                                  // most max_threads_per_block, so this can fall short)
};

// Rounds sm × num_sms to whole blocks and occupancy × max_threads_per_sm to whole warps
// (at least one warp, at most max_threads_per_block).
// Errors: InvalidArgument when a device limit is not positive.
Result<PersistentGrid> PersistentGridFor(const StressLevel& level, int num_sms,
                                         int max_threads_per_sm, int max_threads_per_block);

// Busy time per period of a duty-cycled pressure, ms: duty × period_ms.
inline double BusyMs(double duty, double period_ms) { return duty * period_ms; }

}  // namespace hase::probe
