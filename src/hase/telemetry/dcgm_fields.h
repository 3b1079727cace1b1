// DcgmFields: the DCGM metric names hase reads into a LoadSnapshot, and DCGM's "blank" values.
//
// Metric names and units are those dcgm-exporter publishes (NVIDIA/dcgm-exporter
// etc/default-counters.csv, commit d5e5f51): DCGM_FI_PROF_* are ratios 0–1, DCGM_FI_DEV_GPU_UTIL
// is a percentage, FB_USED/FB_FREE are MiB, SM_CLOCK is MHz. SM_ACTIVE and SM_OCCUPANCY are
// commented out in the default list; LoadSnapshot::EffectiveSmActive() documents the fallbacks.
//
// Blank values (DCGM's dcgm_structs.h): a field DCGM could not read is reported as a sentinel,
// DCGM_INT32_BLANK = 0x7ffffff0 (2147483632) up to +15, DCGM_INT64_BLANK = 0x7ffffffffffffff0
// (9223372036854775792, e.g. ...794 = NOT_SUPPORTED) and up, DCGM_FP64_BLANK = 2^47
// (140737488355328.0) and up. dcgm-exporter prints them verbatim; hase treats them as missing,
// and so 4294967295 (UINT32_MAX: an unsigned -1, seen as FB_USED on a GPU that could not be read).
#pragma once

#include <string_view>

#include "hase/telemetry/load_snapshot.h"

namespace hase::telemetry {

inline constexpr std::string_view kDcgmSmActive = "DCGM_FI_PROF_SM_ACTIVE";
inline constexpr std::string_view kDcgmSmOccupancy = "DCGM_FI_PROF_SM_OCCUPANCY";
inline constexpr std::string_view kDcgmDramActive = "DCGM_FI_PROF_DRAM_ACTIVE";
inline constexpr std::string_view kDcgmPipeTensorActive = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE";
inline constexpr std::string_view kDcgmGrEngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
inline constexpr std::string_view kDcgmGpuUtil = "DCGM_FI_DEV_GPU_UTIL";
inline constexpr std::string_view kDcgmFbUsed = "DCGM_FI_DEV_FB_USED";
inline constexpr std::string_view kDcgmFbFree = "DCGM_FI_DEV_FB_FREE";
inline constexpr std::string_view kDcgmSmClock = "DCGM_FI_DEV_SM_CLOCK";

// The nine metric names above, in LoadSnapshot field order.
inline constexpr std::string_view kDcgmLoadFields[] = {
    kDcgmSmActive, kDcgmSmOccupancy, kDcgmDramActive, kDcgmPipeTensorActive, kDcgmGrEngineActive,
    kDcgmGpuUtil,  kDcgmFbUsed,      kDcgmFbFree,     kDcgmSmClock};

inline constexpr double kDcgmInt32Blank = 2147483632.0;        // 0x7ffffff0
inline constexpr double kDcgmInt32Max = 2147483647.0;          // 0x7fffffff
inline constexpr double kDcgmFp64Blank = 140737488355328.0;    // 2^47; INT64 blanks are above
inline constexpr double kUint32Max = 4294967295.0;              // an unsigned -1

// True for DCGM's blank/not-found/not-supported/not-permissioned sentinels, UINT32_MAX and NaN.
bool IsDcgmBlank(double value);

// Index of `name` in kDcgmLoadFields, or -1.
int DcgmFieldIndex(std::string_view name);

// Stores `value` of metric `name` in the matching LoadSnapshot field (GPU_UTIL divided by 100).
// Returns false, leaving `snap` unchanged, when `name` is not one of kDcgmLoadFields, when the
// value is blank (IsDcgmBlank) or when it is impossible for the field (a ratio outside
// [-0.01, 1.01], a percentage outside [0, 100.5], a negative size or clock, a size or clock of
// kDcgmInt32Blank or more — an average that mixed a blank in): such a field stays
// std::nullopt, i.e. "not reported". Ratios slightly outside 0–1 are clamped.
bool SetDcgmField(LoadSnapshot& snap, std::string_view name, double value);

}  // namespace hase::telemetry
