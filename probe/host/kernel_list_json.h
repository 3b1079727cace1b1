// Reads the output of `hase kernels --format json` (docs/kernels-json.md) into a KernelList.
//
// The probe is a separate program that consumes hase's JSON rather than linking the ONNX
// pipeline, so a user can run `hase kernels` anywhere and copy the JSON to the GPU machine.
// Schema "hase.kernels", schema_version 1 (written by KernelListToJson in
// src/hase/kernels/kernel_list_format.h). Unknown keys are ignored (derived ones such as totals,
// dram_bytes, bytes_by_dtype are recomputed from the fields); dtype may be the ONNX spelling
// ("float") or the ONNX number; family must be a KernelFamilyName(); attributes that are not
// integer lists (none today) are skipped.
#pragma once

#include <string>
#include <string_view>

#include "hase/base/status.h"
#include "hase/kernels/kernel.h"

namespace hase::probe {

// Parses one document. `where` names the source in errors (a file path).
// Errors: Parse (not JSON, with byte offset; another schema; a newer schema_version),
// InvalidArgument (a required key missing or of the
// wrong type, an unknown family or dtype; `where` names the kernel index and key).
Result<KernelList> ParseKernelListJson(std::string_view text, const std::string& where);

// Reads `path` and parses it. Errors: IO (cannot read), then as ParseKernelListJson.
Result<KernelList> LoadKernelListJson(const std::string& path);

}  // namespace hase::probe
