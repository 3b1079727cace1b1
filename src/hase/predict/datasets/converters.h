// Converters from the public kernel datasets in ../shared/data to canonical KernelSamples
// (docs/training-data.md). One file per source; each documents what it drops or flags and why
// (../shared/data/PITFALLS.md). Converters only read their input folder: GPU names are kept as
// the dataset spells them (or mapped to a catalog-resolvable spelling) and resolved later.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hase/base/status.h"
#include "hase/predict/kernel_sample.h"

namespace hase::predict {

// What a conversion did, for the user and for docs: rows read, kept, dropped (by reason) and
// flagged (by flag). Dropped rows are not in the output; flagged rows are, with the flag set.
struct ConvertReport {
  std::string source;
  size_t read = 0;
  size_t kept = 0;
  std::map<std::string, size_t> dropped;
  std::map<std::string, size_t> flagged;

  std::string ToString() const;  // one human-readable line
};

// ../shared/data/kernels/neusight: conv, linear, bmm, 12 elementwise ops, softmax, ln.
// Flags rows slower than 1 s as "suspect_throttle" (PITFALLS 6). Launch-config columns are
// read for nothing (PITFALLS 2). Errors: NotFound (no op folders), Parse (malformed file).
Result<std::vector<KernelSample>> ConvertNeuSight(const std::string& dir, ConvertReport* report);

// ../shared/data/kernels/deepbench: deepbench_train_conv.csv (forward time only) and
// deepbench_train_gemm.csv; fp16_pseudo / fp16_mixed become dtype float16.
Result<std::vector<KernelSample>> ConvertDeepBench(const std::string& dir, ConvertReport* report);

// ../shared/data/kernels/tophub: conv2d (direct and winograd), depthwise conv, batch_matmul.
// Drops transposed convolutions (unsupported shape semantics) and the Jetson targets.
Result<std::vector<KernelSample>> ConvertTopHub(const std::string& dir, ConvertReport* report);

// ../shared/data/interference/bencyq_hase: ORT kernels under DCGM background load. Rows have
// includes_transfer = 1 with h2d/d2h bytes of the graph inputs/outputs (README caveat).
Result<std::vector<KernelSample>> ConvertBencyq(const std::string& dir, ConvertReport* report);

// The source whose layout `dir` has ("neusight", "deepbench", "tophub", "bencyq"), or NotFound.
Result<std::string> DetectSource(const std::string& dir);

// Dispatches on `source` ("auto" = DetectSource). Errors: InvalidArgument (unknown source).
Result<std::vector<KernelSample>> ConvertSource(const std::string& source, const std::string& dir,
                                                ConvertReport* report);

}  // namespace hase::predict
